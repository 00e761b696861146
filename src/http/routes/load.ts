import type { RequestHandler } from 'express';
import type { Config } from '../../config';
import type { CubeService } from '../../cube/service';
import { requestContextOf } from '../auth';
import { ApiError } from '../errors';
import { isQuery, isQueryOrList, readQueryRequest } from '../../query/request';
import { checkQuerySize } from '../../query/size';
import { sendLoadAnswer } from '../truncation-header';

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
    const { query, queryType } = readQueryRequest(req);
    const context = requestContextOf(res);
    if (queryType === 'multi') {
      if (!isQueryOrList(query)) {
        throw new ApiError('invalid_request', 'The "query" field must be a JSON object or a non-empty array of objects.');
      }
      checkQuerySize(Array.isArray(query) ? query : [query], limits);
      sendLoadAnswer(res, await cube.loadMulti(query, context));
      return;
    }
    if (!isQuery(query)) {
      throw new ApiError('invalid_request', 'The "query" field must be a JSON object.');
    }
    checkQuerySize([query], limits);
    sendLoadAnswer(res, await cube.load(query, context));
  };
}
