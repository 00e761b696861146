/**
 * The client's x-request-id is only echoed and logged: the server keys each
 * request's state (its ticket, with its deadline and queue lane, its timings,
 * its cache lookups) by an id it makes itself. Two requests sending the same
 * x-request-id at once, from two keys (two lanes), each answer as they would
 * alone, and each one's Server-Timing counts its own time only (a shared
 * entry added one's Cube and warehouse time to the other's).
 */
import path from 'node:path';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';
import { load, type Response } from '../support/api';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
const SHARED_ID = 'same-id-from-two-clients';
let service: TestService;

beforeAll(async () => {
  service = await startService({ QUERY_TIMEOUT_SECONDS: '20', RESULT_CACHE_MB: '0' }, { continueWaitSeconds: 1, schemaPath: SLOW_SCHEMA, accounts: ['acme'] });
});
afterAll(() => service.close());

/** Server-Timing's durations by name. */
function timingOf(res: Response): Record<string, number> {
  const header = String(res.headers['server-timing'] ?? '');
  return Object.fromEntries([...header.matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
}

it('two requests with one x-request-id keep their own tickets and timings, and both answer', async () => {
  const sharedId = (key: string, query: Record<string, unknown>) => load(service, query, { key }).set('x-request-id', SHARED_ID);
  // About 4 s of sleeping rows.
  const slow = sharedId(API_KEY, { measures: ['Slow.count'], dimensions: ['Slow.number'] }).then((res) => res);
  await new Promise((resolve) => setTimeout(resolve, 300));
  // About half a second, started while the slow one is running, from another key (another lane).
  const quick = await sharedId(service.accountKeys.acme, { measures: ['Sluggish.count'] });
  const slowAnswer = await slow;

  expect(quick.status).toBe(200);
  expect(quick.body.data).toEqual([{ 'Sluggish.count': '2' }]);
  expect(slowAnswer.status).toBe(200);
  expect(slowAnswer.body.data).toHaveLength(8);
  for (const res of [quick, slowAnswer]) {
    expect(res.headers['x-request-id']).toBe(SHARED_ID);
    const { cube, warehouse, total } = timingOf(res);
    // Each counts its own work: never more Cube or warehouse time than the request lasted.
    expect(cube).toBeLessThanOrEqual(total + 1);
    expect(warehouse).toBeLessThanOrEqual(total + 1);
  }
}, 30_000);
