import type { RequestHandler } from 'express';
import type { Config } from '../../../config';
import type { CubeService } from '../../../cube/service';
import { requestContextOf } from '../../auth';
import { sendLoadAnswer } from '../../truncation-header';
import { cubeQueryOf } from './request';

/**
 * GET|POST /cubejs-api/v1/load — Cube's load answer; with `queryType=multi`
 * Cube's multi shape, which compareDateRange and arrays of queries need. The
 * service waits for the query itself, so clients never see "Continue wait".
 */
export function cubeLoadRoute(cube: CubeService, limits: Config['query']): RequestHandler {
  return async (req, res) => {
    const { query, multi } = cubeQueryOf(req, limits);
    await sendLoadAnswer(res, await cube.cubeLoad(query, multi, requestContextOf(res)));
  };
}
