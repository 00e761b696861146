import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import type { Config } from '../config';
import type { Metrics } from '../metrics/registry';
import { hasPrincipal, principalOf } from './auth';
import { ServiceError } from '../errors';
import type { LimitStores } from './limit-stores';

export interface RateLimitDeps {
  limits: Config['rateLimit'];
  /** In memory, or in Redis with REDIS_URL so that instances share the counts. */
  stores: LimitStores;
  metrics: Metrics;
}

/**
 * At most `requests` per window per API key, with RateLimit and
 * RateLimit-Policy headers (IETF draft 8) on every answer and 429 with
 * Retry-After beyond. Counted in the same stores, and headed exactly, as
 * express-rate-limit's limiter with `standardHeaders: 'draft-8'` (the
 * unauthenticated limit below still is one): every request with a valid key
 * passes here, and that limiter's per-request work (its validations, debug
 * calls, promises, and a sha256 of the key for the policy's partition key)
 * was 6.5 % of the service's CPU under a repeated cached query. The
 * partition key is made once per key id instead.
 */
export function requestRateLimit({ limits, stores, metrics }: RateLimitDeps): RequestHandler {
  const store = stores.counter('analytics:rate:key:');
  // The stores read only windowMs of express-rate-limit's options.
  void store.init?.({ windowMs: limits.windowMs } as Options);
  const windowSeconds = Math.ceil(limits.windowMs / 1000);
  const name = policyName(limits.requests, limits.windowMs);
  const policies = new Map<string, string>();
  const policyOf = (keyId: string): string => {
    let policy = policies.get(keyId);
    if (policy === undefined) {
      // Key ids come from the key store, a bounded set; the bound is for a store that grows while the process runs.
      if (policies.size >= POLICIES_KEPT) policies.clear();
      policy = `"${name}"; q=${limits.requests}; w=${windowSeconds}; pk=:${partitionKey(keyId)}:`;
      policies.set(keyId, policy);
    }
    return policy;
  };
  return async (_req, res, next) => {
    const keyId = principalOf(res).keyId;
    const { totalHits, resetTime } = await store.increment(keyId);
    const resetSeconds = resetTime === undefined ? windowSeconds : Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
    res.append('RateLimit', `"${name}"; r=${Math.max(limits.requests - totalHits, 0)}; t=${resetSeconds}`);
    res.append('RateLimit-Policy', policyOf(keyId));
    if (totalHits > limits.requests) {
      res.setHeader('Retry-After', String(resetSeconds));
      metrics.rateLimitRefusals.inc({ reason: 'rate' });
      throw new ServiceError('rate_limited', `Too many requests for this API key: at most ${limits.requests} per ${limits.windowMs / 1000} s.`);
    }
    next();
  };
}

/** Partition keys kept before the map starts again. */
const POLICIES_KEPT = 10_000;

/** express-rate-limit's draft-8 partition key: the first 12 hex digits of the key's sha256, in base64. */
function partitionKey(key: string): string {
  return Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
}

/** express-rate-limit's default draft-8 policy name: "<limit>-in-<window>". */
function policyName(limit: number, windowMs: number): string {
  const seconds = windowMs / 1e3;
  const minutes = seconds / 60;
  const hours = minutes / 60;
  const days = hours / 24;
  if (seconds < 60) return `${limit}-in-${seconds}sec`;
  if (minutes < 60) return `${limit}-in-${minutes}min`;
  if (hours < 24) return `${limit}-in-${hours}hr${hours > 1 ? 's' : ''}`;
  return `${limit}-in-${days}day${days > 1 ? 's' : ''}`;
}

/**
 * At most `unauthenticated` requests per window from one client address
 * without a valid key; beyond that, 429 instead of 401. Requests with a valid
 * key are neither counted nor refused here, so a flood of bad keys from an
 * address shared with real clients (a NAT, a proxy) does not lock them out.
 * Keyed by express-rate-limit's default, the address (IPv6 by /56 subnet).
 * A request with a valid key passes on at once, without the limiter's own
 * work (its skip check comes after its debug calls and promises).
 */
export function unauthenticatedRateLimit({ limits, stores, metrics }: RateLimitDeps): RequestHandler {
  const limiter = rateLimit({
    windowMs: limits.windowMs,
    limit: limits.unauthenticated,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'unauthenticated',
    store: stores.counter('analytics:rate:unauthenticated:'),
    handler: (_req, _res, next) => {
      metrics.rateLimitRefusals.inc({ reason: 'unauthenticated' });
      next(
        new ServiceError(
          'rate_limited',
          `Too many requests without a valid API key from this address: at most ${limits.unauthenticated} per ${limits.windowMs / 1000} s.`,
        ),
      );
    },
  });
  return (req, res, next) => (hasPrincipal(res) ? next() : limiter(req, res, next));
}

/**
 * Wraps a route so that one API key runs at most `concurrent` of them at a
 * time; beyond that, 429 with Retry-After. The slot is held until the handler
 * settles, not until the client hangs up, so abandoned queries still count.
 * `holdLimitMs` bounds how long a slot in Redis outlives an instance that
 * died holding it.
 */
export function concurrencyLimit({ limits, stores, metrics }: RateLimitDeps, holdLimitMs: number): (handler: RequestHandler) => RequestHandler {
  const max = limits.concurrent;
  const slots = stores.concurrency('analytics:concurrent:key:', holdLimitMs);
  return (handler) => async (req, res, next) => {
    const release = await slots.acquire(principalOf(res).keyId, max);
    if (release === undefined) {
      metrics.rateLimitRefusals.inc({ reason: 'concurrency' });
      // Queries take seconds at most; a second is a fair first wait.
      res.setHeader('Retry-After', '1');
      throw new ServiceError('rate_limited', `Too many concurrent requests for this API key: at most ${max} at a time.`);
    }
    try {
      await handler(req, res, next);
    } finally {
      await release();
    }
  };
}
