import type { RequestHandler, Response } from 'express';
import { cacheStatus, newRequestTiming, type RequestTiming } from '../metrics/request-timing';

/**
 * Adds a Server-Timing header to every answer of the route, errors
 * included, so that clients and browsers see where the time went without
 * the logs: `warehouse` (statements of this request, including chDB's
 * statement queue), `cube` (Cube's API gateway, warehouse included), `total`
 * (from the request's arrival to the answer's headers), and `cache` (hit,
 * miss or partial) when Cube looked up a result. The header is written at the
 * last moment, when the status line goes out.
 */
export function serverTiming(): RequestHandler {
  return (_req, res, next) => {
    const started = typeof res.locals.startedAt === 'number' ? res.locals.startedAt : performance.now();
    const timing = newRequestTiming();
    // The request's scope carries it on (src/http/scope.ts).
    res.locals.timing = timing;
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      if (!this.headersSent) this.setHeader('Server-Timing', format(timing, performance.now() - started));
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}

function format(timing: RequestTiming, totalMs: number): string {
  const entries = [`warehouse;dur=${round(timing.warehouseMs)}`, `cube;dur=${round(timing.cubeMs)}`, `total;dur=${round(totalMs)}`];
  const cache = cacheStatus(timing);
  if (cache !== undefined) entries.push(`cache;desc="${cache}"`);
  return entries.join(', ');
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
