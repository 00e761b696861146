import { StatementQueue, statementTicket, type Ticket } from '../../../src/warehouse/statement-queue';

/** A statement that runs until released, recording when it started. */
function gate(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { statement: () => (started.push(name), done.then(() => name)), release: () => release() };
}

const run = <T>(queue: StatementQueue, ticket: Ticket | undefined, statement: () => Promise<T>) =>
  ticket ? statementTicket.run(ticket, () => queue.run(statement)) : queue.run(statement);

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('StatementQueue', () => {
  it('runs one statement at a time, round-robin across lanes and FIFO within one', async () => {
    const queue = new StatementQueue();
    const started: string[] = [];
    const first = gate(started, 'A0');
    const answers = [run(queue, { lane: 'A' }, first.statement)];
    // A burst from lane A, then one statement from B: B waits behind one of A's, not all of them.
    for (const name of ['A1', 'A2', 'A3']) answers.push(run(queue, { lane: 'A' }, async () => (started.push(name), name)));
    answers.push(run(queue, { lane: 'B' }, async () => (started.push('B'), 'B')));
    await tick();
    expect(started).toEqual(['A0']);
    expect(queue.depth).toBe(4);
    first.release();
    await Promise.all(answers);
    expect(started).toEqual(['A0', 'A1', 'B', 'A2', 'A3']);
    expect(queue.depth).toBe(0);
  });

  it('starts an urgent statement before every lane, after the running one', async () => {
    const queue = new StatementQueue();
    const started: string[] = [];
    const first = gate(started, 'A0');
    const answers = [run(queue, { lane: 'A' }, first.statement), run(queue, { lane: 'A' }, async () => started.push('A1'))];
    answers.push(run(queue, { lane: 'probe', urgent: true }, async () => started.push('probe')));
    await tick();
    expect(started).toEqual(['A0']);
    first.release();
    await Promise.all(answers);
    expect(started).toEqual(['A0', 'probe', 'A1']);
  });

  it('takes a waiting statement out when its ticket aborts, with the reason as its error, and it never starts', async () => {
    const queue = new StatementQueue();
    const started: string[] = [];
    const first = gate(started, 'A0');
    const running = run(queue, { lane: 'A' }, first.statement);
    const controller = new AbortController();
    const waiting = run(queue, { lane: 'B', signal: controller.signal }, async () => started.push('B'));
    await tick();
    controller.abort(new Error('deadline passed'));
    await expect(waiting).rejects.toThrow('deadline passed');
    expect(queue.depth).toBe(0);
    first.release();
    await running;
    expect(started).toEqual(['A0']);
  });

  it('refuses a statement whose ticket has already aborted', async () => {
    const queue = new StatementQueue();
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    await expect(run(queue, { lane: 'A', signal: controller.signal }, async () => 'ran')).rejects.toThrow('shutting down');
  });

  it('goes on after a statement fails, and tells its observer the depth and each wait', async () => {
    const depths: number[] = [];
    const waits: number[] = [];
    const queue = new StatementQueue({ depth: (n) => depths.push(n), waited: (s) => waits.push(s) });
    const failing = run(queue, undefined, async () => {
      throw new Error('statement failed');
    });
    const next = run(queue, undefined, async () => 'next');
    await expect(failing).rejects.toThrow('statement failed');
    await expect(next).resolves.toBe('next');
    expect(waits).toHaveLength(2);
    expect(waits.every((s) => s >= 0)).toBe(true);
    expect(depths.at(-1)).toBe(0);
    expect(Math.max(...depths)).toBe(1);
  });

  it('tells a ticket when its statement leaves the queue', async () => {
    const queue = new StatementQueue();
    const onStart = jest.fn();
    await run(queue, { lane: 'A', onStart }, async () => undefined);
    expect(onStart).toHaveBeenCalledTimes(1);
  });
});
