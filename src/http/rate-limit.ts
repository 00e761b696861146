import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Config } from '../config';
import { hasPrincipal, principalOf } from './auth';
import { ApiError } from './errors';

/**
 * At most `requests` per window per API key, with RateLimit and
 * RateLimit-Policy headers (IETF draft 8) on every answer and 429 with
 * Retry-After beyond. Counters live in this process: behind a load balancer
 * each instance counts its own share.
 */
export function requestRateLimit(limits: Config['rateLimit']): RequestHandler {
  return rateLimit({
    windowMs: limits.windowMs,
    limit: limits.requests,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => principalOf(res).keyId,
    handler: (_req, _res, next) => {
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
export function unauthenticatedRateLimit(limits: Config['rateLimit']): RequestHandler {
  return rateLimit({
    windowMs: limits.windowMs,
    limit: limits.unauthenticated,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'unauthenticated',
    skip: (_req, res) => hasPrincipal(res),
    handler: (_req, _res, next) => {
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
 * Wraps a route so that one API key runs at most `max` of them at a time;
 * beyond that, 429 with Retry-After. The slot is held until the handler
 * settles, not until the client hangs up, so abandoned queries still count.
 */
export function concurrencyLimit(max: number): (handler: RequestHandler) => RequestHandler {
  const inFlight = new Map<string, number>();
  return (handler) => async (req, res, next) => {
    const { keyId } = principalOf(res);
    const current = inFlight.get(keyId) ?? 0;
    if (current >= max) {
      // Queries take seconds at most; a second is a fair first wait.
      res.setHeader('Retry-After', '1');
      throw new ApiError('rate_limited', `Too many concurrent requests for this API key: at most ${max} at a time.`);
    }
    inFlight.set(keyId, current + 1);
    try {
      await handler(req, res, next);
    } finally {
      const remaining = (inFlight.get(keyId) ?? 1) - 1;
      if (remaining === 0) inFlight.delete(keyId);
      else inFlight.set(keyId, remaining);
    }
  };
}
