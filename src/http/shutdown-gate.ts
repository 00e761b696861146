import type { RequestHandler } from 'express';
import { ServiceError } from '../errors';

export interface InFlightRequest {
  requestId: string;
  method: string;
  path: string;
  ms: number;
}

/**
 * The requests in flight, for shutdown to wait for and to name the ones it
 * cuts off; once `close()`d, a request arriving on a connection still open
 * (keep-alive) is answered 503 `shutting_down` instead of started.
 */
export interface ShutdownGate {
  middleware: RequestHandler;
  close(): void;
  inFlight(): InFlightRequest[];
  /** Resolves when no request is in flight. */
  idle(): Promise<void>;
}

export function createShutdownGate(): ShutdownGate {
  const open = new Map<string, { requestId: string; method: string; path: string; since: number }>();
  let closed = false;
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (open.size > 0) return;
    for (const wake of waiters) wake();
    waiters = [];
  };

  return {
    middleware: (req, res, next) => {
      if (closed) throw new ServiceError('shutting_down', 'The service is shutting down; retry on another instance or in a few seconds.');
      // Keyed by the server's id: two requests may send the same x-request-id.
      const requestKey = String(res.locals.requestKey ?? res.locals.requestId);
      open.set(requestKey, { requestId: String(res.locals.requestId), method: req.method, path: req.originalUrl.split('?')[0], since: Date.now() });
      // 'close' comes after the answer is sent and also when the client hangs up first.
      res.on('close', () => {
        open.delete(requestKey);
        settle();
      });
      next();
    },
    close: () => {
      closed = true;
    },
    inFlight: () => [...open.values()].map(({ requestId, method, path, since }) => ({ requestId, method, path, ms: Date.now() - since })),
    idle: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        settle();
      }),
  };
}
