/**
 * The result cache in the real service (real Cube, real chDB): a repeated
 * query is answered with its own account's figures, never another's, on
 * both APIs and under concurrent first requests; and a kept answer does not
 * outlive its window: a change to the data shows once the window and Cube's
 * own refresh key have passed; a repeated query does not reach Cube at all.
 * Expected figures come from direct SQL.
 */
import { API_KEY, DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load, type Api, type Response } from '../support/api';

const db = DATABASE;
let oracle: Oracle;

beforeAll(() => {
  oracle = openOracle();
});
afterAll(async () => {
  await oracle.close();
});

const byCountry = { measures: ['Downloads.count'], dimensions: ['Downloads.country'] };

/** The answer to a query under the key, on either API; fails naming the status and the body unless 200. */
async function answer(service: TestService, key: string, query: Record<string, unknown>, api: Api = 'data') {
  const res = await load(service, query, { key, api });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { data: Record<string, string>[]; lastRefreshTime: string };
}

const countsOf = (data: Record<string, string>[]) => Object.fromEntries(data.map((row) => [row['Downloads.country'], Number(row['Downloads.count'])]));

async function expectedCounts(accountId: string | null): Promise<Record<string, number>> {
  const where = accountId === null ? '' : `WHERE account_id = '${accountId}'`;
  const rows = await oracle.rows<{ country: string; n: string }>(`SELECT country, count() AS n FROM ${db}.downloads ${where} GROUP BY country`);
  return Object.fromEntries(rows.map((r) => [r.country, Number(r.n)]));
}

describe('across accounts', () => {
  let service: TestService;
  let accounts: string[];

  beforeAll(async () => {
    accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.downloads ORDER BY a LIMIT 2`)).map((r) => r.a);
    service = await startService({}, { accounts });
  });
  afterAll(async () => {
    await service.close();
  });

  it('answers each key with its own account, first and repeated, on both APIs', async () => {
    const [a, b] = accounts;
    const keys: [string, string | null][] = [
      [service.accountKeys[a], a],
      [service.accountKeys[b], b],
      [API_KEY, null],
    ];
    const expected = new Map<string | null, Record<string, number>>();
    for (const [, account] of keys) expected.set(account, await expectedCounts(account));
    expect(expected.get(a)).not.toEqual(expected.get(b));

    for (let round = 0; round < 3; round += 1) {
      for (const [key, account] of keys) {
        expect(countsOf((await answer(service, key, byCountry)).data)).toEqual(expected.get(account));
        expect(countsOf((await answer(service, key, byCountry, 'cubejs')).data)).toEqual(expected.get(account));
      }
    }
  });

  it('keeps accounts apart when their first requests arrive together', async () => {
    const [a, b] = accounts;
    const query = { ...byCountry, order: { 'Downloads.country': 'desc' } };
    const answers = await Promise.all(
      [a, b, a, b, a, b].map(async (account) => ({ account, counts: countsOf((await answer(service, service.accountKeys[account], query)).data) })),
    );
    for (const { account, counts } of answers) expect(counts).toEqual(await expectedCounts(account));
  });
});

describe('freshness', () => {
  /** An account of its own, with rows on a day no other test reads; removed afterwards. */
  const PROBE = 'result-cache-probe';
  const DAY = '2001-02-03';
  const query = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [DAY, DAY] }] };
  const insert = (rows: number) =>
    oracle.command(`INSERT INTO ${db}.downloads (account_id, ts) SELECT '${PROBE}', toDateTime('${DAY} 12:00:00', 'UTC') FROM numbers(${rows})`);
  let service: TestService;

  beforeAll(async () => {
    await insert(1);
    service = await startService({ RESULT_CACHE_SECONDS: '1' }, { accounts: [PROBE] });
  });
  afterAll(async () => {
    await service.close();
    // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
    await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
  });

  it('shows a change to the data once the window has passed', async () => {
    const key = service.accountKeys[PROBE];
    const count = async () => Number((await answer(service, key, query)).data[0]?.['Downloads.count'] ?? 0);
    expect(await count()).toBe(1);

    await insert(2);
    const changed = Date.now();
    // Cube itself answers from its own cache until its 10 s refresh key turns, so the change
    // shows within about 20 s; a kept answer that outlived its 1 s window would hide it for good.
    let seen = await count();
    while (seen !== 3 && Date.now() - changed < 40_000) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await count();
    }
    expect(seen).toBe(3);
  });
});

describe('in front of Cube', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => {
    await service.close();
  });

  /** Cube's share of the request, from Server-Timing (`cube;dur=…`, the time spent in Cube's gateway). */
  const cubeMs = (res: Response) => Number(/\bcube;dur=([\d.]+)/.exec(String(res.headers['server-timing']))?.[1]);

  it('answers a repeated query without calling Cube at all', async () => {
    // A query no other test asks, so that Cube itself has to compute the first answer.
    const query = { measures: ['Downloads.count'], dimensions: ['Downloads.continent'], limit: 777 };
    const send = () => load(service, query).expect(200);
    const first = await send();
    expect(cubeMs(first)).toBeGreaterThan(0);
    const repeated = await send();
    expect(repeated.body.data).toEqual(first.body.data);
    expect(repeated.body.lastRefreshTime).toBe(first.body.lastRefreshTime);
    expect(cubeMs(repeated)).toBe(0);
    const want = await expectedContinents();
    expect(Object.fromEntries(repeated.body.data.map((r: Record<string, string>) => [r['Downloads.continent'], Number(r['Downloads.count'])]))).toEqual(want);
  });
});

async function expectedContinents(): Promise<Record<string, number>> {
  const rows = await oracle.rows<{ k: string; n: string }>(`SELECT continent AS k, count() AS n FROM ${db}.downloads GROUP BY k`);
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}
