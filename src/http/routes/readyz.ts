import type { RequestHandler } from 'express';
import type { Readiness } from '../../readiness';
import { ServiceError } from '../../errors';

/**
 * GET /readyz — 200 when this instance should get traffic; otherwise 503
 * `not_ready` with the reasons in the envelope's sentence (warehouse not
 * answering, models not compiled, shutting down).
 */
export function readyzRoute(readiness: Readiness): RequestHandler {
  return async (_req, res) => {
    const reasons = await readiness.check();
    if (reasons.length > 0) throw new ServiceError('not_ready', `Not ready: ${reasons.join('; ')}.`);
    res.json({ status: 'ready' });
  };
}
