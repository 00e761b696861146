import type { RequestHandler } from 'express';
import type { Config } from '../../../config';
import type { CubeService } from '../../../cube/service';
import { requestContextOf } from '../../auth';
import { cubeQueryOf } from './request';

/** GET|POST /cubejs-api/v1/dry-run — Cube's normalized queries, query type and pivot query; nothing runs. */
export function cubeDryRunRoute(cube: CubeService, limits: Config['query']): RequestHandler {
  return async (req, res) => {
    res.json(await cube.dryRun(cubeQueryOf(req, limits).query, requestContextOf(res)));
  };
}
