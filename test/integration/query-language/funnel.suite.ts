/**
 * The funnel as docs/reference/api.md defines it: a listener enters at their first
 * download within the query's range (all time without one) and is counted in
 * that entry's bucket; a visit counts when the first page view at or after
 * the entry is within 7 days of it, a conversion when one follows that visit
 * within 7 days. Every answer is compared with the funnel written by hand
 * (funnelSeriesSql: plain joins where the model takes ASOF JOINs), for the
 * operator and an account: no range, a relative range, fixed ranges as a
 * dateRange and as filters, filters without a lower bound, and monthly and
 * daily series; in every answer and bucket no step counts more listeners than
 * the one before. Then a database of its own whose listeners are counted by
 * hand: downloads before and inside the range, an IPv6 listener with two
 * addresses in one /64, visits and conversions just inside and just outside
 * their 7 days.
 */
import { funnelSeriesSql } from '../support/catalog';
import { API_KEY, DATABASE } from '../support/constants';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { dataOf, load } from '../support/api';

const db = DATABASE;
const F = 'WebEventsFromPodcastFunnel';
const TIME = `${F}.time`;
const STEPS = ['Podcast Download', 'Website Visit', 'Conversion'];
const ACCOUNT = 'northwind-audio';
const DAY_MS = 86_400_000;
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
const D = (n: number) => new Date(Date.parse(`${END}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);
/** Today minus n days (UTC), YYYY-MM-DD: Cube's relative ranges count from the clock. */
const T = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
/** A UTC day's first instant, as ClickHouse reads it. */
const start = (day: string) => `toDateTime64('${day} 00:00:00', 3, 'UTC')`;
/** The instant after a UTC day's last one. */
const after = (day: string) => `(${start(day)} + INTERVAL 1 DAY)`;

/** Listeners by step and bucket ('' without a granularity). */
type Series = Record<string, Record<string, number>>;

/** The rows of a query under the key, from the suite's service or another. */
const rowsOf = (key: string, query: Record<string, unknown>, on: TestService = service) => dataOf<Record<string, string | null>>(load(on, query, { key }));

/** Steps nobody reached are left out: the funnel answers a row of 0 for them, the hand-written one none. */
function series(rows: { step: string; bucket: string; n: number }[]): Series {
  const out: Series = {};
  for (const { step, bucket, n } of rows) if (n > 0) (out[bucket] ??= {})[step] = n;
  return out;
}

async function answer(key: string, query: Record<string, unknown>, granularity?: string, on: TestService = service): Promise<Series> {
  const rows = await rowsOf(key, query, on);
  return series(
    rows.map((row) => ({
      step: String(row[`${F}.step`]),
      bucket: granularity ? String(row[`${TIME}.${granularity}`]).slice(0, 10) : '',
      n: Number(row[`${F}.conversions`]),
    })),
  );
}

const BUCKETS: Record<string, string> = { month: 'toString(toStartOfMonth(t))', day: 'toString(toDate(t))' };

async function byHand(where: string, range: string, granularity?: string, database = db): Promise<Series> {
  const rows = await oracle.rows<{ k: string; b: string; v: string }>(funnelSeriesSql(database, where, range, granularity ? BUCKETS[granularity] : "''"));
  return series(rows.map((r) => ({ step: r.k, bucket: r.b, n: Number(r.v) })));
}

/** No step of a bucket counts more listeners than the one before it. */
function expectStepsNeverGrow(answered: Series): void {
  for (const steps of Object.values(answered)) {
    const counts = STEPS.map((step) => steps[step] ?? 0);
    for (let i = 1; i < counts.length; i += 1) expect(counts[i]).toBeLessThanOrEqual(counts[i - 1]);
  }
}

interface Case {
  name: string;
  query: () => Record<string, unknown>;
  /** The query's range as a condition on a download's time t, from the operators' documented meaning. */
  range: () => string;
  granularity?: string;
  /** Whether the range moves with the clock: the answer is taken again when the day changed meanwhile. */
  relative?: boolean;
  /** A step the query's filters leave out. */
  without?: string;
}

const base = { measures: [`${F}.conversions`], dimensions: [`${F}.step`] };
const CASES: Case[] = [
  { name: 'no range (all time)', query: () => base, range: () => '1 = 1' },
  {
    name: 'a relative range (last 7 days)',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, dateRange: 'last 7 days' }] }),
    range: () => `t >= ${start(T(7))} AND t < ${start(T(0))}`,
    relative: true,
  },
  {
    name: 'a fixed range in the middle of the data',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, dateRange: [D(20), D(14)] }] }),
    range: () => `t >= ${start(D(20))} AND t < ${after(D(14))}`,
  },
  {
    name: 'an inDateRange filter',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'inDateRange', values: [D(25), D(18)] }] }),
    range: () => `t >= ${start(D(25))} AND t < ${after(D(18))}`,
  },
  {
    name: 'afterDate',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'afterDate', values: [D(6)] }] }),
    range: () => `t >= ${after(D(6))}`,
  },
  {
    name: 'beforeDate (no lower bound)',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'beforeDate', values: [D(20)] }] }),
    range: () => `t < ${start(D(20))}`,
  },
  {
    name: 'notInDateRange',
    query: () => ({ ...base, filters: [{ member: TIME, operator: 'notInDateRange', values: [D(22), D(3)] }] }),
    range: () => `NOT (t >= ${start(D(22))} AND t < ${after(D(3))})`,
  },
  {
    name: 'two ranges in an or',
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
    range: () => `(t >= ${start(D(5))} AND t < ${after(D(1))}) OR t < ${start(D(24))}`,
  },
  {
    name: 'a range and a step in an and',
    query: () => ({
      ...base,
      filters: [
        {
          and: [
            { member: TIME, operator: 'afterOrOnDate', values: [D(16)] },
            { member: `${F}.step`, operator: 'notEquals', values: ['Conversion'] },
          ],
        },
      ],
      timeDimensions: [{ dimension: TIME, dateRange: [D(28), D(8)] }],
    }),
    range: () => `t >= ${start(D(16))} AND t < ${after(D(8))}`,
    without: 'Conversion',
  },
  {
    name: 'a monthly series over a range',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, granularity: 'month', dateRange: [D(29), D(0)] }] }),
    range: () => `t >= ${start(D(29))} AND t < ${after(D(0))}`,
    granularity: 'month',
  },
  {
    name: 'a monthly series of all time',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, granularity: 'month' }] }),
    range: () => '1 = 1',
    granularity: 'month',
  },
  {
    name: 'a daily series over a range',
    query: () => ({ ...base, timeDimensions: [{ dimension: TIME, granularity: 'day', dateRange: [D(12), D(2)] }] }),
    range: () => `t >= ${start(D(12))} AND t < ${after(D(2))}`,
    granularity: 'day',
  },
];

describe.each([
  { who: 'the operator', key: () => API_KEY, where: '1 = 1' },
  { who: ACCOUNT, key: () => service.accountKeys[ACCOUNT], where: `account_id = '${ACCOUNT}'` },
])('the funnel for $who', ({ key, where }) => {
  it.each(CASES)('$name: the funnel written by hand, and no step above the one before', async ({ query, range, granularity, relative, without }) => {
    let day: string;
    let answered: Series;
    do {
      day = T(0);
      answered = await answer(key(), query(), granularity);
    } while (relative && day !== T(0));
    const want = await byHand(where, range(), granularity);
    expect(Object.keys(want).length).toBeGreaterThan(0);
    if (without) for (const steps of Object.values(want)) delete steps[without];
    expect(answered).toEqual(want);
    expectStepsNeverGrow(answered);
  });
});

it('a filter on the time inside an "or" with another member is refused: it gives the funnel no range', async () => {
  const res = await load(service, {
    ...base,
    filters: [
      {
        or: [
          { member: TIME, operator: 'inDateRange', values: [D(5), D(1)] },
          { member: `${F}.step`, operator: 'equals', values: ['Conversion'] },
        ],
      },
    ],
  });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('invalid_query');
  expect(res.body.error).toContain(TIME);
});

describe('listeners counted by hand', () => {
  // A database of its own, account acme (and one listener of account other). The range is 2026-01-10 to 2026-01-20.
  //  L1 192.0.2.1: downloads 01-05 08:00 (before the range), 01-12 08:00 and 01-15 08:00; visits 01-06 09:00 (after
  //     the early download only) and 01-13 10:00; converts 01-14 10:00. In the range it enters at 01-12 08:00 and
  //     reaches all three; over all time it enters at 01-05 08:00, visits 01-06 09:00 and its conversion comes 8 days
  //     after that visit: two steps.
  //  L2 192.0.2.2: downloads 01-11 00:00, visits 6 days 23 hours later, converts 6 days 23 hours after that (after the
  //     range's end): all three.
  //  L3 192.0.2.3: downloads 01-11 00:00, visits 7 days 1 hour later (and converts just after): one step.
  //  L4 192.0.2.4: downloads 01-12 00:00, visits at 06:00, converts 7 days 1 hour after the visit: two steps.
  //  L5 2001:db8:0:1::1 and 2001:db8:0:1::2, one /64: downloads 01-14 08:00 and 01-13 08:00: one listener, one step.
  //  L6 2001:db8:0:2::1: downloads 01-15: one step (an IPv6 visitor's page view, ip4 0.0.0.0, matches no listener).
  //  L7 192.0.2.7: downloads 01-05 only, before the range.
  //  L8 192.0.2.8: visits 01-10 12:00, downloads 01-11: the visit came before, one step.
  //  other's 192.0.2.9: downloads 01-12; acme's website has its visit, another account's: one step.
  const OWN_DB = `funnel_listeners_${process.pid}`;
  const RANGE = ['2026-01-10', '2026-01-20'];
  let own: TestService;
  beforeAll(async () => {
    for (const statement of ddlStatements(OWN_DB)) await oracle.command(statement);
    const download = (account: string, ip: string, ts: string) => {
      const v4 = /^\d+\.\d+\.\d+\.\d+$/.test(ip);
      return `('${account}', '${ts}', toIPv6('${v4 ? `::ffff:${ip}` : ip}'), toIPv4('${v4 ? ip : '0.0.0.0'}'), 'abc123')`;
    };
    await oracle.command(
      `INSERT INTO ${OWN_DB}.downloads (account_id, ts, ip, ip4, token) VALUES ${[
        download('acme', '192.0.2.1', '2026-01-05 08:00:00'),
        download('acme', '192.0.2.1', '2026-01-12 08:00:00'),
        download('acme', '192.0.2.1', '2026-01-15 08:00:00'),
        download('acme', '192.0.2.2', '2026-01-11 00:00:00'),
        download('acme', '192.0.2.3', '2026-01-11 00:00:00'),
        download('acme', '192.0.2.4', '2026-01-12 00:00:00'),
        download('acme', '2001:db8:0:1::1', '2026-01-14 08:00:00'),
        download('acme', '2001:db8:0:1::2', '2026-01-13 08:00:00'),
        download('acme', '2001:db8:0:2::1', '2026-01-15 08:00:00'),
        download('acme', '192.0.2.7', '2026-01-05 08:00:00'),
        download('acme', '192.0.2.8', '2026-01-11 00:00:00'),
        download('other', '192.0.2.9', '2026-01-12 00:00:00'),
      ].join(', ')}`,
    );
    const event = (ip: string, at: string, category: string) => `('acme', toIPv4('${ip}'), '${at}', '${category}')`;
    await oracle.command(
      `INSERT INTO ${OWN_DB}.web_events (account_id, ip4, track_ts, se_category) VALUES ${[
        event('192.0.2.1', '2026-01-06 09:00:00', ''),
        event('192.0.2.1', '2026-01-13 10:00:00', ''),
        event('192.0.2.1', '2026-01-14 10:00:00', 'conversion'),
        event('192.0.2.2', '2026-01-17 23:00:00', ''),
        event('192.0.2.2', '2026-01-24 22:00:00', 'conversion'),
        event('192.0.2.3', '2026-01-18 01:00:00', ''),
        event('192.0.2.3', '2026-01-18 02:00:00', 'conversion'),
        event('192.0.2.4', '2026-01-12 06:00:00', ''),
        event('192.0.2.4', '2026-01-19 07:00:00', 'conversion'),
        event('0.0.0.0', '2026-01-15 09:00:00', ''),
        event('192.0.2.8', '2026-01-10 12:00:00', ''),
        event('192.0.2.9', '2026-01-12 01:00:00', ''),
      ].join(', ')}`,
    );
    await oracle.command(
      `INSERT INTO ${OWN_DB}.podcast_events (account_id, request_id, ts, ip, ip4, token) VALUES ('acme', generateUUIDv4(), '2026-01-14 08:00:00', toIPv6('2001:db8:0:1::1'), toIPv4(0), 'abc123'), ('acme', generateUUIDv4(), '2026-01-12 08:00:00', toIPv6('::ffff:192.0.2.1'), toIPv4('192.0.2.1'), 'abc123')`,
    );
    own = await startService({ CLICKHOUSE_DATABASE: OWN_DB }, { accounts: ['acme'] });
  });
  afterAll(async () => {
    await own?.close();
    await oracle.command(`DROP DATABASE IF EXISTS ${OWN_DB}`);
  });

  const acme = () => own.accountKeys.acme;
  const steps = (download: number, visit: number, conversion: number) =>
    Object.fromEntries(
      [
        [STEPS[0], download],
        [STEPS[1], visit],
        [STEPS[2], conversion],
      ].filter(([, n]) => Number(n) > 0),
    );
  const ranged = { ...base, timeDimensions: [{ dimension: TIME, dateRange: RANGE }] };
  const rangeSql = `t >= ${start(RANGE[0])} AND t < ${after(RANGE[1])}`;

  it('over the range: each enters at their first download in it', async () => {
    expect(await answer(acme(), ranged, undefined, own)).toEqual({ '': steps(7, 3, 2) });
    expect(await byHand("account_id = 'acme'", rangeSql, undefined, OWN_DB)).toEqual({ '': steps(7, 3, 2) });
  });

  it('over the range, for the operator: the other account’s listener enters, and no website of acme’s is its', async () => {
    expect(await answer(API_KEY, ranged, undefined, own)).toEqual({ '': steps(8, 3, 2) });
  });

  it('over all time: L1 enters at its first download ever, L7 too', async () => {
    expect(await answer(acme(), base, undefined, own)).toEqual({ '': steps(8, 3, 1) });
    expect(await byHand("account_id = 'acme'", '1 = 1', undefined, OWN_DB)).toEqual({ '': steps(8, 3, 1) });
  });

  it('by day over the range: each listener in the bucket of their entry', async () => {
    const query = { ...base, timeDimensions: [{ dimension: TIME, granularity: 'day', dateRange: RANGE }] };
    expect(await answer(acme(), query, 'day', own)).toEqual({
      '2026-01-11': steps(3, 1, 1),
      '2026-01-12': steps(2, 2, 1),
      '2026-01-13': steps(1, 0, 0),
      '2026-01-15': steps(1, 0, 0),
    });
  });

  it.each(['UTC', 'America/New_York'])('conversionsPercent divides by the first step (%s)', async (timezone) => {
    const rows = await rowsOf(acme(), { ...ranged, measures: [`${F}.conversions`, `${F}.conversionsPercent`], timezone }, own);
    const percent = Object.fromEntries(rows.map((row) => [row[`${F}.step`], Number(row[`${F}.conversionsPercent`])]));
    // The range is UTC days in UTC, and New York's days in New York: the same listeners enter in both.
    expect(percent[STEPS[0]]).toBe(100);
    expect(percent[STEPS[1]]).toBeCloseTo((100 * 3) / 7, 9);
    expect(percent[STEPS[2]]).toBeCloseTo((100 * 2) / 7, 9);
  });

  it('an IPv6 listener has no ip4: the member is empty, and notSet finds them', async () => {
    const byIp4 = async (cube: string) =>
      Object.fromEntries(
        (await rowsOf(API_KEY, { measures: [`${cube}.count`], dimensions: [`${cube}.ip4`] }, own)).map((row) => [
          row[`${cube}.ip4`],
          Number(row[`${cube}.count`]),
        ]),
      );
    expect((await byIp4('DownloadEvents'))['']).toBe(3);
    expect(await byIp4('PodcastEvents')).toEqual({ '': 1, '192.0.2.1': 1 });
    const [unset] = await rowsOf(API_KEY, { measures: ['DownloadEvents.count'], filters: [{ member: 'DownloadEvents.ip4', operator: 'notSet' }] }, own);
    expect(Number(unset['DownloadEvents.count'])).toBe(3);
  });
});
