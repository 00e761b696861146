/**
 * The funnel's hourly table (src/cube/funnel-hourly.ts): its hours add up,
 * per account, to the funnel written by hand (funnelStepsSql) over any range
 * of whole hours, and the accounts' to the operator's; an account's new rows
 * remake that account's hours only; and the operator's rollup is built from
 * the hours, the steps' branch switched off once every account has them.
 * An import into an account with history remakes its hours from the
 * import's first day on only, with the same hours as the funnel written by
 * hand over all its rows; rows removed from there on remake them whole.
 */
import path from 'node:path';
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { API_KEY, DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
const PROBE = 'funnel-hourly-probe';
/** An account whose rows arrive while an import runs. */
const HELD = 'funnel-hourly-held';
/** An account with history that an import adds to. */
const INTO = 'funnel-hourly-into';
/** An account whose rows a service without the funnel sees. */
const NO_FUNNEL = 'funnel-hourly-no-funnel';
const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
/** Where the service keeps the hours (rollupSourceDatabase in src/cube/engine/dialect.ts). */
const SOURCES = `${ROLLUP_DATABASE}_sources`;
/** The hours' looks for new rows, every 10 s in production: short, so a look that must not come has many chances to. */
const LOOK_MS = 1_000;
let service: TestService;
let oracle: Oracle;
let END: string;
let accounts: string[];
/** The service's log lines: which way the hours were remade. */
const logged: string[] = [];

beforeAll(async () => {
  service = await startService({ RESULT_CACHE_MB: '0' }, { accounts: [PROBE, INTO], funnelLookMs: LOOK_MS, log: (line) => logged.push(line) });
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(ts))) AS d FROM ${db}.downloads`))[0].d;
  accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.downloads ORDER BY a`)).map((r) => r.a);
}, 120_000);
afterAll(async () => {
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id IN ('${PROBE}', '${HELD}', '${INTO}') SETTINGS mutations_sync = 2`);
  await oracle.command(`ALTER TABLE ${db}.web_events DELETE WHERE account_id IN ('${PROBE}', '${INTO}') SETTINGS mutations_sync = 2`);
  await service.cube.dataChanged([{ account: PROBE }, { account: HELD }, { account: INTO }]);
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
      await service.cube.dataChanged([{ account: PROBE }]);
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
      await service.cube.dataChanged([{ account: HELD }]);
    });
    expect(await remakes()).toBe(1);
    expect(await hours(`account_id = '${HELD}'`, `${day} 00:00:00`, `${D(0)} 00:00:00`)).toEqual({ 'Podcast Download': 1 });
  }, 120_000);
});

describe('an import into an account with history', () => {
  const IP = (n: number) => 167837696 + n; // 10.1.0.n
  const B = () => `${D(3)} 00:00:00`;
  const downloads = (rows: [number, string][]) =>
    oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ${rows.map(([ip, ts]) => `('${INTO}', ${IP(ip)}, '${ts}')`).join(', ')}`);
  /** How the service last remade the account's hours: from an hour on, or whole. */
  const lastRemake = () => {
    const line = logged.filter((l) => l.includes('"funnel hours remade"') && l.includes(`"account":"${INTO}"`)).at(-1);
    return line === undefined ? undefined : ((JSON.parse(line) as { from?: string }).from ?? 'whole');
  };
  const sameAsByHand = async () => {
    for (const range of [...RANGES, { from: () => B(), to: () => `${D(0)} 00:00:00` }]) {
      expect(await hours(`account_id = '${INTO}'`, range.from(), range.to())).toEqual(await byHand(`account_id = '${INTO}'`, range.from(), range.to()));
    }
    // And the account's rollup, rebuilt from the hours, answers the same.
    const res = await request(service.app)
      .post('/v1/data/load/')
      .set('x-api-key', service.accountKeys[INTO])
      .send({
        query: {
          measures: ['WebEventsFromPodcastFunnel.conversions'],
          dimensions: ['WebEventsFromPodcastFunnel.step'],
          timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: [D(10), D(0)] }],
        },
      })
      .expect(200);
    const answered = withoutZeros(
      Object.fromEntries(
        (res.body.data as Record<string, string>[]).map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])]),
      ),
    );
    expect(answered).toEqual(await byHand(`account_id = '${INTO}'`, `${D(10)} 00:00:00`, `${D(-1)} 00:00:00`));
  };

  beforeAll(async () => {
    // The history, whose hours are made whole: addresses 1-4 and 6 download before the import's day (6 on it too);
    // the web events, which an import does not change, include visits and a conversion on and after that day.
    await service.cube.importing(async () => {
      await downloads([
        [1, `${D(8)} 10:00:00`],
        [2, `${D(9)} 08:00:00`],
        [3, `${D(4)} 23:00:00`],
        [4, `${D(5)} 10:00:00`],
        [6, `${D(3)} 03:00:00`],
      ]);
      await oracle.command(
        `INSERT INTO ${db}.web_events (account_id, ip4, track_ts, se_category) VALUES ${[
          [1, `${D(7)} 12:00:00`, ''],
          [1, `${D(6)} 09:00:00`, 'conversion'],
          [2, `${D(2)} 10:00:00`, ''],
          [2, `${D(1)} 11:00:00`, 'conversion'],
          [3, `${D(3)} 02:00:00`, ''],
          [4, `${D(5)} 11:00:00`, ''],
          [6, `${D(3)} 04:00:00`, ''],
        ]
          .map(([ip, ts, category]) => `('${INTO}', ${IP(ip as number)}, '${ts}', '${category}')`)
          .join(', ')}`,
      );
      await service.cube.dataChanged([{ account: INTO }]);
    });
    expect(lastRemake()).toBe('whole');
  }, 120_000);

  it('remakes the hours from its first day on, the same as the funnel written by hand over all the rows', async () => {
    await service.cube.importing(async () => {
      // 1 downloads again (its latest download moves past B, its visit and conversion stay before), 2's new download
      // reaches the visit and conversion its old one was too early for, 3's moves its visit past B, 5 is new.
      await downloads([
        [1, `${D(3)} 05:00:00`],
        [2, `${D(3)} 06:00:00`],
        [3, `${D(3)} 01:00:00`],
        [5, `${D(3)} 07:00:00`],
      ]);
      await service.cube.dataChanged([{ account: INTO, since: Date.parse(`${B().replace(' ', 'T')}Z`) / 1000 + 1_800 }]);
    });
    expect(lastRemake()).toBe(`${D(3)}T00:00:00.000Z`);
    await sameAsByHand();
  }, 120_000);

  it('remakes them whole when downloads from there on went (an import rolled back)', async () => {
    await service.cube.importing(async () => {
      await oracle.command(
        `ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${INTO}' AND ip4 IN (${IP(2)}, ${IP(5)}) AND ts >= '${B()}' SETTINGS mutations_sync = 2`,
      );
      await service.cube.dataChanged([{ account: INTO, since: Date.parse(`${B().replace(' ', 'T')}Z`) / 1000 }]);
    });
    expect(lastRemake()).toBe('whole');
    await sameAsByHand();
  }, 120_000);

  it('keeps rows added by other means just before the import, which its remake from the day on would not read', async () => {
    // Not by an import: the hours' next look (every LOOK_MS) would find it, but the import comes first.
    await downloads([[7, `${D(6)} 10:00:00`]]);
    await service.cube.importing(async () => {
      await downloads([[8, `${D(2)} 10:00:00`]]);
      await service.cube.dataChanged([{ account: INTO, since: Date.parse(`${B().replace(' ', 'T')}Z`) / 1000 }]);
    });
    expect(lastRemake()).toBe(`${D(3)}T00:00:00.000Z`);
    await sameAsByHand();
  }, 120_000);
});

describe('models without the funnel (a team’s models directory of its own)', () => {
  it('keep no hours, and new rows are said once at info, not an error at every look', async () => {
    const lines: string[] = [];
    // This suite's service is held meanwhile, so the rows stay unmade for the other one's looks.
    await service.cube.importing(async () => {
      await oracle.command(`INSERT INTO ${db}.downloads (account_id, ip4, ts) VALUES ('${NO_FUNNEL}', 167772163, '${D(1)} 08:00:00')`);
      const own = await startService({ RESULT_CACHE_MB: '0' }, { schemaPath: SLOW_SCHEMA, funnelLookMs: 200, log: (line) => lines.push(line) });
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      } finally {
        await own.close();
        await oracle.command(`ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${NO_FUNNEL}' SETTINGS mutations_sync = 2`);
      }
    });
    const parsed = lines.map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(parsed.filter((l) => l.level === 'error')).toEqual([]);
    expect(parsed.filter((l) => l.msg === 'the models have no WebEventsFromPodcastFunnel cube: no funnel hours are kept')).toHaveLength(1);
    const built = await oracle.rows<{ n: string }>(`SELECT toString(count()) AS n FROM ${SOURCES}.funnel_built WHERE account_id = '${NO_FUNNEL}'`);
    expect(built).toEqual([{ n: '0' }]);
  }, 120_000);
});
