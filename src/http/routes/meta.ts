import type { RequestHandler } from 'express';
import type { CubeService } from '../../cube/service';
import { requestScopeOf } from '../scope';

/**
 * GET /v1/data/meta/ — the cubes with their measures, dimensions and
 * segments (spec 4.1): the same for every key, whatever its account.
 */
export function metaRoute(cube: CubeService): RequestHandler {
  return async (_req, res) => {
    const schemas = await cube.meta(requestScopeOf(res));
    res.json({ schemas });
  };
}
