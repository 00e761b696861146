import type { Request } from 'express';
import type { Config } from '../../../config';
import type { Query } from '../../../cube/service';
import { queryOrListOf, readQueryRequest } from '../../../query/request';
import { checkQuerySize } from '../../../query/size';

/**
 * The query of a request to Cube's own API, read as Cube's routes read it (a
 * `query` URL parameter holding JSON on GET, a `query` field on POST) and held
 * to the same size limits as on /v1.
 */
export function cubeQueryOf(req: Request, limits: Config['query']): { query: Query | Query[]; multi: boolean } {
  const { query: sent, queryType } = readQueryRequest(req);
  const query = queryOrListOf(sent);
  checkQuerySize(Array.isArray(query) ? query : [query], limits);
  return { query, multi: queryType === 'multi' };
}
