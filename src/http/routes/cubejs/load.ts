import type { RequestHandler } from 'express';
import { answerLoad, type QueryRouteDeps } from '../load';

/**
 * GET|POST /cubejs-api/v1/load — Cube's load answer; with `queryType=multi`
 * Cube's multi shape, which compareDateRange and arrays of queries need. The
 * service waits for the query itself, so clients never see "Continue wait".
 */
export function cubeLoadRoute(deps: QueryRouteDeps): RequestHandler {
  return (req, res) => answerLoad(req, res, deps, 'cubejs-load', ({ query, multi }, context) => deps.cube.cubeLoad(query, multi, context));
}
