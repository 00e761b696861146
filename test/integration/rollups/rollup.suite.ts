/**
 * A model's rollup (fixtures/rollup-schema: downloads by country, by hour):
 * Cube answers the shape from it, for an account and for the operator, with
 * the answers of direct SQL over the same rows; each context reads a table
 * of its own; a query in another time zone reads the raw tables; added rows
 * reach its answers after a rebuild, even one made within the same second as
 * the build before it; and dataChanged rebuilds the tables of the accounts it
 * names and the operator's, not another account's.
 */
import { API_KEY, DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { answer, byCountry, direct, ROLLUP, ROLLUP_SCHEMA, rollupsFor, rollupTables, type Counts } from './support';

const db = DATABASE;
const ACCOUNTS = ['northwind-audio', 'harbor-lane-media'] as const;
/** An account of its own, whose rows the freshness test adds and removes. */
const PROBE = 'rollup-freshness-probe';
/** An account of its own, whose rollup the rebuilds within one second test rebuilds. */
const RAPID = 'rollup-rapid-rebuilds';
let service: TestService;
let oracle: Oracle;
/** Last day of the data (UTC). */
let END: string;

beforeAll(async () => {
  // No result cache in front of Cube: the freshness test reads Cube's answers as they change.
  service = await startService(
    { RESULT_CACHE_MB: '0', CUBE_ROLLUP_REFRESH_SECONDS: '0' },
    { schemaPath: ROLLUP_SCHEMA, accounts: [...ACCOUNTS, PROBE, RAPID] },
  );
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(ts))) AS d FROM ${db}.downloads`))[0].d;
}, 120_000);
afterAll(async () => {
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id IN ('${PROBE}', '${RAPID}') SETTINGS mutations_sync = 2`);
  await service.cube.dataChanged([{ account: PROBE }, { account: RAPID }]);
  await oracle.close();
  await service.close();
}, 120_000);

const DAY_MS = 86_400_000;
/** The END of the data minus n days, YYYY-MM-DD. */
const D = (n: number) => new Date(Date.parse(`${END}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
/** Today minus n days (UTC), YYYY-MM-DD: Cube's relative ranges count from the clock. */
const T = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
const at = (instant: string) => `toDateTime('${instant}', 'UTC')`;

const keyOf = (account: string | null) => (account === null ? API_KEY : service.accountKeys[account]);
const whereOf = (account: string | null, range: string) => (account === null ? range : `account_id = '${account}' AND ${range}`);

const RANGES = [
  { name: 'the last 7 days', dateRange: () => 'last 7 days', range: () => `ts >= ${at(`${T(7)} 00:00:00`)} AND ts < ${at(`${T(0)} 00:00:00`)}` },
  { name: 'a past week', dateRange: () => [D(20), D(14)], range: () => `ts >= ${at(`${D(20)} 00:00:00`)} AND ts < ${at(`${D(13)} 00:00:00`)}` },
  {
    name: 'whole hours',
    dateRange: () => [`${D(3)}T06:00:00.000`, `${D(2)}T17:59:59.999`],
    range: () => `ts >= ${at(`${D(3)} 06:00:00`)} AND ts < ${at(`${D(2)} 18:00:00`)}`,
  },
];

describe.each([
  { who: 'the operator', account: null },
  { who: ACCOUNTS[0], account: ACCOUNTS[0] },
  { who: ACCOUNTS[1], account: ACCOUNTS[1] },
])('for $who', ({ account }) => {
  it.each(RANGES)('the rollup answers $name, as direct SQL does', async ({ dateRange, range }) => {
    expect(await rollupsFor(service, keyOf(account), byCountry(dateRange()))).toEqual([ROLLUP]);
    const want = await direct(oracle, whereOf(account, range()));
    expect(Object.keys(want).length).toBeGreaterThan(0);
    expect(await answer(service, keyOf(account), byCountry(dateRange()))).toEqual(want);
  });
});

/** Counts in a fixed order, to compare as text. */
const canonical = (counts: Counts) => JSON.stringify(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));

it('each context reads a table of its own', async () => {
  const query = byCountry([D(20), D(14)]);
  const range = `ts >= ${at(`${D(20)} 00:00:00`)} AND ts < ${at(`${D(13)} 00:00:00`)}`;
  const contexts = [null, ...ACCOUNTS];
  for (const account of contexts) await answer(service, keyOf(account), query);
  const contents = await Promise.all(
    (await rollupTables(oracle)).map(async (name) => {
      const rows = await oracle.rows<{ k: string; v: string }>(
        `SELECT rolled_downloads__country AS k, sum(rolled_downloads__count) AS v FROM ${ROLLUP_DATABASE}.${name}
         WHERE rolled_downloads__ts_hour >= ${at(`${D(20)} 00:00:00`)} AND rolled_downloads__ts_hour < ${at(`${D(13)} 00:00:00`)} GROUP BY k`,
      );
      return { name, counts: canonical(Object.fromEntries(rows.map((r) => [r.k, Number(r.v)]))) };
    }),
  );
  const owners = await Promise.all(
    contexts.map(async (account) => {
      const want = canonical(await direct(oracle, whereOf(account, range)));
      return contents.filter((c) => c.counts === want).map((c) => c.name);
    }),
  );
  for (const names of owners) expect(names.length).toBeGreaterThan(0);
  expect(new Set(owners.flat()).size).toBe(owners.flat().length);
});

it('a query in another time zone reads the raw tables (Cube would build a table per zone), and answers the same', async () => {
  const query = { ...byCountry([D(20), D(14)]), timezone: 'America/New_York' };
  const before = await rollupTables(oracle);
  expect(await rollupsFor(service, keyOf(ACCOUNTS[0]), query)).toEqual([]);
  const local = (day: string) => `toDateTime('${day} 00:00:00', 'America/New_York')`;
  expect(await answer(service, keyOf(ACCOUNTS[0]), query)).toEqual(
    await direct(oracle, whereOf(ACCOUNTS[0], `ts >= ${local(D(20))} AND ts < ${local(D(13))}`)),
  );
  expect(await rollupTables(oracle)).toEqual(before);
});

describe('freshness', () => {
  it('rows added after a build reach the rollup’s answer once its refresh key turns (10 s) and it is rebuilt', async () => {
    const query = byCountry('last 7 days');
    expect(await rollupsFor(service, keyOf(PROBE), query)).toEqual([ROLLUP]);
    expect(await answer(service, keyOf(PROBE), query)).toEqual({});

    await oracle.command(
      `INSERT INTO ${db}.downloads (account_id, ip4, ts, country) VALUES ('${PROBE}', 167772161, '${T(1)} 08:00:00', 'Iceland'), ('${PROBE}', 167772162, '${T(1)} 09:00:00', 'Iceland')`,
    );
    const want = { Iceland: 2 };
    const deadline = Date.now() + 60_000;
    let got = await answer(service, keyOf(PROBE), query);
    while (JSON.stringify(got) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      got = await answer(service, keyOf(PROBE), query);
    }
    expect(got).toEqual(want);
    // Still the rollup, rebuilt, not the raw tables.
    expect(await rollupsFor(service, keyOf(PROBE), query)).toEqual([ROLLUP]);
  }, 90_000);
});

describe('rebuilds', () => {
  // Cube stamps a rollup table with its build's second and answers from the latest stamp; a tie went by name, so a
  // table built in the same second as the one before it was answered from half the time (src/cube/engine/driver.ts).
  it('within one second: each change dataChanged was told of is in the next answer', async () => {
    const query = byCountry('last 7 days');
    expect(await rollupsFor(service, keyOf(RAPID), query)).toEqual([ROLLUP]);
    for (let i = 1; i <= 8; i += 1) {
      await oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts, country) VALUES ('${RAPID}', ${167772416 + i}, '${T(1)} 08:00:00', 'Iceland')`);
      await service.cube.dataChanged([{ account: RAPID }]);
      expect(await answer(service, keyOf(RAPID), query)).toEqual({ Iceland: i });
    }
  }, 90_000);

  it('dataChanged rebuilds the tables of the accounts it names and the operator’s, not another account’s', async () => {
    const query = byCountry('last 7 days');
    for (const account of [RAPID, ACCOUNTS[0], null]) await answer(service, keyOf(account), query);
    const before = new Set(await rollupTables(oracle));
    await oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts, country) VALUES ('${RAPID}', 167772500, '${T(1)} 10:00:00', 'Iceland')`);
    await service.cube.dataChanged([{ account: RAPID }]);
    const rebuilt = (await rollupTables(oracle)).filter((name) => !before.has(name));
    expect(rebuilt).toHaveLength(2);
    // The other account's query finds its table current: no build in the background either.
    await answer(service, keyOf(ACCOUNTS[0]), query);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await rollupTables(oracle)).filter((name) => !before.has(name))).toEqual(rebuilt);
    expect(await answer(service, keyOf(RAPID), query)).toEqual({ Iceland: 9 });
  }, 90_000);
});
