import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Config } from '../config';
import type { Metrics } from '../metrics/registry';
import { hasPrincipal, principalOf } from './auth';
import { ApiError } from './errors';
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
 * Retry-After beyond.
 */
export function requestRateLimit({ limits, stores, metrics }: RateLimitDeps): RequestHandler {
  return rateLimit({
    windowMs: limits.windowMs,
    limit: limits.requests,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: stores.counter('analytics:rate:key:'),
    keyGenerator: (_req, res) => principalOf(res).keyId,
    handler: (_req, _res, next) => {
      metrics.rateLimitRefusals.inc({ reason: 'rate' });
      next(new ApiError('rate_limited', `Too many requests for this API key: at most ${limits.requests} per ${limits.windowMs / 1000} s.`));
    },
  });
}

/**
 * At most `unauthenticated` requests per window from one client address
 * without a valid key; beyond that, 429 instead of 401. Requests with a valid
 * key are neither counted nor refused here, so a flood of bad keys from an
 * address shared with real clients (a NAT, a proxy) does not lock them out.
 * Keyed by express-rate-limit's default, the address (IPv6 by /56 subnet).
 */
export function unauthenticatedRateLimit({ limits, stores, metrics }: RateLimitDeps): RequestHandler {
  return rateLimit({
    windowMs: limits.windowMs,
    limit: limits.unauthenticated,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'unauthenticated',
    store: stores.counter('analytics:rate:unauthenticated:'),
    skip: (_req, res) => hasPrincipal(res),
    handler: (_req, _res, next) => {
      metrics.rateLimitRefusals.inc({ reason: 'unauthenticated' });
      next(
        new ApiError(
          'rate_limited',
          `Too many requests without a valid API key from this address: at most ${limits.unauthenticated} per ${limits.windowMs / 1000} s.`,
        ),
      );
    },
  });
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
      throw new ApiError('rate_limited', `Too many concurrent requests for this API key: at most ${max} at a time.`);
    }
    try {
      await handler(req, res, next);
    } finally {
      await release();
    }
  };
}
