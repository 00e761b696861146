import type { RequestHandler } from 'express';
import type { Config } from '../../config';
import type { CubeService } from '../../cube/service';
import { requestContextOf } from '../auth';
import { oneQueryOf, queryOrListOf, readQueryRequest } from '../../query/request';
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
      const queries = queryOrListOf(query);
      checkQuerySize(Array.isArray(queries) ? queries : [queries], limits);
      await sendLoadAnswer(res, await cube.loadMulti(queries, context));
      return;
    }
    const one = oneQueryOf(query);
    checkQuerySize([one], limits);
    await sendLoadAnswer(res, await cube.load(one, context));
  };
}
