import { getEventListeners } from 'node:events';
import { InFlight } from '../../../src/cube/in-flight';
import { ServiceError } from '../../../src/errors';
import { newRequestTiming } from '../../../src/metrics/request-timing';
import { StatementQueue, statementTicket } from '../../../src/warehouse/statement-queue';

const scope = (requestId: string, lane: string, deadline?: AbortSignal) => ({ requestId, accountId: null, lane, deadline, timing: newRequestTiming() });

describe('InFlight', () => {
  it("gives a statement the ticket and timing of its request's load, and none once the load ended", () => {
    const inFlight = new InFlight();
    const opened = scope('req-1', 'key_a');
    const load = inFlight.open(opened);
    expect(inFlight.of('req-1')?.ticket.lane).toBe('key_a');
    expect(inFlight.of('req-1')?.ticket.signal).toBe(load.signal);
    expect(inFlight.of('req-1')?.timing).toBe(opened.timing);
    expect(inFlight.of('req-2')).toBeUndefined();
    expect(inFlight.of(undefined)).toBeUndefined();
    load.end();
    expect(inFlight.of('req-1')).toBeUndefined();
  });

  it('lets the statements of a request of 20 queries wait on one ticket without a leak warning (each listens while it waits)', async () => {
    const inFlight = new InFlight();
    const load = inFlight.open(scope('req-1', 'key_a', new AbortController().signal));
    const { ticket } = inFlight.of('req-1')!;
    const queue = new StatementQueue();
    let release!: () => void;
    const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = statementTicket.run(ticket, () => Array.from({ length: 20 }, () => queue.run(() => Promise.resolve())));
    // Node warns of a leak when a target's listeners pass its maximum (10 unless set), unless the maximum is 0
    // (none). Read by its symbol: node:events' getMaxListeners refuses a signal made in jest's context.
    expect(getEventListeners(load.signal, 'abort').length).toBeGreaterThan(20);
    const maximum = Object.getOwnPropertySymbols(load.signal).find((symbol) => symbol.description === 'events.maxEventTargetListeners');
    expect(maximum && (load.signal as unknown as Record<symbol, unknown>)[maximum]).toBe(0);
    release();
    await Promise.all([first, ...waiting]);
    load.end();
  });

  it("aborts when its request's deadline passes, with the deadline's reason", async () => {
    const inFlight = new InFlight();
    const deadline = new AbortController();
    const load = inFlight.open(scope('req-1', 'key_a', deadline.signal));
    expect(load.signal.aborted).toBe(false);
    const late = new ServiceError('query_timeout', 'The query did not finish within 5 s.');
    deadline.abort(late);
    await expect(load.aborted).rejects.toBe(late);
    load.end();
  });

  it('is aborted from the start when its deadline passed before the load began', async () => {
    const inFlight = new InFlight();
    const late = new ServiceError('query_timeout', 'The query did not finish within 5 s.');
    const load = inFlight.open(scope('req-1', 'key_a', AbortSignal.abort(late)));
    await expect(load.aborted).rejects.toBe(late);
    load.end();
  });

  it('at shutdown refuses loads none of whose statements started, keeps running ones, and refuses new ones', async () => {
    const inFlight = new InFlight();
    const waiting = inFlight.open(scope('waiting', 'key_a'));
    const running = inFlight.open(scope('running', 'key_b'));
    inFlight.of('running')!.ticket.onStart?.();
    inFlight.refuseNotStarted();
    await expect(waiting.aborted).rejects.toMatchObject({ code: 'shutting_down' });
    expect(running.signal.aborted).toBe(false);
    expect(() => inFlight.open(scope('late', 'key_a'))).toThrow(ServiceError);
    waiting.end();
    running.end();
  });

  it('aborts what is left of a load when it ends, so a statement still waiting has nobody to answer and leaves the queue', () => {
    const inFlight = new InFlight();
    const load = inFlight.open(scope('req-1', 'key_a'));
    load.end();
    expect(load.signal.aborted).toBe(true);
    expect(load.signal.reason).toMatchObject({ code: 'internal' });
  });
});
