/**
 * The funnel's hourly table (src/cube/funnel-hourly.ts): its hours add up,
 * per account, to the funnel written by hand (funnelStepsSql) over any range
 * of whole hours, and the accounts' to the operator's; an account's new rows
 * remake that account's hours only; and the operator's rollup is built from
 * the hours, the steps' branch switched off once every account has them.
 */
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { API_KEY, DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
const PROBE = 'funnel-hourly-probe';
/** An account whose rows arrive while an import runs. */
const HELD = 'funnel-hourly-held';
/** Where the service keeps the hours (rollupSourceDatabase in src/cube/engine/dialect.ts). */
const SOURCES = `${ROLLUP_DATABASE}_sources`;
/** The hours' looks for new rows, every 10 s in production: short, so a look that must not come has many chances to. */
const LOOK_MS = 1_000;
let service: TestService;
let oracle: Oracle;
let END: string;
let accounts: string[];

beforeAll(async () => {
  service = await startService({ RESULT_CACHE_MB: '0' }, { accounts: [PROBE], funnelLookMs: LOOK_MS });
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(ts))) AS d FROM ${db}.downloads`))[0].d;
  accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.downloads ORDER BY a`)).map((r) => r.a);
}, 120_000);
afterAll(async () => {
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id IN ('${PROBE}', '${HELD}') SETTINGS mutations_sync = 2`);
  await oracle.command(`ALTER TABLE ${db}.web_events DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
  await service.cube.dataChanged([PROBE, HELD]);
  await oracle.close();
  await service.close();
}, 120_000);

const DAY_MS = 86_400_000;
const D = (n: number) => new Date(Date.parse(`${END}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
const at = (instant: string) => `toDateTime64('${instant}', 3, 'UTC')`;
type Steps = Record<string, number>;
const withoutZeros = (steps: Steps): Steps =>
  Object.fromEntries(
    Object.entries(steps)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

async function hours(where: string, from: string, to: string): Promise<Steps> {
  const rows = await oracle.rows<{ k: string; v: string }>(
    `SELECT step AS k, sum(conversions) AS v FROM ${SOURCES}.funnel_hourly WHERE ${where} AND hour >= ${at(from)} AND hour < ${at(to)} GROUP BY k`,
  );
  return withoutZeros(Object.fromEntries(rows.map((r) => [r.k, Number(r.v)])));
}

async function byHand(where: string, from: string, to: string): Promise<Steps> {
  const rows = await oracle.rows<{ k: string; v: string }>(funnelStepsSql(db, where, `t >= ${at(from)} AND t < ${at(to)}`));
  return withoutZeros(Object.fromEntries(rows.map((r) => [r.k, Number(r.v)])));
}

const RANGES = [
  { name: 'all of it', from: () => '2000-01-01 00:00:00', to: () => '2100-01-01 00:00:00' },
  { name: 'a past week', from: () => `${D(20)} 00:00:00`, to: () => `${D(13)} 00:00:00` },
  { name: 'whole hours', from: () => `${D(3)} 06:00:00`, to: () => `${D(2)} 18:00:00` },
];

describe.each(RANGES)('over $name', ({ from, to }) => {
  it('each account’s hours are its funnel written by hand', async () => {
    expect(accounts.length).toBeGreaterThan(1);
    for (const account of accounts) {
      const want = await byHand(`account_id = '${account}'`, from(), to());
      expect(Object.keys(want).length).toBeGreaterThan(0);
      expect(await hours(`account_id = '${account}'`, from(), to())).toEqual(want);
    }
  });

  it('every account’s hours together are the operator’s funnel written by hand', async () => {
    expect(await hours('1 = 1', from(), to())).toEqual(await byHand('1 = 1', from(), to()));
  });
});

describe('rows added to one account', () => {
  it('remake that account’s hours only, and the operator’s rollup is built from the hours', async () => {
    const builtBefore = await oracle.rows<{ a: string; n: string }>(
      `SELECT account_id AS a, toString(count()) AS n FROM ${SOURCES}.funnel_built GROUP BY a ORDER BY a`,
    );
    const day = D(1);
    // As an import adds them, so that the remake is dataChanged's, not a look's between the inserts.
    await service.cube.importing(async () => {
      await oracle.command(
        `INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ('${PROBE}', 167772161, '${day} 08:00:00'), ('${PROBE}', 167772162, '${day} 09:00:00')`,
      );
      await oracle.command(`INSERT INTO ${db}.web_events (account_id, ip4, track_ts, se_category) VALUES ('${PROBE}', 167772161, '${day} 10:00:00', '')`);
      await service.cube.dataChanged([PROBE]);
    });

    expect(await hours(`account_id = '${PROBE}'`, `${day} 00:00:00`, `${D(0)} 00:00:00`)).toEqual({ 'Podcast Download': 2, 'Website Visit': 1 });
    const builtAfter = await oracle.rows<{ a: string; n: string }>(
      `SELECT account_id AS a, toString(count()) AS n FROM ${SOURCES}.funnel_built WHERE account_id != '${PROBE}' GROUP BY a ORDER BY a`,
    );
    expect(builtAfter).toEqual(builtBefore.filter((b) => b.a !== PROBE));

    // The operator's rollup is built from the hours, not from every account's rows (the steps' branch is for
    // accounts without hours, and reads nothing once every account has them).
    const res = await request(service.app)
      .post('/cubejs-api/v1/sql')
      .set('x-api-key', API_KEY)
      .send({
        query: {
          measures: ['WebEventsFromPodcastFunnel.conversions'],
          dimensions: ['WebEventsFromPodcastFunnel.step'],
          timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: [day, day] }],
        },
      })
      .expect(200);
    const [load] = res.body.sql.preAggregations[0].loadSql as [string];
    expect(load).toContain(`FROM ${SOURCES}.funnel_hourly`);
    expect(load).toContain(`(SELECT argMax(complete, at) FROM ${SOURCES}.funnel_complete) = 0`);
    const [{ complete }] = await oracle.rows<{ complete: string }>(`SELECT toString(argMax(complete, at)) AS complete FROM ${SOURCES}.funnel_complete`);
    expect(complete).toBe('1');
  }, 120_000);
});

describe('rows an import adds', () => {
  it('are not followed part by part while it runs: its dataChanged remakes the hours once', async () => {
    const remakes = async () =>
      Number((await oracle.rows<{ n: string }>(`SELECT toString(count()) AS n FROM ${SOURCES}.funnel_built WHERE account_id = '${HELD}'`))[0].n);
    const day = D(1);
    await service.cube.importing(async () => {
      await oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ('${HELD}', 167772171, '${day} 08:00:00')`);
      // Four looks' time: without the hold the first look after the insert starts within LOOK_MS and remakes the hours,
      // with three looks' time left for that remake to end.
      await new Promise((resolve) => setTimeout(resolve, 4 * LOOK_MS));
      expect(await remakes()).toBe(0);
      await service.cube.dataChanged([HELD]);
    });
    expect(await remakes()).toBe(1);
    expect(await hours(`account_id = '${HELD}'`, `${day} 00:00:00`, `${D(0)} 00:00:00`)).toEqual({ 'Podcast Download': 1 });
  }, 120_000);
});
