import crypto from 'node:crypto';
import { createAuthenticator, type Authenticator } from '../../../src/keys/authenticator';
import { openKeyRing, type KeyRing } from '../../../src/keys/ring';
import { createKey, readKeyFile } from '../../../src/keys/store';
import { cli, recordingLogger, tempKeyFile } from './support';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const OPERATOR_KEYS = ['operator-key-one-0123456789', 'operator-key-two-0123456789'];

const rings: KeyRing[] = [];
afterEach(() => {
  for (const ring of rings.splice(0)) ring.close();
});

/** An authenticator over what the file holds now (a fresh ring, so no waiting for a reload). */
async function authenticatorOver(file: string, operatorKeys: string[] = OPERATOR_KEYS): Promise<Authenticator> {
  const ring = await openKeyRing({ file, reloadIntervalMs: 60_000, logger: recordingLogger() });
  rings.push(ring);
  return createAuthenticator({ operatorKeys, ring });
}

async function createThroughCli(file: string, args: string[]): Promise<{ key: string; id: string }> {
  const { code, stdout } = await cli(file, ['create', ...args], NOW);
  expect(code).toBe(0);
  return { key: /pak_[0-9A-Za-z]+/.exec(stdout)?.[0] ?? '', id: /key_[0-9a-f]{16}/.exec(stdout)?.[0] ?? '' };
}

describe('createAuthenticator', () => {
  it('gives operator keys their 1-based position, every account and every scope', async () => {
    const auth = await authenticatorOver(tempKeyFile());
    expect(auth.authenticate(OPERATOR_KEYS[0], NOW)).toEqual({ keyId: 'operator-1', accountId: null, scopes: ['data:meta', 'data:load'] });
    expect(auth.authenticate(OPERATOR_KEYS[1], NOW)).toEqual({ keyId: 'operator-2', accountId: null, scopes: ['data:meta', 'data:load'] });
  });

  it('gives a stored key its id, its account and its scopes, and never the key', async () => {
    const file = tempKeyFile();
    const { key, id } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard', '--scope', 'data:meta']);
    const principal = (await authenticatorOver(file)).authenticate(key, NOW);
    expect(principal).toEqual({ keyId: id, accountId: 'northwind-audio', scopes: ['data:meta'] });
    expect(JSON.stringify(principal)).not.toContain(key.slice(4));
  });

  it('stops accepting a key once it is revoked', async () => {
    const file = tempKeyFile();
    const { key, id } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard']);
    expect((await authenticatorOver(file)).authenticate(key, NOW)?.keyId).toBe(id);

    expect((await cli(file, ['revoke', id], NOW)).code).toBe(0);
    expect((await authenticatorOver(file)).authenticate(key, NOW)).toBeUndefined();
  });

  it('accepts a key until its expiry and not from then on', async () => {
    const file = tempKeyFile();
    const { key } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'trial', '--expires-in-days', '1']);
    const auth = await authenticatorOver(file);
    const expiry = NOW.getTime() + 24 * 60 * 60 * 1000;
    expect(auth.authenticate(key, new Date(expiry - 1))?.accountId).toBe('northwind-audio');
    expect(auth.authenticate(key, new Date(expiry))).toBeUndefined();
    expect(auth.authenticate(key, new Date(expiry + 1))).toBeUndefined();
  });

  it('uses the current time when no time is given', async () => {
    const file = tempKeyFile();
    const { key } = await createKey(file, { account: 'northwind-audio', name: 'n', expiresAt: new Date(Date.now() + 60_000) });
    const expired = await createKey(file, { account: 'northwind-audio', name: 'n', expiresAt: new Date(Date.now() + 1) }, new Date(Date.now() - 60_000));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const auth = await authenticatorOver(file);
    expect(auth.authenticate(key)?.accountId).toBe('northwind-audio');
    expect(auth.authenticate(expired.key)).toBeUndefined();
  });

  it('answers undefined alike for everything that is not exactly a live key', async () => {
    const file = tempKeyFile();
    const { key } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard']);
    const [record] = await readKeyFile(file);
    const auth = await authenticatorOver(file);
    const last = key[key.length - 1];
    const flipCase = [...key].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');

    expect(auth.authenticate(key, NOW)).toBeDefined();
    for (const presented of [
      '',
      `${key.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`,
      `ghp_${key.slice(4)}`,
      `PAK_${key.slice(4)}`,
      key.slice(4),
      `${key}0`,
      `${key} `,
      key.slice(0, -1),
      key.toUpperCase(),
      flipCase,
      record.prefix,
      record.hash,
      OPERATOR_KEYS[0].toUpperCase(),
      `${OPERATOR_KEYS[0]}x`,
    ]) {
      expect({ presented, principal: auth.authenticate(presented, NOW) }).toEqual({ presented, principal: undefined });
    }
  });

  it('compares the presented key with every operator and stored key, even after a match', async () => {
    const file = tempKeyFile();
    const created = [];
    for (const name of ['a', 'b', 'c']) created.push(await createThroughCli(file, ['--account', 'northwind-audio', '--name', name]));
    const auth = await authenticatorOver(file);
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      for (const presented of [OPERATOR_KEYS[0], created[0].key, 'unknown']) {
        compare.mockClear();
        auth.authenticate(presented, NOW);
        expect({ presented, comparisons: compare.mock.calls.length }).toEqual({ presented, comparisons: 5 });
      }
    } finally {
      compare.mockRestore();
    }
  });

  it('accepts nothing without operator keys or stored keys', async () => {
    const auth = await authenticatorOver(tempKeyFile(), []);
    for (const presented of ['', OPERATOR_KEYS[0], 'pak_']) expect(auth.authenticate(presented, NOW)).toBeUndefined();
  });
});
