import { setMaxListeners } from 'node:events';
import { ServiceError } from '../errors';
import type { RequestTiming } from '../metrics/request-timing';
import type { Ticket } from '../warehouse/statement-queue';
import type { RequestScope } from './types';

/** What Cube's callbacks find of a load by its request id: its statements' ticket and its request's timing. */
export interface LoadInFlight {
  ticket: Ticket;
  timing?: RequestTiming;
}

export interface OpenLoad {
  /** Aborts when the load must give up: its request's deadline, shutdown before any of its statements started, or its end. */
  signal: AbortSignal;
  /** Rejects with the signal's reason. */
  aborted: Promise<never>;
  /** The load settled: whatever of it still waits (a failed load's second statement) leaves the queue. */
  end(): void;
}

/**
 * The loads Cube is running, by the server's request id. Cube's query queue
 * hands our driver each statement, and its log events each cache lookup,
 * with the request id of the load they serve and nothing else: this is the
 * one place that id finds the load's scope. Everything else gets the scope
 * passed.
 *
 * A load's statements wait in the statement queue on its ticket, which
 * takes them out before they start when the request's deadline passes (504
 * query_timeout: a statement never starts after its request gave up) or
 * when shutdown refuses loads that have not started (503 shutting_down).
 */
export class InFlight {
  private readonly loads = new Map<string, LoadInFlight & { started: boolean; own: AbortController }>();
  private refusing = false;

  /** Registers a load of `scope` until `end()`. */
  open(scope: RequestScope): OpenLoad {
    if (this.refusing) throw shuttingDown();
    const own = new AbortController();
    const signal = scope.deadline ? AbortSignal.any([scope.deadline, own.signal]) : own.signal;
    // Each statement of the load listens while it waits in the queue: a request of QUERY_MAX_QUERIES queries has
    // that many waiting at once, and Node's default of 10 logged a leak warning for them. The signal ends with the load.
    setMaxListeners(0, signal);
    const load = { ticket: { lane: scope.lane ?? 'unnamed', signal, onStart: () => (load.started = true) }, timing: scope.timing, started: false, own };
    const { requestId } = scope;
    this.loads.set(requestId, load);
    const aborted = signal.aborted
      ? Promise.reject(signal.reason)
      : new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    // Raced against the load; when the load wins, nobody else listens.
    aborted.catch(() => undefined);
    return {
      signal,
      aborted,
      end: () => {
        if (this.loads.get(requestId) === load) this.loads.delete(requestId);
        if (!own.signal.aborted) own.abort(new ServiceError('internal', 'The load ended before this statement started.'));
      },
    };
  }

  of(requestId: unknown): LoadInFlight | undefined {
    return typeof requestId === 'string' ? this.loads.get(requestId) : undefined;
  }

  /**
   * From now on loads are refused, and those none of whose statements has
   * started yet (waiting in our queue or in Cube's) are answered 503 now.
   * Loads with a statement running keep going.
   */
  refuseNotStarted(): void {
    this.refusing = true;
    for (const load of this.loads.values()) if (!load.started) load.own.abort(shuttingDown());
  }
}

function shuttingDown(): ServiceError {
  return new ServiceError('shutting_down', 'The service is shutting down; retry on another instance or in a few seconds.');
}
