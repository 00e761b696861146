import { getEventListeners } from 'node:events';
import { ServiceError } from '../../../src/errors';
import { Tickets } from '../../../src/cube/tickets';
import { StatementQueue, statementTicket } from '../../../src/warehouse/statement-queue';

describe('Tickets', () => {
  afterEach(() => jest.useRealTimers());

  it("gives a statement the ticket of its request's load, and none once the load ended", () => {
    const tickets = new Tickets();
    const issued = tickets.issue('req-1', 'key_a', 60_000);
    expect(tickets.ticketOf('req-1')).toBe(issued.ticket);
    expect(issued.ticket.lane).toBe('key_a');
    expect(tickets.ticketOf('req-2')).toBeUndefined();
    expect(tickets.ticketOf(undefined)).toBeUndefined();
    issued.end();
    expect(tickets.ticketOf('req-1')).toBeUndefined();
  });

  it('lets the statements of a request of 20 queries wait on one ticket without a leak warning (each listens while it waits)', async () => {
    const tickets = new Tickets();
    const issued = tickets.issue('req-1', 'key_a', 60_000);
    const queue = new StatementQueue();
    let release!: () => void;
    const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = statementTicket.run(issued.ticket, () => Array.from({ length: 20 }, () => queue.run(() => Promise.resolve())));
    // Node warns of a leak when a target's listeners pass its maximum (10 unless set), unless the maximum is 0
    // (none). Read by its symbol: node:events' getMaxListeners refuses a signal made in jest's context.
    expect(getEventListeners(issued.signal, 'abort').length).toBeGreaterThan(20);
    const maximum = Object.getOwnPropertySymbols(issued.signal).find((symbol) => symbol.description === 'events.maxEventTargetListeners');
    expect(maximum && (issued.signal as unknown as Record<symbol, unknown>)[maximum]).toBe(0);
    release();
    await Promise.all([first, ...waiting]);
    issued.end();
  });

  it('aborts at the query timeout with query_timeout', async () => {
    jest.useFakeTimers();
    const tickets = new Tickets();
    const issued = tickets.issue('req-1', 'key_a', 5_000);
    jest.advanceTimersByTime(4_999);
    expect(issued.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    await expect(issued.aborted).rejects.toMatchObject({ code: 'query_timeout', message: 'The query did not finish within 5 s.' });
    issued.end();
  });

  it('at shutdown refuses loads none of whose statements started, keeps running ones, and refuses new ones', async () => {
    const tickets = new Tickets();
    const waiting = tickets.issue('waiting', 'key_a', 60_000);
    const running = tickets.issue('running', 'key_b', 60_000);
    running.ticket.onStart?.();
    expect(running.started).toBe(true);
    tickets.refuseNotStarted();
    await expect(waiting.aborted).rejects.toMatchObject({ code: 'shutting_down' });
    expect(running.signal.aborted).toBe(false);
    expect(() => tickets.issue('late', 'key_a', 60_000)).toThrow(ServiceError);
    waiting.end();
    running.end();
  });

  it('keeps two loads that send the same request id apart: ending one leaves the other its ticket', () => {
    const tickets = new Tickets();
    const first = tickets.issue('same-id', 'key_a', 60_000);
    const second = tickets.issue('same-id', 'key_b', 60_000);
    first.end();
    expect(tickets.ticketOf('same-id')).toBe(second.ticket);
    expect(second.signal.aborted).toBe(false);
    second.end();
    expect(tickets.ticketOf('same-id')).toBeUndefined();
  });

  it('aborts what is left of a load when it ends, so a statement still waiting has nobody to answer and leaves the queue', () => {
    const tickets = new Tickets();
    const issued = tickets.issue('req-1', 'key_a', 60_000);
    issued.end();
    expect(issued.signal.aborted).toBe(true);
    expect(issued.signal.reason).toMatchObject({ code: 'internal' });
  });
});
