import type { RequestHandler } from 'express';
import { requestScopeOf } from '../../scope';
import type { QueryRouteDeps } from '../load';

/**
 * GET|POST /cubejs-api/v1/sql — the SQL and parameters Cube would run for the
 * query, generated under the key's account, so they carry its condition.
 */
export function cubeSqlRoute({ admission, cube }: QueryRouteDeps): RequestHandler {
  return async (req, res) => {
    const { query } = await admission.admit('cubejs-sql', req);
    res.json(await cube.sql(query, requestScopeOf(res)));
  };
}
