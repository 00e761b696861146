import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who a statement runs for. `lane` is what fairness is counted by (an API
 * key); `signal`, when it aborts, takes the statement out of the queue if it
 * has not started, with the signal's reason as its error (a deadline passed,
 * the service is shutting down). `onStart` hears when it leaves the queue.
 * A running statement is never aborted from here: ClickHouse bounds it.
 * `urgent` statements (the readiness probe) go before every lane; they still
 * wait for the running statement.
 */
export interface Ticket {
  lane: string;
  signal?: AbortSignal;
  onStart?(): void;
  urgent?: boolean;
}

/**
 * The ticket of the statements made in this async context. Set around the
 * call that sends a statement (see src/cube/engine/driver.ts), not at the HTTP edge:
 * Cube's query queue sends a statement from whichever request's call happens
 * to reconcile it, so an HTTP-level context does not reliably reach here.
 */
export const statementTicket = new AsyncLocalStorage<Ticket>();

/** Statements with no ticket: start-up, DDL, demo data. */
const DEFAULT_LANE = 'service';

interface Waiting {
  ticket: Ticket;
  start(): void;
}

/** Told how many statements wait, whenever that changes, and how long each waited once it starts. */
export interface QueueObserver {
  depth(waiting: number): void;
  waited(seconds: number): void;
}

/**
 * Runs one statement at a time, taking them round-robin across lanes and
 * FIFO within a lane, so a burst from one lane waits behind itself, not in
 * front of everyone else.
 */
export class StatementQueue {
  private readonly lanes = new Map<string, Waiting[]>();
  private readonly urgent: Waiting[] = [];
  private running = false;

  constructor(private readonly observer?: QueueObserver) {}

  /** Statements waiting to start. */
  get depth(): number {
    let n = this.urgent.length;
    for (const waiting of this.lanes.values()) n += waiting.length;
    return n;
  }

  run<T>(statement: () => Promise<T>): Promise<T> {
    const ticket = statementTicket.getStore() ?? { lane: DEFAULT_LANE };
    if (ticket.signal?.aborted) return Promise.reject(ticket.signal.reason);
    return new Promise<T>((resolve, reject) => {
      const queued = performance.now();
      const onAbort = () => {
        this.remove(entry);
        this.observer?.depth(this.depth);
        reject(ticket.signal?.reason);
      };
      const entry: Waiting = {
        ticket,
        start: () => {
          ticket.signal?.removeEventListener('abort', onAbort);
          this.observer?.depth(this.depth);
          this.observer?.waited((performance.now() - queued) / 1000);
          ticket.onStart?.();
          statement()
            .then(resolve, reject)
            .finally(() => {
              this.running = false;
              this.next();
            });
        },
      };
      ticket.signal?.addEventListener('abort', onAbort, { once: true });
      if (ticket.urgent) this.urgent.push(entry);
      else {
        const lane = this.lanes.get(ticket.lane);
        if (lane) lane.push(entry);
        else this.lanes.set(ticket.lane, [entry]);
      }
      this.observer?.depth(this.depth);
      this.next();
    });
  }

  private next(): void {
    if (this.running) return;
    const entry = this.urgent.shift() ?? this.takeFair();
    if (!entry) return;
    this.running = true;
    entry.start();
  }

  /**
   * The head of the first lane in Map order, whose lane then moves to the
   * back: Map keeps insertion order, so deleting and re-adding rotates it.
   */
  private takeFair(): Waiting | undefined {
    for (const [name, waiting] of this.lanes) {
      const entry = waiting.shift();
      this.lanes.delete(name);
      if (waiting.length > 0) this.lanes.set(name, waiting);
      if (entry) return entry;
    }
    return undefined;
  }

  private remove(entry: Waiting): void {
    const index = this.urgent.indexOf(entry);
    if (index !== -1) {
      this.urgent.splice(index, 1);
      return;
    }
    const lane = this.lanes.get(entry.ticket.lane);
    if (!lane) return;
    const at = lane.indexOf(entry);
    if (at !== -1) lane.splice(at, 1);
    if (lane.length === 0) this.lanes.delete(entry.ticket.lane);
  }
}
