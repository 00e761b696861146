import type { RequestHandler } from 'express';
import type { Config } from '../../../config';
import type { CubeService } from '../../../cube/service';
import { requestContextOf } from '../../auth';
import { cubeQueryOf } from './request';

/**
 * GET|POST /cubejs-api/v1/sql — the SQL and parameters Cube would run for the
 * query, generated under the key's account, so they carry its condition.
 */
export function cubeSqlRoute(cube: CubeService, limits: Config['query']): RequestHandler {
  return async (req, res) => {
    res.json(await cube.sql(cubeQueryOf(req, limits).query, requestContextOf(res)));
  };
}
