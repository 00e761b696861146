import type { RequestHandler } from 'express';
import type { CubeService } from '../../cube/service';
import { ApiError } from '../errors';

/** POST /v1/data/load/ — runs one query (spec 4.2). Cube validates the query itself. */
export function loadRoute(cube: CubeService): RequestHandler {
  return async (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || !('query' in body)) {
      throw new ApiError('invalid_request', 'The request body must be a JSON object with a "query" field.');
    }
    if (!isObject(body.query)) {
      throw new ApiError('invalid_request', 'The "query" field must be a JSON object.');
    }
    res.json(await cube.load(body.query, { requestId: res.locals.requestId }));
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
