/**
 * The funnel's rollup (schema/WebEventsFromPodcastFunnel.js): Cube answers
 * the dashboard's shape from it, for an account and for the operator, with
 * the answers of the funnel written by hand (funnelStepsSql) over the same
 * rows; an account's rollup holds its own rows only; a query it cannot serve
 * reads the raw tables; added rows reach its answers after a rebuild, even one
 * made within the same second as the build before it.
 */
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { API_KEY, DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
const TIME = 'WebEventsFromPodcastFunnel.time';
const ROLLUP = 'WebEventsFromPodcastFunnel.conversionsByStep';
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
  service = await startService({ RESULT_CACHE_MB: '0', CUBE_ROLLUP_REFRESH_SECONDS: '0' }, { accounts: [...ACCOUNTS, PROBE, RAPID] });
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(ts))) AS d FROM ${db}.downloads`))[0].d;
}, 120_000);
afterAll(async () => {
  await oracle.close();
  await service.close();
});

const DAY_MS = 86_400_000;
/** The END of the data minus n days, YYYY-MM-DD. */
const D = (n: number) => new Date(Date.parse(`${END}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
/** Today minus n days (UTC), YYYY-MM-DD: Cube's relative ranges count from the clock. */
const T = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
const at = (instant: string) => `toDateTime64('${instant}', 3, 'UTC')`;

type Steps = Record<string, number>;
/** Steps nobody reached are left out of both sides (see query-language/funnel.suite.ts). */
const withoutZeros = (steps: Steps): Steps => Object.fromEntries(Object.entries(steps).filter(([, n]) => n > 0));

const shape = (dateRange: unknown, extra: Record<string, unknown> = {}) => ({
  measures: ['WebEventsFromPodcastFunnel.conversions'],
  dimensions: ['WebEventsFromPodcastFunnel.step'],
  timeDimensions: [{ dimension: TIME, dateRange }],
  ...extra,
});

const keyOf = (account: string | null) => (account === null ? API_KEY : service.accountKeys[account]);
const whereOf = (account: string | null) => (account === null ? '1 = 1' : `account_id = '${account}'`);

async function answer(account: string | null, query: Record<string, unknown>): Promise<Steps> {
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', keyOf(account)).send({ query }).expect(200);
  const steps: Steps = {};
  for (const row of res.body.data as Record<string, string>[])
    steps[row['WebEventsFromPodcastFunnel.step']] = Number(row['WebEventsFromPodcastFunnel.conversions']);
  return withoutZeros(steps);
}

async function expected(account: string | null, keep: string): Promise<Steps> {
  const rows = await oracle.rows<{ k: string; v: string }>(funnelStepsSql(db, whereOf(account), keep));
  return withoutZeros(Object.fromEntries(rows.map((r) => [r.k, Number(r.v)])));
}

/** The rollups Cube names for the query under the key: empty when it reads the raw tables. */
async function rollupsFor(account: string | null, query: Record<string, unknown>): Promise<{ id: string; sql: string }[]> {
  const res = await request(service.app).post('/cubejs-api/v1/sql').set('x-api-key', keyOf(account)).send({ query }).expect(200);
  const { sql, preAggregations } = res.body.sql as { sql: [string]; preAggregations: { preAggregationId: string }[] };
  return preAggregations.map((p) => ({ id: p.preAggregationId, sql: sql[0] }));
}

const RANGES = [
  { name: 'the last 7 days', dateRange: () => 'last 7 days', keep: () => `t >= ${at(`${T(7)} 00:00:00`)} AND t < ${at(`${T(0)} 00:00:00`)}` },
  { name: 'a past week', dateRange: () => [D(20), D(14)], keep: () => `t >= ${at(`${D(20)} 00:00:00`)} AND t < ${at(`${D(13)} 00:00:00`)}` },
  { name: 'a single day', dateRange: () => [D(9), D(9)], keep: () => `t >= ${at(`${D(9)} 00:00:00`)} AND t < ${at(`${D(8)} 00:00:00`)}` },
  {
    name: 'whole hours',
    dateRange: () => [`${D(3)}T06:00:00.000`, `${D(2)}T17:59:59.999`],
    keep: () => `t >= ${at(`${D(3)} 06:00:00`)} AND t < ${at(`${D(2)} 18:00:00`)}`,
  },
];

describe.each([
  { who: 'the operator', account: null },
  { who: ACCOUNTS[0], account: ACCOUNTS[0] },
  { who: ACCOUNTS[1], account: ACCOUNTS[1] },
])('for $who', ({ account }) => {
  it.each(RANGES)('the rollup answers $name', async ({ dateRange }) => {
    const used = await rollupsFor(account, shape(dateRange()));
    expect(used.map((u) => u.id)).toEqual([ROLLUP]);
    expect(used[0].sql).toContain(`FROM ${ROLLUP_DATABASE}.`);
  });

  it.each(RANGES)('its answer over $name is the funnel written by hand', async ({ dateRange, keep }) => {
    const want = await expected(account, keep());
    expect(Object.keys(want).length).toBeGreaterThan(0);
    expect(await answer(account, shape(dateRange()))).toEqual(want);
  });
});

/** Steps in a fixed order, to compare as text. */
const canonical = (steps: Steps) => JSON.stringify(Object.entries(steps).sort(([a], [b]) => (a < b ? -1 : 1)));

describe('accounts', () => {
  // Each context's answer equals its own oracle (above); here, each reads a
  // table of its own: the table whose rows give that context's funnel is a
  // different one for the operator and each account.
  it('each have a rollup table of their own', async () => {
    const query = shape([D(20), D(14)]);
    const keep = `${at(`${D(20)} 00:00:00`)} <= h AND h < ${at(`${D(13)} 00:00:00`)}`;
    const contexts = [null, ...ACCOUNTS];
    for (const account of contexts) await answer(account, query);
    const tables = await oracle.rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = '${ROLLUP_DATABASE}' AND name LIKE 'web_events_from_podcast_funnel%'`,
    );
    const contents = await Promise.all(
      tables.map(async ({ name }) => {
        const rows = await oracle.rows<{ k: string; v: string }>(
          `SELECT web_events_from_podcast_funnel__step AS k, sum(web_events_from_podcast_funnel__conversions) AS v
           FROM (SELECT *, web_events_from_podcast_funnel__time_hour AS h FROM ${ROLLUP_DATABASE}.${name}) WHERE ${keep} GROUP BY k`,
        );
        return { name, steps: canonical(withoutZeros(Object.fromEntries(rows.map((r) => [r.k, Number(r.v)])))) };
      }),
    );
    const owners = await Promise.all(
      contexts.map(async (account) => {
        const want = canonical(await expected(account, `t >= ${at(`${D(20)} 00:00:00`)} AND t < ${at(`${D(13)} 00:00:00`)}`));
        return contents.filter((c) => c.steps === want).map((c) => c.name);
      }),
    );
    for (const names of owners) expect(names.length).toBeGreaterThan(0);
    expect(new Set(owners.flat()).size).toBe(owners.flat().length);
  });
});

describe('a query the rollup cannot serve reads the raw tables, and answers the same', () => {
  it('a range starting at 10:30', async () => {
    const query = shape([`${D(10)}T10:30:00.000`, `${D(4)}T23:59:59.999`]);
    expect(await rollupsFor(ACCOUNTS[0], query)).toEqual([]);
    expect(await answer(ACCOUNTS[0], query)).toEqual(await expected(ACCOUNTS[0], `t >= ${at(`${D(10)} 10:30:00`)} AND t < ${at(`${D(3)} 00:00:00`)}`));
  });

  it('another time zone (Cube would build a table per zone, each reading all rows)', async () => {
    const query = { ...shape([D(20), D(14)]), timezone: 'America/New_York' };
    const before = await oracle.value(`SELECT count() FROM system.tables WHERE database = '${ROLLUP_DATABASE}'`);
    expect(await rollupsFor(ACCOUNTS[0], query)).toEqual([]);
    const local = (day: string) => `toDateTime64('${day} 00:00:00', 3, 'America/New_York')`;
    expect(await answer(ACCOUNTS[0], query)).toEqual(await expected(ACCOUNTS[0], `t >= ${local(D(20))} AND t < ${local(D(13))}`));
    expect(await oracle.value(`SELECT count() FROM system.tables WHERE database = '${ROLLUP_DATABASE}'`)).toBe(before);
  });

  it('conversionsPercent (a distinct count, which hours do not add up to)', async () => {
    const query = shape([D(20), D(14)], { measures: ['WebEventsFromPodcastFunnel.conversionsPercent'] });
    expect(await rollupsFor(ACCOUNTS[0], query)).toEqual([]);
    const res = await request(service.app).post('/v1/data/load/').set('x-api-key', keyOf(ACCOUNTS[0])).send({ query }).expect(200);
    const first = (res.body.data as Record<string, string>[]).find((row) => row['WebEventsFromPodcastFunnel.step'] === 'Podcast Download');
    expect(Number(first?.['WebEventsFromPodcastFunnel.conversionsPercent'])).toBe(100);
  });
});

describe('freshness', () => {
  const DAY = () => T(1);
  const remove = async () => {
    // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
    await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
    await oracle.command(`ALTER TABLE ${db}.web_events DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
  };
  afterAll(remove);

  it('rows added after a build reach the rollup’s answer once its refresh key turns (10 s) and it is rebuilt', async () => {
    const query = shape('last 7 days');
    expect(await rollupsFor(PROBE, query)).not.toEqual([]);
    expect(await answer(PROBE, query)).toEqual({});

    await oracle.command(
      `INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ('${PROBE}', 167772161, '${DAY()} 08:00:00'), ('${PROBE}', 167772162, '${DAY()} 09:00:00')`,
    );
    await oracle.command(`INSERT INTO ${db}.web_events (account_id, ip4, track_ts, se_category) VALUES ('${PROBE}', 167772161, '${DAY()} 10:00:00', '')`);
    const want = { 'Podcast Download': 2, 'Website Visit': 1 };
    expect(await expected(PROBE, `t >= ${at(`${T(7)} 00:00:00`)} AND t < ${at(`${T(0)} 00:00:00`)}`)).toEqual(want);

    const deadline = Date.now() + 60_000;
    let got = await answer(PROBE, query);
    while (JSON.stringify(got) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      got = await answer(PROBE, query);
    }
    expect(got).toEqual(want);
    // Still the rollup, rebuilt, not the raw tables.
    expect(await rollupsFor(PROBE, query)).not.toEqual([]);
  }, 90_000);
});

describe('rebuilds within one second', () => {
  afterAll(async () => {
    await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${RAPID}' SETTINGS mutations_sync = 2`);
    await service.cube.dataChanged([{ account: RAPID }]);
  });

  // Cube stamps a rollup table with its build's second and answers from the latest stamp; a tie went by name, so a
  // table built in the same second as the one before it was answered from half the time (src/cube/engine/driver.ts).
  it('answer from the newest table: each change dataChanged was told of is in the next answer', async () => {
    const query = shape('last 7 days');
    expect(await rollupsFor(RAPID, query)).not.toEqual([]);
    const keep = `t >= ${at(`${T(7)} 00:00:00`)} AND t < ${at(`${T(0)} 00:00:00`)}`;
    for (let i = 1; i <= 8; i += 1) {
      await oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ('${RAPID}', ${167772416 + i}, '${T(1)} 08:00:00')`);
      await service.cube.dataChanged([{ account: RAPID }]);
      const want = await expected(RAPID, keep);
      expect(want).toEqual({ 'Podcast Download': i });
      expect(await answer(RAPID, query)).toEqual(want);
    }
  }, 90_000);
});
