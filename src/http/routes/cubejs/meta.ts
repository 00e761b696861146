import type { RequestHandler } from 'express';
import type { CubeService } from '../../../cube/service';
import { requestScopeOf } from '../../scope';

/** GET /cubejs-api/v1/meta — Cube's own meta, `{ cubes }`, the same for every key. */
export function cubeMetaRoute(cube: CubeService): RequestHandler {
  return async (_req, res) => {
    res.json(await cube.cubeMeta(requestScopeOf(res)));
  };
}
