import type { RequestHandler } from 'express';
import { requestScopeOf } from '../../scope';
import type { QueryRouteDeps } from '../load';

/** GET|POST /cubejs-api/v1/dry-run — Cube's normalized queries, query type and pivot query; nothing runs. */
export function cubeDryRunRoute({ admission, cube }: QueryRouteDeps): RequestHandler {
  return async (req, res) => {
    const { query } = await admission.admit('cubejs-sql', req);
    res.json(await cube.dryRun(query, requestScopeOf(res)));
  };
}
