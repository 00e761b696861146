import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from './ring';
import { keyStatus, SCOPES, type KeyRecord, type Scope } from './store';

export interface Principal {
  keyId: string;
  /** null for operator keys, which read every account. */
  accountId: string | null;
  scopes: readonly Scope[];
}

export interface Authenticator {
  /** The key's principal, or undefined for a missing, unknown, revoked or expired key alike. */
  authenticate(presented: string, now?: Date): Principal | undefined;
}

export interface AuthenticatorOptions {
  /** Plaintext keys from API_KEYS, in their configured order. */
  operatorKeys: readonly string[];
  ring: Pick<KeyRing, 'keys'>;
}

/**
 * Compares SHA-256 digests, which all have the same length, with
 * timingSafeEqual against every candidate without stopping at a match, so the
 * time taken says nothing about which key, or how much of one, matched. Only
 * then is a matched stored key checked for revocation and expiry.
 */
export function createAuthenticator({ operatorKeys, ring }: AuthenticatorOptions): Authenticator {
  const operators = operatorKeys.map((key, index) => ({
    digest: sha256(key),
    principal: { keyId: `operator-${index + 1}`, accountId: null, scopes: SCOPES } satisfies Principal,
  }));
  return {
    authenticate(presented, now = new Date()) {
      const digest = sha256(presented);
      let operator: Principal | undefined;
      let stored: KeyRecord | undefined;
      for (const candidate of operators) {
        if (timingSafeEqual(candidate.digest, digest)) operator = candidate.principal;
      }
      for (const candidate of ring.keys()) {
        if (timingSafeEqual(candidate.digest, digest)) stored = candidate.record;
      }
      if (operator !== undefined) return operator;
      if (stored === undefined || keyStatus(stored, now) !== 'active') return undefined;
      return { keyId: stored.id, accountId: stored.account, scopes: stored.scopes };
    },
  };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
