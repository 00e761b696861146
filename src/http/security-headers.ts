import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * The headers helmet's middleware sets, found once when the app is made and
 * then set on every answer as they are: its defaults are the same for every
 * request (no directive reads the request), and its thirteen middlewares,
 * one after another, cost every request the same work again (2.6 % of the
 * service's CPU under a repeated cached query). `middleware` must be such a
 * middleware: one that only sets and removes headers, synchronously.
 */
export function securityHeaders(middleware: ReturnType<typeof helmet> = helmet()): RequestHandler {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => set.push([name, String(value)]),
    removeHeader: (name: string) => removed.push(name),
  };
  let done = false;
  middleware({} as Request, recorder as unknown as Response, (err?: unknown) => {
    if (err !== undefined) throw err;
    done = true;
  });
  // Our bug: a middleware that needs the request, or answers later, cannot be recorded.
  if (!done) throw new Error('securityHeaders: the middleware did not finish at once');
  return (_req, res, next) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
