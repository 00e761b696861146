import { setMaxListeners } from 'node:events';
import type { Ticket } from '../warehouse/statement-queue';
import { ServiceError } from '../errors';

/**
 * The statement tickets of the loads in progress, by request id: Cube hands
 * our driver each statement with the request id of the load it serves (see
 * driver.ts), and the ticket says which lane it waits in and when it must
 * give up waiting.
 *
 * A load's ticket aborts, taking its statements out of the queue before they
 * start, when the query timeout passes (504 query_timeout: a statement never
 * starts after its request gave up) or when shutdown refuses loads that have
 * not started (503 shutting_down).
 */
export class Tickets {
  // Several per id: a client may send its own x-request-id twice at once.
  private readonly open = new Map<string, { issued: Issued; controller: AbortController }[]>();
  private refusing = false;

  /** A ticket for one load; `end()` it when the load settles. */
  issue(requestId: string, lane: string, timeoutMs: number): Issued {
    if (this.refusing) throw shuttingDown();
    const controller = new AbortController();
    // Each statement of the load listens while it waits in the queue: a request of QUERY_MAX_QUERIES queries has
    // that many waiting at once, and Node's default of 10 logged a leak warning for them. The signal ends with the load.
    setMaxListeners(0, controller.signal);
    const timer = setTimeout(() => controller.abort(new ServiceError('query_timeout', `The query did not finish within ${timeoutMs / 1000} s.`)), timeoutMs);
    const aborted = new Promise<never>((_resolve, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    // Raced against the load; when the load wins, nobody else listens.
    aborted.catch(() => undefined);
    const issued: Issued = {
      signal: controller.signal,
      ticket: { lane, signal: controller.signal, onStart: () => (issued.started = true) },
      started: false,
      aborted,
      end: () => {
        clearTimeout(timer);
        const others = (this.open.get(requestId) ?? []).filter((entry) => entry.issued !== issued);
        if (others.length > 0) this.open.set(requestId, others);
        else this.open.delete(requestId);
        // Whatever of this load still waits (a failed load's second statement) has nobody to answer.
        if (!controller.signal.aborted) controller.abort(new ServiceError('internal', 'The load ended before this statement started.'));
      },
    };
    this.open.set(requestId, [...(this.open.get(requestId) ?? []), { issued, controller }]);
    return issued;
  }

  ticketOf(requestId: string | undefined): Ticket | undefined {
    return requestId === undefined ? undefined : this.open.get(requestId)?.at(-1)?.issued.ticket;
  }

  /**
   * From now on loads are refused, and those none of whose statements has
   * started yet (waiting in our queue or in Cube's) are answered 503 now.
   * Loads with a statement running keep going.
   */
  refuseNotStarted(): void {
    this.refusing = true;
    for (const entries of this.open.values()) {
      for (const { issued, controller } of entries) if (!issued.started) controller.abort(shuttingDown());
    }
  }
}

export interface Issued {
  ticket: Ticket;
  /** Aborts when the ticket does (deadline, shutdown), with the reason as the load's error. */
  signal: AbortSignal;
  /** True once one of its statements has left the queue. */
  started: boolean;
  /** Rejects with the reason the ticket was aborted. */
  aborted: Promise<never>;
  end(): void;
}

function shuttingDown(): ServiceError {
  return new ServiceError('shutting_down', 'The service is shutting down; retry on another instance or in a few seconds.');
}
