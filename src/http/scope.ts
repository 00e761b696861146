import type { Response } from 'express';
import type { RequestScope } from '../cube/types';
import { ServiceError } from '../errors';
import type { RequestTiming } from '../metrics/request-timing';
import { principalOf } from './auth';

/**
 * The request's scope, which the route hands the Cube adapter and the
 * exporter and which goes with the request's work from there: the id the
 * server made for it (never the client's x-request-id, which two requests
 * may share), the account its queries may read, the key's id (its lane in
 * the warehouse's fair statement queue), its Server-Timing figures, and,
 * for a route that runs statements, its deadline: QUERY_TIMEOUT_SECONDS
 * from now, `what` naming the work in the query_timeout answer.
 */
export function requestScopeOf(res: Response, deadline?: { ms: number; what: 'query' | 'export' }): RequestScope {
  const principal = principalOf(res);
  return {
    requestId: requestKeyOf(res),
    accountId: principal.accountId,
    lane: principal.keyId,
    timing: res.locals.timing as RequestTiming | undefined,
    deadline: deadline === undefined ? undefined : deadlineOf(res, deadline.ms, deadline.what),
  };
}

/** The server's own id of the request (app.ts), which its per-request state is keyed by. */
function requestKeyOf(res: Response): string {
  const key: unknown = res.locals.requestKey;
  // Set by the first middleware of the app; a route without it is our bug.
  if (typeof key !== 'string') throw new Error('no request key: route mounted outside the app');
  return key;
}

/** Aborts `ms` from now with query_timeout; its timer ends with the request ('close' follows every answer and every abandoned request). */
function deadlineOf(res: Response, ms: number, what: string): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ServiceError('query_timeout', `The ${what} did not finish within ${ms / 1000} s.`)), ms);
  res.once('close', () => clearTimeout(timer));
  return controller.signal;
}
