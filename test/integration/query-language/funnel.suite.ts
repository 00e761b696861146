/**
 * The funnel's time: every way a query can bound WebEventsFromPodcastFunnel.time
 * gives the answer of the funnel written by hand (funnelStepsSql, with Cube's
 * meaning of an address's time at a step), for the operator and for an
 * account. The model skips rows older than the query's earliest time
 * (SQL_UTILS.timeLowerBound); the cases include ranges in the middle of the
 * data, where an address's later downloads move it out of the range, and
 * filters that give no lower bound (before, not in, or), which must push
 * nothing down.
 */
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { API_KEY, DATABASE } from '../support/constants';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
const TIME = 'WebEventsFromPodcastFunnel.time';
const ACCOUNT = 'northwind-audio';
let service: TestService;
let oracle: Oracle;
/** Last day of the demo data (UTC). */
let END: string;

beforeAll(async () => {
  service = await startService({}, { accounts: [ACCOUNT] });
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(ts))) AS d FROM ${db}.downloads`))[0].d;
});
afterAll(async () => {
  await oracle.close();
  await service.close();
});

/** The END of the data minus n days, YYYY-MM-DD. */
const D = (n: number) => new Date(Date.parse(`${END}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
/** A UTC day's first instant, as ClickHouse reads it. */
const start = (day: string) => `toDateTime64('${day} 00:00:00', 3, 'UTC')`;
/** The instant after a UTC day's last one. */
const after = (day: string) => `(${start(day)} + INTERVAL 1 DAY)`;

interface Case {
  name: string;
  query: () => Record<string, unknown>;
  /** The same bound as a condition on t, written from the operators' documented meaning. */
  keep: () => string;
  /** The lower bounds the steps skip to (parameters as Cube writes them); none when the query gives none. */
  pushed?: () => string[];
}

const base = { measures: ['WebEventsFromPodcastFunnel.conversions'], dimensions: ['WebEventsFromPodcastFunnel.step'] };
const CASES: Case[] = [
  {
    name: 'a date range in the middle of the data',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, dateRange: [D(20), D(14)] }] }),
    keep: () => `t >= ${start(D(20))} AND t < ${after(D(14))}`,
    pushed: () => [`${D(20)}T00:00:00.000Z`],
  },
  {
    name: 'a date range by day',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, granularity: 'day', dateRange: [D(9), D(9)] }], dimensions: [] }),
    keep: () => `t >= ${start(D(9))} AND t < ${after(D(9))}`,
    pushed: () => [`${D(9)}T00:00:00.000Z`],
  },
  {
    name: 'an inDateRange filter',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'inDateRange', values: [D(25), D(18)] }] }),
    keep: () => `t >= ${start(D(25))} AND t < ${after(D(18))}`,
    pushed: () => [`${D(25)}T00:00:00.000Z`],
  },
  {
    name: 'afterDate',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'afterDate', values: [D(6)] }] }),
    keep: () => `t >= ${after(D(6))}`,
    pushed: () => [`${D(6)}T23:59:59.999Z`],
  },
  {
    name: 'afterOrOnDate and a range together',
    query: () => ({
      ...base,
      timeDimensions: [{ dimension: TIME, dateRange: [D(28), D(8)] }],
      filters: [{ member: TIME, operator: 'afterOrOnDate', values: [D(16)] }],
    }),
    keep: () => `t >= ${start(D(16))} AND t < ${after(D(8))}`,
    pushed: () => [`${D(28)}T00:00:00.000Z`, `${D(16)}T00:00:00.000Z`],
  },
  {
    name: 'beforeDate (no lower bound)',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'beforeDate', values: [D(20)] }] }),
    keep: () => `t < ${start(D(20))}`,
  },
  {
    name: 'notInDateRange (no lower bound)',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'notInDateRange', values: [D(22), D(3)] }] }),
    keep: () => `NOT (t >= ${start(D(22))} AND t < ${after(D(3))})`,
  },
  {
    name: 'a range inside an or (no lower bound)',
    query: () => ({
      ...base,
      filters: [
        {
          or: [
            { member: TIME, operator: 'inDateRange', values: [D(5), D(1)] },
            { member: TIME, operator: 'beforeDate', values: [D(24)] },
          ],
        },
      ],
    }),
    keep: () => `(t >= ${start(D(5))} AND t < ${after(D(1))}) OR t < ${start(D(24))}`,
  },
];

type Steps = Record<string, number>;

/**
 * Steps nobody reached are left out of both sides: Cube answers a step row
 * of 0 when its groups hold only addresses that did not reach it (their
 * user id is NULL), which says nothing about the funnel.
 */
const withoutZeros = (steps: Steps): Steps => Object.fromEntries(Object.entries(steps).filter(([, n]) => n > 0));

async function answer(key: string, query: Record<string, unknown>): Promise<Steps> {
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', key).send({ query }).expect(200);
  const steps: Steps = {};
  for (const row of res.body.data as Record<string, string>[]) {
    const step = row['WebEventsFromPodcastFunnel.step'] ?? 'all';
    steps[step] = (steps[step] ?? 0) + Number(row['WebEventsFromPodcastFunnel.conversions']);
  }
  return withoutZeros(steps);
}

async function expected(where: string, keep: string, byStep: boolean): Promise<Steps> {
  const rows = await oracle.rows<{ k: string; v: string }>(funnelStepsSql(db, where, keep));
  const steps: Steps = {};
  for (const r of rows) steps[byStep ? r.k : 'all'] = (steps[byStep ? r.k : 'all'] ?? 0) + Number(r.v);
  return withoutZeros(steps);
}

describe.each(CASES)('the funnel with $name', ({ query, keep }) => {
  const byStep = () => (query().dimensions as string[]).length > 0;

  it('answers the operator as the funnel written by hand does', async () => {
    const want = await expected('1 = 1', keep(), byStep());
    expect(Object.values(want).some((n) => n > 0)).toBe(true);
    expect(await answer(API_KEY, query())).toEqual(want);
  });

  it('answers an account as the funnel written by hand does over its rows', async () => {
    expect(await answer(service.accountKeys[ACCOUNT], query())).toEqual(await expected(`account_id = '${ACCOUNT}'`, keep(), byStep()));
  });
});

describe('the steps read from the query’s earliest time on', () => {
  const sqlOf = async (query: Record<string, unknown>) =>
    (await request(service.app).post('/cubejs-api/v1/sql').set('x-api-key', service.accountKeys[ACCOUNT]).send({ query }).expect(200)).body.sql as {
      sql: [string, unknown[]];
      preAggregations: { loadSql: [string, unknown[]] }[];
    };

  // The SQL that reads the steps: the query's own or, when the funnel's
  // rollup answers the query (test/rollups), the rollup's build, which reads
  // every row (it serves every range).
  it.each(CASES)('$name', async ({ query, pushed }) => {
    const { sql, preAggregations } = await sqlOf(query());
    const [text, params] = preAggregations.length > 0 ? preAggregations[0].loadSql : sql;
    const bounded = [...text.matchAll(/\b(ts|track_ts) >= parseDateTime64BestEffort\(\?, 3, 'UTC'\)/g)];
    const bounds = preAggregations.length > 0 ? [] : (pushed?.() ?? []);
    // Each bound in each of the three steps: downloads, visits, conversions.
    expect(bounded.map((m) => m[1])).toEqual(['ts', 'track_ts', 'track_ts'].flatMap((column) => bounds.map(() => column)));
    // The outer filter may hold the same value once more.
    for (const bound of bounds) expect(params.filter((p) => p === bound).length).toBeGreaterThanOrEqual(3);
  });
});

describe('the funnel’s listeners', () => {
  // A database of its own: two IPv4 listeners and three IPv6 ones (ip4 0.0.0.0), of which one IPv4 listener visits
  // the website and converts. Counted by hand: 5, 1, 1. Keyed by ip4 alone, the three IPv6 listeners were one.
  const FUNNEL_DB = `funnel_listeners_${process.pid}`;
  const DAY = '2026-01-05';
  let own: TestService;
  beforeAll(async () => {
    for (const statement of ddlStatements(FUNNEL_DB)) await oracle.command(statement);
    const download = (ip: string, ip4: string) => `('acme', '${DAY} 08:00:00', toIPv6('${ip}'), toIPv4('${ip4}'), 'abc123')`;
    await oracle.command(
      `INSERT INTO ${FUNNEL_DB}.downloads (account_id, ts, ip, ip4, token) VALUES ${[
        download('::ffff:192.0.2.1', '192.0.2.1'),
        download('::ffff:192.0.2.2', '192.0.2.2'),
        download('2001:db8::1', '0.0.0.0'),
        download('2001:db8::2', '0.0.0.0'),
        download('2001:db8:1::1', '0.0.0.0'),
      ].join(', ')}`,
    );
    await oracle.command(
      `INSERT INTO ${FUNNEL_DB}.web_events (account_id, ip4, track_ts, se_category) VALUES ('acme', toIPv4('192.0.2.1'), '${DAY} 09:00:00', ''), ('acme', toIPv4('192.0.2.1'), '${DAY} 10:00:00', 'conversion')`,
    );
    await oracle.command(
      `INSERT INTO ${FUNNEL_DB}.podcast_events (account_id, request_id, ts, ip, ip4, token) VALUES ('acme', generateUUIDv4(), '${DAY} 08:00:00', toIPv6('2001:db8::1'), toIPv4(0), 'abc123'), ('acme', generateUUIDv4(), '${DAY} 08:00:00', toIPv6('::ffff:192.0.2.1'), toIPv4('192.0.2.1'), 'abc123')`,
    );
    own = await startService({ CLICKHOUSE_DATABASE: FUNNEL_DB });
  });
  afterAll(async () => {
    await own?.close();
    await oracle.command(`DROP DATABASE IF EXISTS ${FUNNEL_DB}`);
  });

  it.each(['UTC', 'America/New_York'])('are addresses: each IPv6 listener counts once in the first step (%s)', async (timezone) => {
    const res = await request(own.app)
      .post('/v1/data/load/')
      .set('x-api-key', API_KEY)
      .send({
        query: {
          measures: ['WebEventsFromPodcastFunnel.conversions', 'WebEventsFromPodcastFunnel.conversionsPercent'],
          dimensions: ['WebEventsFromPodcastFunnel.step'],
          timezone,
        },
      });
    expect(res.status).toBe(200);
    const steps = Object.fromEntries(
      res.body.data.map((row: Record<string, string>) => [
        row['WebEventsFromPodcastFunnel.step'],
        [Number(row['WebEventsFromPodcastFunnel.conversions']), Number(row['WebEventsFromPodcastFunnel.conversionsPercent'])],
      ]),
    );
    expect(steps).toEqual({ 'Podcast Download': [5, 100], 'Website Visit': [1, 20], Conversion: [1, 20] });
  });

  it('have no ip4 when they came over IPv6: the member is empty, and notSet finds them', async () => {
    const load = async (query: Record<string, unknown>) => {
      const res = await request(own.app).post('/v1/data/load/').set('x-api-key', API_KEY).send({ query });
      expect(res.status).toBe(200);
      return res.body.data as Record<string, string>[];
    };
    const byIp4 = async (cube: string) =>
      Object.fromEntries(
        (await load({ measures: [`${cube}.count`], dimensions: [`${cube}.ip4`] })).map((row) => [row[`${cube}.ip4`], Number(row[`${cube}.count`])]),
      );
    expect(await byIp4('DownloadEvents')).toEqual({ '': 3, '192.0.2.1': 1, '192.0.2.2': 1 });
    expect(await byIp4('PodcastEvents')).toEqual({ '': 1, '192.0.2.1': 1 });
    const [unset] = await load({ measures: ['DownloadEvents.count'], filters: [{ member: 'DownloadEvents.ip4', operator: 'notSet' }] });
    expect(Number(unset['DownloadEvents.count'])).toBe(3);
  });
});
