import path from 'node:path';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from '../limits/envelope';
import { load } from '../support/api';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
const A = 'northwind-audio';
const B = 'harbor-lane-media';

/** A query no other request sends (Cube would answer it from its cache or run it once for both). */
const uncached = (cube: 'Sluggish' | 'Slow', n: number) => ({
  measures: [`${cube}.count`],
  filters: [{ member: `${cube}.number`, operator: 'notEquals', values: [String(1000 + n)] }],
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 10));
}

describe('the statement queue takes keys in turn', () => {
  const BURST = 8;
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ RATE_LIMIT_CONCURRENT: String(BURST) }, { schemaPath: SLOW_SCHEMA, accounts: [A, B] });
    await service.cube.models.ready();
  });
  afterAll(() => service.close());

  it('answers one query of key B before most of a burst key A sent first', async () => {
    const finished: string[] = [];
    const ask = (account: string, n: number, label: string) =>
      load(service, uncached('Sluggish', n), { key: service.accountKeys[account] }).then((res) => {
        expect(res.status).toBe(200);
        finished.push(label);
      });
    const burst = Array.from({ length: BURST }, (_, i) => ask(A, i, `A${i}`));
    // All of A's statements but the running one wait in the queue before B asks.
    await until(() => service.warehouse.queueDepth() >= BURST - 1);
    const b = ask(B, 100, 'B');
    await Promise.all([...burst, b]);
    // Round-robin: B waits for the running statement and at most one more of A's.
    expect(finished.indexOf('B')).toBeLessThanOrEqual(2);
  });
});

describe('a statement that cannot start within the query timeout', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ QUERY_TIMEOUT_SECONDS: '3' }, { schemaPath: SLOW_SCHEMA, accounts: [A, B] });
    await service.cube.models.ready();
  });
  afterAll(() => service.close());

  it('answers 504 query_timeout and leaves the queue without running', async () => {
    const slow = (account: string, n: number) => load(service, uncached('Slow', n), { key: service.accountKeys[account] }).then((res) => res);
    // Each statement would take 4 s; ClickHouse stops each after 3 s of running.
    // A1 runs, A2 waits for it, B waits for both: its 3 s pass while A2 runs.
    const a1 = slow(A, 1);
    await until(() => service.warehouse.queueDepth() === 0);
    const a2 = slow(A, 2);
    await until(() => service.warehouse.queueDepth() === 1);
    const b = slow(B, 3);
    await until(() => service.warehouse.queueDepth() === 2);
    expectEnvelope(await b, 'query_timeout');
    // A2 has started; B's statement left the queue instead of running late.
    expect(service.warehouse.queueDepth()).toBe(0);
    expectEnvelope(await a1, 'query_timeout');
    expectEnvelope(await a2, 'query_timeout');
  });
});
