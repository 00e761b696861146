import type { Request, RequestHandler } from 'express';
import type { Config } from '../../config';
import type { CubeService, Query } from '../../cube/service';
import { principalOf } from '../auth';
import { ApiError } from '../errors';
import { checkQuerySize } from '../query-size';

/**
 * /v1/data/load/ — runs a query (spec 4.2). POST carries `{ query, queryType? }`
 * as JSON; GET carries the same as URL parameters (`query` as JSON text), as
 * Cube's JavaScript client sends it. Without `queryType` the answer is the
 * documented single result; with `queryType: "multi"` it is Cube's multi
 * shape (`queryType`, `results`, `pivotQuery`), which compareDateRange and
 * arrays of queries need. Cube validates the query itself, after our size
 * limits; the query reads the key's account only.
 */
export function loadRoute(cube: CubeService, limits: Config['query']): RequestHandler {
  return async (req, res) => {
    const { query, queryType } = req.method === 'GET' ? fromUrl(req) : fromBody(req.body);
    const principal = principalOf(res);
    // The key's id is its lane in the warehouse's fair statement queue.
    const context = { requestId: res.locals.requestId, accountId: principal.accountId, lane: principal.keyId };
    if (queryType === 'multi') {
      if (!isQuery(query) && !(Array.isArray(query) && query.length > 0 && query.every(isQuery))) {
        throw new ApiError('invalid_request', 'The "query" field must be a JSON object or a non-empty array of objects.');
      }
      checkQuerySize(Array.isArray(query) ? query : [query], limits);
      res.json(await cube.loadMulti(query, context));
      return;
    }
    if (!isQuery(query)) {
      throw new ApiError('invalid_request', 'The "query" field must be a JSON object.');
    }
    checkQuerySize([query], limits);
    res.json(await cube.load(query, context));
  };
}

interface LoadRequest {
  query: unknown;
  queryType: 'multi' | undefined;
}

function fromBody(body: unknown): LoadRequest {
  if (!isQuery(body) || !('query' in body)) {
    throw new ApiError('invalid_request', 'The request body must be a JSON object with a "query" field.');
  }
  return { query: body.query, queryType: checkQueryType(body.queryType) };
}

function fromUrl(req: Request): LoadRequest {
  const { query, queryType } = req.query;
  if (typeof query !== 'string') {
    throw new ApiError('invalid_request', 'GET needs one "query" URL parameter holding the query as JSON.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(query);
  } catch {
    throw new ApiError('invalid_json', 'The "query" URL parameter is not valid JSON.');
  }
  return { query: parsed, queryType: checkQueryType(queryType) };
}

function checkQueryType(value: unknown): 'multi' | undefined {
  if (value === undefined || value === 'regular') return undefined;
  if (value === 'multi') return 'multi';
  throw new ApiError('invalid_request', 'The "queryType" field, when given, must be "multi".');
}

function isQuery(value: unknown): value is Query {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
