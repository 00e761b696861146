/**
 * Time in Cube's query language: every granularity, absolute and relative
 * date ranges, the `Cube.member.granularity` shorthand, several time
 * dimensions in one query, time zones, the annotation of time members and
 * compareDateRange. Each case asks the service a question and the same
 * question of chDB directly, written by hand below; rows, values and order
 * must agree.
 *
 * Conventions of Cube 0.33 relied on (read from its sources, not from the
 * service): a bucket is labelled with its start as local time of the query's
 * time zone ("2026-11-20T00:00:00.000", no offset) under both
 * "<member>.<granularity>" and "<member>"; weeks are ISO weeks starting on
 * Monday (ClickHouseQuery.timeGroupedColumn uses toMonday); without an
 * `order`, rows come ordered by the first time dimension with a granularity,
 * ascending; a date-only range covers whole days of the query's time zone and
 * is echoed as "…T00:00:00.000" / "…T23:59:59.999".
 */
import { EXPECTED_SCHEMAS } from '../contract/spec-meta';
import { DATABASE } from '../support/constants';
import { withDefaultService } from '../support/default-service';
import { cubeSql, load } from '../support/api';

const db = DATABASE;
const suite = withDefaultService();
/** Last day of the demo window (UTC), read from the data: the daily chart snapshots run up to it. */
let END: string;

beforeAll(async () => {
  END = (await suite.oracle.rows<{ d: string }>(`SELECT toString(max(toDate(snapshot_ts))) AS d FROM ${db}.channel_ranks`))[0].d;
});

type Query = Record<string, unknown>;
type Row = Record<string, unknown>;

// ---------------------------------------------------------------------------
// Dates, computed here without Cube or moment.

const DAY_MS = 86_400_000;

/** YYYY-MM-DD plus n days. */
function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}
/** The END of the demo window minus n days. */
const D = (n: number) => addDays(END, -n);
/** The calendar date of an instant in a time zone. */
function localDate(instant: Date, timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
}
function lastDayOfMonth(year: number, month1: number): string {
  return new Date(Date.UTC(year, month1, 0)).toISOString().slice(0, 10);
}
const pad = (n: number) => String(n).padStart(2, '0');
/** ISO weekday, Monday = 1 … Sunday = 7. */
const isoWeekday = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay() || 7;
const startOfDay = (date: string) => `${date}T00:00:00.000`;
const endOfDay = (date: string) => `${date}T23:59:59.999`;
/** A dateRange as Cube echoes it: one entry stands for both ends; dates widen to whole days; timestamps stay. */
function echoedRange(range: string[]): string[] {
  const [from, to] = range.length === 1 ? [range[0], range[0]] : range;
  const isDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s);
  return [isDate(from) ? startOfDay(from) : from, isDate(to) ? endOfDay(to) : to];
}

// ---------------------------------------------------------------------------
// The oracle's side. `b` is the bucket label, `v` the count.

/** A DateTime (in its own time zone) as Cube labels it: local time, milliseconds, no offset. */
const isoTime = (expr: string) => `formatDateTime(${expr}, '%Y-%m-%dT%H:%i:%S.000')`;
/** A Date as Cube labels a bucket starting at its midnight. */
const isoDay = (expr: string) => `concat(toString(${expr}), 'T00:00:00.000')`;

interface Bucket {
  b: string;
  v: number | string;
}
async function buckets(sql: string): Promise<Bucket[]> {
  return suite.oracle.rows<Bucket>(sql);
}
/** The rows the service should answer for buckets of one time dimension and one measure. */
function asTimeRows(member: string, granularity: string, measure: string, rows: Bucket[]): Row[] {
  return rows.map((r) => ({ [`${member}.${granularity}`]: r.b, [member]: r.b, [measure]: String(Number(r.v)) }));
}
async function count(sql: string): Promise<number> {
  return suite.oracle.value(sql);
}
const dataCount = (body: { data: Row[] }, measure: string) => {
  expect(body.data).toHaveLength(1);
  return Number(body.data[0][measure]);
};

// ---------------------------------------------------------------------------

interface GranularityCase {
  name: string;
  granularity: 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
  measure: string;
  dimension: string;
  dateRange?: () => string[];
  /** The same buckets in hand-written SQL, ordered by bucket. */
  sql: () => string;
  check?: (bucket: string) => void;
}

const GRANULARITIES: GranularityCase[] = [
  {
    name: 'second, Downloads.ts (DateTime) over two hours',
    granularity: 'second',
    measure: 'Downloads.count',
    dimension: 'Downloads.ts',
    dateRange: () => [`${D(3)}T10:00:00.000`, `${D(3)}T11:59:59.999`],
    sql: () => `SELECT ${isoTime('ts')} AS b, count() AS v FROM ${db}.downloads
      WHERE ts >= '${D(3)} 10:00:00' AND ts < '${D(3)} 12:00:00' GROUP BY b ORDER BY b`,
  },
  {
    // Without a date range: two days of seconds (172,800 buckets) are over QUERY_MAX_TIME_BUCKETS.
    name: 'second, WebEvents.trackTs (DateTime64(3)), every event: milliseconds dropped',
    granularity: 'second',
    measure: 'WebEvents.count',
    dimension: 'WebEvents.trackTs',
    sql: () => `SELECT ${isoTime('toStartOfSecond(track_ts)')} AS b, count() AS v FROM ${db}.web_events GROUP BY b ORDER BY b`,
  },
  {
    name: 'minute, PodcastEvents.ts over two hours',
    granularity: 'minute',
    measure: 'PodcastEvents.count',
    dimension: 'PodcastEvents.ts',
    dateRange: () => [`${D(4)}T08:00:00.000`, `${D(4)}T09:59:59.999`],
    sql: () => `SELECT ${isoTime('toStartOfMinute(ts)')} AS b, count() AS v FROM ${db}.podcast_events
      WHERE ts >= '${D(4)} 08:00:00' AND ts < '${D(4)} 10:00:00' GROUP BY b ORDER BY b`,
  },
  {
    name: 'hour, Downloads.ts over one day',
    granularity: 'hour',
    measure: 'Downloads.count',
    dimension: 'Downloads.ts',
    dateRange: () => [D(5)],
    sql: () => `SELECT ${isoTime('toStartOfHour(ts)')} AS b, count() AS v FROM ${db}.downloads
      WHERE toDate(ts) = '${D(5)}' GROUP BY b ORDER BY b`,
  },
  {
    name: 'hour, WebEvents.ingestTs (DateTime64(3)) over one day',
    granularity: 'hour',
    measure: 'WebEvents.count',
    dimension: 'WebEvents.ingestTs',
    dateRange: () => [D(2)],
    sql: () => `SELECT ${isoTime('toStartOfHour(ingest_ts)')} AS b, count() AS v FROM ${db}.web_events
      WHERE toDate(ingest_ts) = '${D(2)}' GROUP BY b ORDER BY b`,
  },
  {
    name: 'day, Downloads.ts over a week',
    granularity: 'day',
    measure: 'Downloads.count',
    dimension: 'Downloads.ts',
    dateRange: () => [D(9), D(3)],
    sql: () => `SELECT ${isoDay('toDate(ts)')} AS b, count() AS v FROM ${db}.downloads
      WHERE toDate(ts) BETWEEN '${D(9)}' AND '${D(3)}' GROUP BY b ORDER BY b`,
  },
  {
    name: 'day, ChannelRanks.timestamp (06:00 UTC snapshots) over three days',
    granularity: 'day',
    measure: 'ChannelRanks.count',
    dimension: 'ChannelRanks.timestamp',
    dateRange: () => [D(6), D(4)],
    sql: () => `SELECT ${isoDay('toDate(snapshot_ts)')} AS b, count() AS v FROM ${db}.channel_ranks
      WHERE toDate(snapshot_ts) BETWEEN '${D(6)}' AND '${D(4)}' GROUP BY b ORDER BY b`,
  },
  {
    name: 'week, Downloads.ts over the whole window: ISO weeks from Monday',
    granularity: 'week',
    measure: 'Downloads.count',
    dimension: 'Downloads.ts',
    sql: () => `SELECT ${isoDay('toDate(ts) - (toDayOfWeek(ts) - 1)')} AS b, count() AS v FROM ${db}.downloads GROUP BY b ORDER BY b`,
    check: (bucket) => expect(isoWeekday(bucket.slice(0, 10))).toBe(1),
  },
  {
    name: 'week, PodcastEvents.ts over a range starting mid-week: the first bucket is the Monday before',
    granularity: 'week',
    measure: 'PodcastEvents.count',
    dimension: 'PodcastEvents.ts',
    dateRange: () => [D(20), D(6)],
    sql: () => `SELECT ${isoDay('toDate(ts) - (toDayOfWeek(ts) - 1)')} AS b, count() AS v FROM ${db}.podcast_events
      WHERE toDate(ts) BETWEEN '${D(20)}' AND '${D(6)}' GROUP BY b ORDER BY b`,
    check: (bucket) => expect(isoWeekday(bucket.slice(0, 10))).toBe(1),
  },
  {
    name: 'month, Downloads.ts over the whole window',
    granularity: 'month',
    measure: 'Downloads.count',
    dimension: 'Downloads.ts',
    sql: () => `SELECT ${isoDay('makeDate(toYear(ts), toMonth(ts), 1)')} AS b, count() AS v FROM ${db}.downloads GROUP BY b ORDER BY b`,
    check: (bucket) => expect(bucket.slice(8)).toBe('01T00:00:00.000'),
  },
  {
    name: 'quarter, EpisodeRanks.timestamp over the whole window',
    granularity: 'quarter',
    measure: 'EpisodeRanks.count',
    dimension: 'EpisodeRanks.timestamp',
    sql: () => `SELECT ${isoDay('makeDate(toYear(snapshot_ts), intDiv(toMonth(snapshot_ts) - 1, 3) * 3 + 1, 1)')} AS b, count() AS v
      FROM ${db}.episode_ranks GROUP BY b ORDER BY b`,
    check: (bucket) => expect(bucket.slice(4)).toMatch(/^-(01|04|07|10)-01T00:00:00\.000$/),
  },
  {
    name: 'year, LinksBasicAnalytics.timestamp over the whole window',
    granularity: 'year',
    measure: 'LinksBasicAnalytics.linkViewCount',
    dimension: 'LinksBasicAnalytics.timestamp',
    sql: () => `SELECT ${isoDay('makeDate(toYear(ts), 1, 1)')} AS b, count() AS v FROM ${db}.link_views GROUP BY b ORDER BY b`,
    check: (bucket) => expect(bucket.slice(4)).toBe('-01-01T00:00:00.000'),
  },
];

describe('granularities (UTC)', () => {
  it('cover every granularity of Cube 0.33', () => {
    expect([...new Set(GRANULARITIES.map((c) => c.granularity))].sort()).toEqual(['day', 'hour', 'minute', 'month', 'quarter', 'second', 'week', 'year']);
  });

  it.each(GRANULARITIES)('$name', async ({ granularity, measure, dimension, dateRange, sql, check }) => {
    const td = { dimension, granularity, ...(dateRange ? { dateRange: dateRange() } : {}) };
    const res = await load(suite.service, { measures: [measure], timeDimensions: [td] }).expect(200);
    const expected = await buckets(sql());
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.data).toEqual(asTimeRows(dimension, granularity, measure, expected));
    for (const row of res.body.data as Row[]) check?.(String(row[`${dimension}.${granularity}`]));
    expect(res.body.query.timeDimensions).toEqual([td.dateRange ? { ...td, dateRange: echoedRange(td.dateRange) } : td]);
  });

  it('a granularity outside Cube 0.33 (fortnight) is a 400', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'fortnight' }] }).expect(
      400,
    );
    expect(res.body.code).toBe('invalid_query');
  });
});

// ---------------------------------------------------------------------------

describe('absolute date ranges (UTC)', () => {
  const downloads = (range: unknown) =>
    load(suite.service, { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: range }] });

  it('one date covers that whole day, echoed as its first and last millisecond', async () => {
    const res = await downloads([D(2)]).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(D(2)), endOfDay(D(2))] }]);
    const expected = await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) = '${D(2)}'`);
    expect(expected).toBeGreaterThan(0);
    expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
  });

  it('one date written as a plain string (not an array) is the same whole day', async () => {
    const res = await downloads(D(2)).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(D(2)), endOfDay(D(2))] }]);
    expect(dataCount(res.body, 'Downloads.count')).toBe(await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) = '${D(2)}'`));
  });

  it('two dates cover both days and every day between', async () => {
    const res = await downloads([D(10), D(8)]).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(D(10)), endOfDay(D(8))] }]);
    expect(dataCount(res.body, 'Downloads.count')).toBe(await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) BETWEEN '${D(10)}' AND '${D(8)}'`));
  });

  it('two full timestamps are echoed as sent and bound the range inclusively', async () => {
    const range = [`${D(3)}T10:00:00.000`, `${D(2)}T09:30:00.000`];
    const res = await downloads(range).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: range }]);
    const expected = await count(`SELECT count() FROM ${db}.downloads WHERE ts >= '${D(3)} 10:00:00' AND ts <= '${D(2)} 09:30:00'`);
    expect(expected).toBeGreaterThan(0);
    expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
  });

  it('one full timestamp is a range of that instant: the downloads of exactly that second', async () => {
    const [{ t }] = await suite.oracle.rows<{ t: string }>(
      `SELECT toString(ts) AS t FROM ${db}.downloads WHERE toDate(ts) = '${D(4)}' GROUP BY ts ORDER BY count() DESC, ts LIMIT 1`,
    );
    const instant = `${t.replace(' ', 'T')}.000`;
    const res = await downloads([instant]).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [instant, instant] }]);
    const expected = await count(`SELECT count() FROM ${db}.downloads WHERE ts = '${t}'`);
    expect(expected).toBeGreaterThan(0);
    expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
    // Written as a plain string, the same instant (Cube 0.33's parser gave its whole day).
    const plain = await downloads(t.replace(' ', 'T')).expect(200);
    expect(plain.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [instant, instant] }]);
    expect(dataCount(plain.body, 'Downloads.count')).toBe(expected);
  });

  it('a date and a timestamp mix: the date starts at its midnight, the timestamp is kept', async () => {
    const res = await downloads([D(5), `${D(4)}T12:00:00.000`]).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(D(5)), `${D(4)}T12:00:00.000`] }]);
    expect(dataCount(res.body, 'Downloads.count')).toBe(
      await count(`SELECT count() FROM ${db}.downloads WHERE ts >= '${D(5)} 00:00:00' AND ts <= '${D(4)} 12:00:00'`),
    );
  });

  it('the inDateRange filter counts the same as the dateRange of a time dimension', async () => {
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      filters: [{ member: 'Downloads.ts', operator: 'inDateRange', values: [D(10), D(8)] }],
    }).expect(200);
    expect(dataCount(res.body, 'Downloads.count')).toBe(await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) BETWEEN '${D(10)}' AND '${D(8)}'`));
  });

  it('a range without data counts 0, and grouped by day it has no rows', async () => {
    const range = ['2020-01-01', '2020-01-31'];
    expect((await downloads(range).expect(200)).body.data).toEqual([{ 'Downloads.count': '0' }]);
    const grouped = await load(suite.service, {
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: range }],
    }).expect(200);
    expect(grouped.body.data).toEqual([]);
  });

  it('a date that is not a date is a 400', async () => {
    const res = await downloads(['2026-13-45', D(1)]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
  });

  // Cube turns "2026-13-45" into "Invalid date" and sends it to the engine,
  // whose error (without a "Code: N." prefix on chDB) quotes the generated
  // SQL; src/cube/engine/errors.ts keeps only its first sentence.
  it('the 400 for a date that is not a date does not carry the generated SQL', async () => {
    const res = await downloads(['2026-13-45', D(1)]).expect(400);
    expect(res.body.error).not.toMatch(/SELECT|FROM downloads|parseDateTime|query id/i);
  });

  // Cube 0.33's ClickHouse dialect cast range bounds with
  // parseDateTimeBestEffort (whole seconds): the end "…:59.999" became
  // "…:59", and a DateTime64(3) column (web_events) lost every event in the
  // last fraction of the range's final second.
  it('a range ending at .999 includes DateTime64 events tracked in the last second (WebEvents.trackTs)', async () => {
    const [{ t }] = await suite.oracle.rows<{ t: string }>(
      `SELECT toString(track_ts) AS t FROM ${db}.web_events WHERE toSecond(track_ts) = 59 AND toMillisecond(track_ts) > 0 ORDER BY track_ts LIMIT 1`,
    );
    const minute = t.slice(0, 16); // "YYYY-MM-DD HH:MM"
    const range = [`${minute.replace(' ', 'T')}:00.000`, `${minute.replace(' ', 'T')}:59.999`];
    const res = await load(suite.service, { measures: ['WebEvents.count'], timeDimensions: [{ dimension: 'WebEvents.trackTs', dateRange: range }] }).expect(
      200,
    );
    const expected = await count(`SELECT count() FROM ${db}.web_events WHERE track_ts >= '${minute}:00.000' AND track_ts <= '${minute}:59.999'`);
    expect(dataCount(res.body, 'WebEvents.count')).toBe(expected);
  });
});

// ---------------------------------------------------------------------------

interface RelativeCase {
  range: string;
  timezone: string;
  /** Expected first and last day, from the calendar date `today` in the query's time zone. */
  days: (today: string) => [string, string];
}

function quarterOf(date: string): { year: number; q: number } {
  return { year: Number(date.slice(0, 4)), q: Math.floor((Number(date.slice(5, 7)) - 1) / 3) };
}

const RELATIVE: RelativeCase[] = [
  { range: 'today', timezone: 'UTC', days: (t) => [t, t] },
  { range: 'yesterday', timezone: 'UTC', days: (t) => [addDays(t, -1), addDays(t, -1)] },
  // Cube: the 7 whole days before today, today excluded.
  { range: 'last 7 days', timezone: 'UTC', days: (t) => [addDays(t, -7), addDays(t, -1)] },
  { range: 'this month', timezone: 'UTC', days: (t) => [`${t.slice(0, 8)}01`, lastDayOfMonth(Number(t.slice(0, 4)), Number(t.slice(5, 7)))] },
  {
    range: 'last quarter',
    timezone: 'UTC',
    days: (t) => {
      const { year, q } = quarterOf(t);
      const [y, pq] = q === 0 ? [year - 1, 3] : [year, q - 1];
      return [`${y}-${pad(pq * 3 + 1)}-01`, lastDayOfMonth(y, pq * 3 + 3)];
    },
  },
  // Cube rounds a "from … to …" range out to whole days: "now" ends with today.
  { range: 'from 7 days ago to now', timezone: 'UTC', days: (t) => [addDays(t, -7), t] },
  { range: 'this week', timezone: 'UTC', days: (t) => [addDays(t, 1 - isoWeekday(t)), addDays(t, 7 - isoWeekday(t))] },
  { range: 'today', timezone: 'Asia/Kolkata', days: (t) => [t, t] },
  { range: 'yesterday', timezone: 'America/New_York', days: (t) => [addDays(t, -1), addDays(t, -1)] },
];

describe('relative date ranges, resolved from the current date', () => {
  it.each(RELATIVE)('"$range" in $timezone', async ({ range, timezone, days }) => {
    // Should the calendar day change during the request, ask again.
    for (let attempt = 0; ; attempt++) {
      const before = new Date();
      const res = await load(suite.service, {
        measures: ['Downloads.count'],
        timezone,
        timeDimensions: [{ dimension: 'Downloads.ts', dateRange: range }],
      }).expect(200);
      const today = localDate(before, timezone);
      if (today !== localDate(new Date(), timezone) && attempt === 0) continue;
      const [from, to] = days(today);
      expect(res.body.query.timezone).toBe(timezone);
      expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(from), endOfDay(to)] }]);
      const expected = await count(`SELECT count() FROM ${db}.downloads WHERE toDate(toTimeZone(ts, '${timezone}')) BETWEEN '${from}' AND '${to}'`);
      expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
      return;
    }
  });

  it('"last 7 days" finds data, since the demo window ends today', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 7 days' }] }).expect(
      200,
    );
    expect(dataCount(res.body, 'Downloads.count')).toBeGreaterThan(0);
  });

  it('a phrase that is no date is a 400', async () => {
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'whenever it suits you' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
  });
});

// ---------------------------------------------------------------------------

describe('time zones other than UTC', () => {
  it('America/New_York: day buckets over the whole window are New York days (a DST change in the window included)', async () => {
    const tz = 'America/New_York';
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day' }],
    }).expect(200);
    const expected = await buckets(`SELECT ${isoTime(`toStartOfDay(toTimeZone(ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.downloads GROUP BY b ORDER BY b`);
    expect(res.body.data).toEqual(asTimeRows('Downloads.ts', 'day', 'Downloads.count', expected));
    // Not the UTC buckets: the first New York day starts before the first UTC day.
    const utc = await buckets(`SELECT ${isoDay('toDate(ts)')} AS b, count() AS v FROM ${db}.downloads GROUP BY b ORDER BY b`);
    expect(expected).not.toEqual(utc);
  });

  it('America/New_York: a date range is read as New York days', async () => {
    const tz = 'America/New_York';
    const range = [D(6), D(4)];
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: range }],
    }).expect(200);
    expect(res.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [startOfDay(D(6)), endOfDay(D(4))] }]);
    const expected = await buckets(
      `SELECT ${isoTime(`toStartOfDay(toTimeZone(ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.downloads
       WHERE toDate(toTimeZone(ts, '${tz}')) BETWEEN '${D(6)}' AND '${D(4)}' GROUP BY b ORDER BY b`,
    );
    expect(expected.map((r) => r.b)).toEqual([startOfDay(D(6)), startOfDay(D(5)), startOfDay(D(4))]);
    expect(res.body.data).toEqual(asTimeRows('Downloads.ts', 'day', 'Downloads.count', expected));
  });

  it('America/New_York: a full-timestamp range is New York local time', async () => {
    const tz = 'America/New_York';
    const range = [`${D(3)}T20:00:00.000`, `${D(2)}T03:59:59.999`];
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'Downloads.ts', dateRange: range }],
    }).expect(200);
    const expected = await count(
      `SELECT count() FROM ${db}.downloads WHERE ts >= toDateTime('${D(3)} 20:00:00', '${tz}') AND ts < toDateTime('${D(2)} 04:00:00', '${tz}')`,
    );
    expect(expected).toBeGreaterThan(0);
    expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
  });

  it('Asia/Kolkata (UTC+05:30): hour buckets of one local day start at local full hours', async () => {
    const tz = 'Asia/Kolkata';
    const res = await load(suite.service, {
      measures: ['PodcastEvents.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'PodcastEvents.ts', granularity: 'hour', dateRange: [D(3)] }],
    }).expect(200);
    const expected = await buckets(
      `SELECT ${isoTime(`toStartOfHour(toTimeZone(ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.podcast_events
       WHERE toDate(toTimeZone(ts, '${tz}')) = '${D(3)}' GROUP BY b ORDER BY b`,
    );
    expect(expected.length).toBeGreaterThan(12);
    expect(res.body.data).toEqual(asTimeRows('PodcastEvents.ts', 'hour', 'PodcastEvents.count', expected));
  });

  it('Asia/Kolkata: day buckets of a DateTime64 column (WebEvents.trackTs)', async () => {
    const tz = 'Asia/Kolkata';
    const res = await load(suite.service, {
      measures: ['WebEvents.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'WebEvents.trackTs', granularity: 'day', dateRange: [D(8), D(2)] }],
    }).expect(200);
    const expected = await buckets(
      `SELECT ${isoDay(`toDate(toTimeZone(track_ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.web_events
       WHERE toDate(toTimeZone(track_ts, '${tz}')) BETWEEN '${D(8)}' AND '${D(2)}' GROUP BY b ORDER BY b`,
    );
    expect(res.body.data).toEqual(asTimeRows('WebEvents.trackTs', 'day', 'WebEvents.count', expected));
  });

  it('Asia/Kolkata: week buckets start on local Mondays', async () => {
    const tz = 'Asia/Kolkata';
    const res = await load(suite.service, {
      measures: ['WebEvents.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'WebEvents.trackTs', granularity: 'week' }],
    }).expect(200);
    const local = `toDate(toTimeZone(track_ts, '${tz}'))`;
    const expected = await buckets(`SELECT ${isoDay(`${local} - (toDayOfWeek(${local}) - 1)`)} AS b, count() AS v FROM ${db}.web_events GROUP BY b ORDER BY b`);
    expect(res.body.data).toEqual(asTimeRows('WebEvents.trackTs', 'week', 'WebEvents.count', expected));
  });

  // Cube 0.33 wrote each bound with its UTC clock time and read that as New York time: four or five hours off.
  it('America/New_York: a dateRange of instants with an offset (toISOString) counts those instants', async () => {
    const tz = 'America/New_York';
    const range = [`${D(3)}T10:00:00.000Z`, `${D(3)}T13:59:59.999+02:00`];
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timezone: tz,
      timeDimensions: [{ dimension: 'Downloads.ts', dateRange: range }],
    }).expect(200);
    const expected = await count(
      `SELECT count() FROM ${db}.downloads WHERE ts >= toDateTime('${D(3)} 10:00:00', 'UTC') AND ts < toDateTime('${D(3)} 12:00:00', 'UTC')`,
    );
    expect(expected).toBeGreaterThan(0);
    expect(dataCount(res.body, 'Downloads.count')).toBe(expected);
    const multi = await load(
      suite.service,
      {
        measures: ['Downloads.count'],
        timezone: tz,
        timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: [range, [`${D(2)}T10:00:00Z`, `${D(2)}T11:59:59.999Z`]] }],
      },
      { multi: true },
    ).expect(200);
    const second = await count(
      `SELECT count() FROM ${db}.downloads WHERE ts >= toDateTime('${D(2)} 10:00:00', 'UTC') AND ts < toDateTime('${D(2)} 12:00:00', 'UTC')`,
    );
    expect(multi.body.results.map((result: { data: Row[] }) => Number(result.data[0]['Downloads.count']))).toEqual([expected, second]);
  });

  // Cube 0.33 rounded each side of the phrase to its day.
  it('America/New_York: "from <date and time> to <date and time>" keeps the times, an offset read as that instant', async () => {
    const tz = 'America/New_York';
    const ask = async (dateRange: string) =>
      dataCount(
        (await load(suite.service, { measures: ['Downloads.count'], timezone: tz, timeDimensions: [{ dimension: 'Downloads.ts', dateRange }] }).expect(200))
          .body,
        'Downloads.count',
      );
    const local = await count(
      `SELECT count() FROM ${db}.downloads WHERE ts >= toDateTime('${D(3)} 06:30:00', '${tz}') AND ts <= toDateTime('${D(3)} 18:15:30', '${tz}')`,
    );
    const mixed = await count(`SELECT count() FROM ${db}.downloads WHERE ts >= toDateTime('${D(4)} 10:00:00', 'UTC') AND toDate(ts, '${tz}') <= '${D(3)}'`);
    expect(local).toBeGreaterThan(0);
    expect(await ask(`from ${D(3)}T06:30:00 to ${D(3)}T18:15:30`)).toBe(local);
    expect(await ask(`from ${D(4)}T10:00:00Z to ${D(3)}`)).toBe(mixed);
  });

  // Cube 0.33 wrote these in UTC, in the same form as the buckets' local times: a New York reader was five hours off.
  it('America/New_York: a time member listed without a granularity comes as New York local time, as its buckets do', async () => {
    const tz = 'America/New_York';
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.ts'],
      timezone: tz,
      filters: [{ member: 'Downloads.ts', operator: 'inDateRange', values: [D(3)] }],
    }).expect(200);
    const expected = await suite.oracle.rows<Row>(
      `SELECT ${isoTime(`toTimeZone(ts, '${tz}')`)} AS "Downloads.ts", toString(count()) AS "Downloads.count" FROM ${db}.downloads
       WHERE toDate(ts, '${tz}') = '${D(3)}' GROUP BY ts ORDER BY count() DESC, ts ASC`,
    );
    // Without a granularity the default order is the measure's, descending, ties by the time (docs/reference/query-language.md, "order").
    expect(expected.length).toBeGreaterThan(100);
    expect(res.body.data).toEqual(expected);
  });

  it('Asia/Kolkata: ungrouped records keep their DateTime64 milliseconds in local time (WebEvents.trackTs)', async () => {
    const tz = 'Asia/Kolkata';
    const res = await load(suite.service, {
      dimensions: ['WebEvents.eventId', 'WebEvents.trackTs', 'WebEvents.ingestTs'],
      ungrouped: true,
      timezone: tz,
      filters: [{ member: 'WebEvents.trackTs', operator: 'inDateRange', values: [D(4)] }],
      order: [['WebEvents.trackTs', 'asc']],
      limit: 500,
    }).expect(200);
    const local = (column: string) => `replaceOne(toString(toTimeZone(${column}, '${tz}')), ' ', 'T')`;
    const expected = await suite.oracle.rows<Row>(
      `SELECT event_id AS "WebEvents.eventId", ${local('track_ts')} AS "WebEvents.trackTs", ${local('toDateTime64(ingest_ts, 3)')} AS "WebEvents.ingestTs"
       FROM ${db}.web_events WHERE toDate(track_ts, '${tz}') = '${D(4)}' ORDER BY track_ts, event_id LIMIT 500`,
    );
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.some((row) => !String(row['WebEvents.trackTs']).endsWith('.000'))).toBe(true);
    expect(res.body.data).toEqual(expected);
  });

  // Cube 0.33 took the zone's offset at the local time read as UTC: an hour off in the hours around a clock change.
  // Each bound as the instant it names, worked out by hand from the zones' rules of 2027.
  it.each([
    ['America/New_York', '2027-03-14T01:30:00.000', '2027-03-14T06:30:00.000Z', 'before spring forward (EST)'],
    ['America/New_York', '2027-03-14T02:30:00.000', '2027-03-14T07:30:00.000Z', 'a time the clock skips: moved on by the hour'],
    ['America/New_York', '2027-03-14T05:00:00.000', '2027-03-14T09:00:00.000Z', 'three hours after spring forward (EDT)'],
    ['America/New_York', '2027-11-07T01:30:00.000', '2027-11-07T05:30:00.000Z', 'a time the clock shows twice: the first (EDT)'],
    ['America/New_York', '2027-11-07T03:00:00.000', '2027-11-07T08:00:00.000Z', 'after fall back (EST)'],
    ['Europe/Berlin', '2027-03-28T01:30:00.000', '2027-03-28T00:30:00.000Z', 'the hour before the change (CET)'],
    ['Europe/Berlin', '2027-10-31T03:30:00.000', '2027-10-31T02:30:00.000Z', 'after the change back (CET)'],
  ])('%s: the range bound %s is %s (%s)', async (timezone, local, instant) => {
    const res = await cubeSql(suite.service, {
      measures: ['Downloads.count'],
      timezone,
      timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [local, local] }],
    }).expect(200);
    expect(res.body.sql.sql[1]).toEqual([instant, instant]);
  });

  it('an unknown time zone is a 400', async () => {
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      timezone: 'Mars/Olympus_Mons',
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day' }],
    });
    expect(res.status).toBe(400);
  });
});

// ---------------------------------------------------------------------------

describe('several time dimensions in one query', () => {
  it('WebEvents.trackTs by day, filtered by a dateRange on WebEvents.ingestTs', async () => {
    const query = {
      measures: ['WebEvents.count'],
      timeDimensions: [
        { dimension: 'WebEvents.trackTs', granularity: 'day' },
        { dimension: 'WebEvents.ingestTs', dateRange: [D(5), D(3)] },
      ],
    };
    const res = await load(suite.service, query).expect(200);
    expect(res.body.query.timeDimensions).toEqual([
      { dimension: 'WebEvents.trackTs', granularity: 'day' },
      { dimension: 'WebEvents.ingestTs', dateRange: [startOfDay(D(5)), endOfDay(D(3))] },
    ]);
    const expected = await buckets(
      `SELECT ${isoDay('toDate(track_ts)')} AS b, count() AS v FROM ${db}.web_events
       WHERE ingest_ts >= '${D(5)} 00:00:00' AND ingest_ts < '${D(2)} 00:00:00' GROUP BY b ORDER BY b`,
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.data).toEqual(asTimeRows('WebEvents.trackTs', 'day', 'WebEvents.count', expected));
  });

  it('two granularities at once: trackTs by day (one day) × ingestTs by hour, ordered by both', async () => {
    const res = await load(suite.service, {
      measures: ['WebEvents.count'],
      timeDimensions: [
        { dimension: 'WebEvents.trackTs', granularity: 'day', dateRange: [D(2)] },
        { dimension: 'WebEvents.ingestTs', granularity: 'hour' },
      ],
      order: [
        ['WebEvents.trackTs', 'asc'],
        ['WebEvents.ingestTs', 'desc'],
      ],
    }).expect(200);
    const expected = await suite.oracle.rows<{ d: string; h: string; v: number }>(
      `SELECT ${isoDay('toDate(track_ts)')} AS d, ${isoTime('toStartOfHour(ingest_ts)')} AS h, count() AS v FROM ${db}.web_events
       WHERE track_ts >= '${D(2)} 00:00:00' AND track_ts < '${D(1)} 00:00:00' GROUP BY d, h ORDER BY d ASC, h DESC`,
    );
    expect(expected.length).toBeGreaterThan(1);
    expect(res.body.data).toEqual(
      expected.map((r) => ({
        'WebEvents.trackTs.day': r.d,
        'WebEvents.trackTs': r.d,
        'WebEvents.ingestTs.hour': r.h,
        'WebEvents.ingestTs': r.h,
        'WebEvents.count': String(Number(r.v)),
      })),
    );
  });

  const daysQuery = (entries: Query[]) => ({ measures: ['Downloads.count'], timeDimensions: entries });
  const daily = { dimension: 'Downloads.ts', granularity: 'day' };
  const ranged = () => ({ dimension: 'Downloads.ts', dateRange: [D(16), D(3)] });
  const expectedDays = async () =>
    asTimeRows(
      'Downloads.ts',
      'day',
      'Downloads.count',
      await buckets(
        `SELECT ${isoDay('toDate(ts)')} AS b, count() AS v FROM ${db}.downloads
         WHERE toDate(ts) BETWEEN '${D(16)}' AND '${D(3)}' GROUP BY b ORDER BY b`,
      ),
    );
  const byBucket = (rows: Row[]) => [...rows].sort((a, b) => String(a['Downloads.ts']).localeCompare(String(b['Downloads.ts'])));

  it('the same member twice, grouped entry first: grouped by day inside the range, in time order', async () => {
    const res = await load(suite.service, daysQuery([daily, ranged()])).expect(200);
    const expected = await expectedDays();
    expect(expected.length).toBeGreaterThan(1);
    expect(res.body.data).toEqual(expected);
  });

  it('the same member twice, range-only entry first: the same groups', async () => {
    const res = await load(suite.service, daysQuery([ranged(), daily])).expect(200);
    expect(byBucket(res.body.data)).toEqual(await expectedDays());
  });

  // Cube 0.33's ClickHouse dialect maps an order member to the FIRST time
  // dimension of that member; a range-only entry has no column, so the ORDER
  // BY term was dropped. src/cube/engine/dialect.ts picks the grouped entry.
  it('the same member twice, range-only entry first: rows still in time order (default order)', async () => {
    const res = await load(suite.service, daysQuery([ranged(), daily])).expect(200);
    expect(res.body.data).toEqual(await expectedDays());
  });

  it('the same member twice, range-only entry first: an explicit order on the member is honoured', async () => {
    const res = await load(suite.service, { ...daysQuery([ranged(), daily]), order: [['Downloads.ts', 'desc']] }).expect(200);
    expect(res.body.data).toEqual((await expectedDays()).reverse());
  });
});

// ---------------------------------------------------------------------------

describe('the "Cube.member.granularity" shorthand in dimensions', () => {
  const shorthandQuery = () => ({
    measures: ['Downloads.count'],
    dimensions: ['Downloads.ts.day', 'Downloads.continent'],
    timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [D(4), D(2)] }],
    order: [
      ['Downloads.ts', 'asc'],
      ['Downloads.continent', 'asc'],
    ],
  });
  const expectedShorthand = async () =>
    (
      await suite.oracle.rows<{ b: string; c: string; v: number }>(
        `SELECT ${isoDay('toDate(ts)')} AS b, continent AS c, count() AS v FROM ${db}.downloads
         WHERE toDate(ts) BETWEEN '${D(4)}' AND '${D(2)}' GROUP BY b, c ORDER BY b, c`,
      )
    ).map((r) => ({ 'Downloads.ts.day': r.b, 'Downloads.ts': r.b, 'Downloads.continent': r.c, 'Downloads.count': String(Number(r.v)) }));
  const byDayAndContinent = (rows: Row[]) =>
    [...rows].sort((a, b) => `${a['Downloads.ts']}|${a['Downloads.continent']}`.localeCompare(`${b['Downloads.ts']}|${b['Downloads.continent']}`));

  it('Downloads.ts.day with a string dimension: becomes a time dimension, grouped as direct SQL groups', async () => {
    const res = await load(suite.service, shorthandQuery()).expect(200);
    // Cube moves the shorthand out of `dimensions` and appends it to `timeDimensions`.
    expect(res.body.query.dimensions).toEqual(['Downloads.continent']);
    expect(res.body.query.timeDimensions).toEqual([
      { dimension: 'Downloads.ts', dateRange: [startOfDay(D(4)), endOfDay(D(2))] },
      { dimension: 'Downloads.ts', granularity: 'day' },
    ]);
    const expected = await expectedShorthand();
    expect(expected.length).toBeGreaterThan(3);
    expect(byDayAndContinent(res.body.data)).toEqual(byDayAndContinent(expected));
    expect(Object.keys(res.body.annotation.timeDimensions).sort()).toEqual(['Downloads.ts', 'Downloads.ts.day']);
    expect(Object.keys(res.body.annotation.dimensions)).toEqual(['Downloads.continent']);
  });

  // Same cause as "the same member twice" above: the shorthand lands after the
  // range-only entry of Downloads.ts (corrected in src/cube/engine/dialect.ts).
  it('Downloads.ts.day with a dateRange on Downloads.ts: the order by day, then continent, is honoured', async () => {
    const res = await load(suite.service, shorthandQuery()).expect(200);
    expect(res.body.data).toEqual(await expectedShorthand());
  });

  it.each(['second', 'minute', 'hour', 'day', 'week', 'month', 'year'])(
    'Downloads.ts.%s answers as timeDimensions with that granularity',
    async (granularity) => {
      const dateRange = [`${D(6)}T06:00:00.000`, `${D(6)}T07:59:59.999`];
      const [short, long] = await Promise.all([
        load(suite.service, {
          measures: ['Downloads.count'],
          dimensions: [`Downloads.ts.${granularity}`],
          timeDimensions: [{ dimension: 'Downloads.ts', dateRange }],
        }).expect(200),
        load(suite.service, {
          measures: ['Downloads.count'],
          timeDimensions: [
            { dimension: 'Downloads.ts', dateRange },
            { dimension: 'Downloads.ts', granularity },
          ],
        }).expect(200),
      ]);
      expect(short.body.data.length).toBeGreaterThan(0);
      expect(short.body.data).toEqual(long.body.data);
      expect(Object.keys(short.body.data[0]).sort()).toEqual(['Downloads.count', 'Downloads.ts', `Downloads.ts.${granularity}`]);
      expect(short.body.query.timeDimensions).toEqual(long.body.query.timeDimensions);
    },
  );

  // Cube 0.33's query schema accepts the shorthand with second … year but not
  // quarter (api-gateway/dist/src/query.js, `dimensionWithTime`), although
  // `timeDimensions` accepts granularity "quarter".
  it('Downloads.ts.quarter is not accepted by Cube 0.33: a 400', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['Downloads.ts.quarter'] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
  });
});

// ---------------------------------------------------------------------------

describe('annotation of the members a query names', () => {
  const specDimension = (name: string) => {
    const d = EXPECTED_SCHEMAS.flatMap((s) => s.dimensions).find((x) => x.name === name);
    if (!d) throw new Error(`${name} is not in the spec`);
    return { title: d.title, shortTitle: d.shortTitle, type: d.type };
  };

  it('dimensions and time dimensions (with and without granularity suffix) carry title, shortTitle and type', async () => {
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'week', dateRange: [D(8), D(2)] }],
      limit: 5,
    }).expect(200);
    expect(res.body.annotation.dimensions).toStrictEqual({ 'Downloads.country': specDimension('Downloads.country') });
    expect(res.body.annotation.timeDimensions).toStrictEqual({
      'Downloads.ts.week': specDimension('Downloads.ts'),
      'Downloads.ts': specDimension('Downloads.ts'),
    });
    expect(specDimension('Downloads.ts').type).toBe('time');
  });

  it('two time dimensions with granularities are both annotated; a range-only one is not', async () => {
    const res = await load(suite.service, {
      measures: ['WebEvents.count'],
      timeDimensions: [
        { dimension: 'WebEvents.trackTs', granularity: 'day', dateRange: [D(2)] },
        { dimension: 'WebEvents.ingestTs', granularity: 'hour' },
      ],
    }).expect(200);
    expect(res.body.annotation.timeDimensions).toStrictEqual({
      'WebEvents.trackTs.day': specDimension('WebEvents.trackTs'),
      'WebEvents.trackTs': specDimension('WebEvents.trackTs'),
      'WebEvents.ingestTs.hour': specDimension('WebEvents.ingestTs'),
      'WebEvents.ingestTs': specDimension('WebEvents.ingestTs'),
    });
    expect(res.body.annotation.dimensions).toStrictEqual({});

    const rangeOnly = await load(suite.service, {
      measures: ['WebEvents.count'],
      timeDimensions: [{ dimension: 'WebEvents.ingestTs', dateRange: [D(2)] }],
    }).expect(200);
    expect(rangeOnly.body.annotation.timeDimensions).toStrictEqual({});
  });

  it('a boolean and a number dimension are annotated with their types', async () => {
    const res = await load(suite.service, {
      measures: ['LinksDashboard.count'],
      dimensions: ['LinksDashboard.isUniqueLinkView'],
      timeDimensions: [{ dimension: 'LinksDashboard.timestamp', granularity: 'month' }],
    }).expect(200);
    expect(res.body.annotation.dimensions).toStrictEqual({ 'LinksDashboard.isUniqueLinkView': specDimension('LinksDashboard.isUniqueLinkView') });
    expect(res.body.annotation.timeDimensions).toStrictEqual({
      'LinksDashboard.timestamp.month': specDimension('LinksDashboard.timestamp'),
      'LinksDashboard.timestamp': specDimension('LinksDashboard.timestamp'),
    });
    const ranks = await load(suite.service, { measures: ['ChannelRanks.count'], dimensions: ['ChannelRanks.rank'], limit: 1 }).expect(200);
    expect(ranks.body.annotation.dimensions).toStrictEqual({ 'ChannelRanks.rank': specDimension('ChannelRanks.rank') });
  });
});

// ---------------------------------------------------------------------------

describe('compareDateRange (queryType multi)', () => {
  const ranges = () => [
    [D(13), D(10)],
    [D(6), D(3)],
  ];
  const query = () => ({
    measures: ['Downloads.count'],
    timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', compareDateRange: ranges() }],
  });
  const expectedFor = async ([from, to]: string[]) =>
    (
      await buckets(
        `SELECT ${isoDay('toDate(ts)')} AS b, count() AS v FROM ${db}.downloads WHERE toDate(ts) BETWEEN '${from}' AND '${to}' GROUP BY b ORDER BY b`,
      )
    ).map((r) => ({
      'Downloads.ts.day': r.b,
      'Downloads.ts': r.b,
      'Downloads.count': String(Number(r.v)),
      compareDateRange: `${startOfDay(from)} - ${endOfDay(to)}`,
    }));

  it('POST answers one result per range, each grouped as direct SQL groups, and a pivot query', async () => {
    const res = await load(suite.service, query(), { multi: true }).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['pivotQuery', 'queryType', 'results', 'slowQuery']);
    expect(res.body.queryType).toBe('compareDateRangeQuery');
    expect(res.body.slowQuery).toBe(false);
    expect(res.body.results).toHaveLength(2);
    for (const [i, range] of ranges().entries()) {
      const result = res.body.results[i];
      expect(Object.keys(result).sort()).toEqual(['annotation', 'data', 'lastRefreshTime', 'query', 'slowQuery', 'total']);
      expect(result.query.measures).toEqual(['Downloads.count']);
      expect(result.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [startOfDay(range[0]), endOfDay(range[1])] }]);
      expect(result.data).toEqual(await expectedFor(range));
      expect(result.data).toHaveLength(4);
      expect(Object.keys(result.annotation.timeDimensions).sort()).toEqual(['Downloads.ts', 'Downloads.ts.day']);
    }
    expect(res.body.pivotQuery.queryType).toBe('compareDateRangeQuery');
    expect(res.body.pivotQuery.measures).toEqual(['Downloads.count']);
    expect(res.body.pivotQuery.dimensions).toEqual(['compareDateRange']);
  });

  it('relative ranges are resolved per range ("this week" vs "last week")', async () => {
    const before = new Date();
    const res = await load(
      suite.service,
      {
        measures: ['Downloads.count'],
        timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['this week', 'last week'] }],
      },
      { multi: true },
    ).expect(200);
    const today = localDate(before, 'UTC');
    const monday = addDays(today, 1 - isoWeekday(today));
    const weeks = [
      [monday, addDays(monday, 6)],
      [addDays(monday, -7), addDays(monday, -1)],
    ];
    expect(res.body.results).toHaveLength(2);
    for (const [i, [from, to]] of weeks.entries()) {
      const result = res.body.results[i];
      expect(result.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: [startOfDay(from), endOfDay(to)] }]);
      const expected = await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) BETWEEN '${from}' AND '${to}'`);
      expect(result.data).toEqual([{ 'Downloads.count': String(expected), compareDateRange: `${startOfDay(from)} - ${endOfDay(to)}` }]);
    }
  });

  it('GET /v1/data/load?query=<json>&queryType=multi answers as POST does', async () => {
    const [post, get] = await Promise.all([
      load(suite.service, query(), { multi: true }).expect(200),
      load(suite.service, query(), { multi: true, get: true }).expect(200),
    ]);
    expect(get.body.queryType).toBe('compareDateRangeQuery');
    expect(get.body.results.map((r: { data: Row[] }) => r.data)).toEqual(post.body.results.map((r: { data: Row[] }) => r.data));
    expect(get.body.results.map((r: { query: Query }) => r.query.timeDimensions)).toEqual(
      post.body.results.map((r: { query: Query }) => r.query.timeDimensions),
    );
  });

  it('without queryType multi, a compareDateRange query is a 400 (POST and GET)', async () => {
    const post = await load(suite.service, query());
    expect(post.status).toBe(400);
    expect(post.body.code).toBe('invalid_query');
    const get = await load(suite.service, query(), { get: true });
    expect(get.status).toBe(400);
    expect(get.body.code).toBe('invalid_query');
  });

  it('an ordinary query with queryType multi answers one regular result', async () => {
    const res = await load(
      suite.service,
      { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [D(2)] }] },
      { multi: true },
    ).expect(200);
    expect(res.body.queryType).toBe('regularQuery');
    expect(res.body.results).toHaveLength(1);
    expect(dataCount(res.body.results[0], 'Downloads.count')).toBe(await count(`SELECT count() FROM ${db}.downloads WHERE toDate(ts) = '${D(2)}'`));
  });
});

// ---------------------------------------------------------------------------

describe('ranges and buckets on the hour, which the dialect writes on toStartOfHour(<column>) for the projections', () => {
  const sqlOf = async (query: Query) => (await cubeSql(suite.service, query).expect(200)).body.sql.sql[0] as string;

  it('a range from an hour to the last millisecond of an hour counts the DateTime64 events late in its last hour, in hour buckets', async () => {
    const [{ t }] = await suite.oracle.rows<{ t: string }>(
      // The event latest in its hour: the range's last millisecond must still count it.
      `SELECT toString(track_ts) AS t FROM ${db}.web_events WHERE toMillisecond(track_ts) > 0 ORDER BY track_ts - toStartOfHour(track_ts) DESC, track_ts LIMIT 1`,
    );
    const hour = t.slice(0, 13); // "YYYY-MM-DD HH"
    const from = new Date(Date.parse(`${hour.replace(' ', 'T')}:00:00Z`) - 5 * 3_600_000).toISOString().slice(0, 13);
    const query = {
      measures: ['WebEvents.count'],
      timeDimensions: [{ dimension: 'WebEvents.trackTs', granularity: 'hour', dateRange: [`${from}:00:00.000`, `${hour.replace(' ', 'T')}:59:59.999`] }],
    };
    expect(await sqlOf(query)).toContain('toStartOfHour(`web_events`.track_ts) >= ');
    const res = await load(suite.service, query).expect(200);
    const expected = await buckets(
      `SELECT ${isoTime('toStartOfHour(track_ts)')} AS b, count() AS v FROM ${db}.web_events
       WHERE track_ts >= '${from.replace('T', ' ')}:00:00.000' AND track_ts <= '${hour}:59:59.999' GROUP BY b ORDER BY b`,
    );
    expect(expected[expected.length - 1].b).toBe(`${hour.replace(' ', 'T')}:00:00.000`);
    expect(res.body.data).toEqual(asTimeRows('WebEvents.trackTs', 'hour', 'WebEvents.count', expected));
  });

  it('America/New_York: day buckets of a range across the DST change are New York days', async () => {
    const tz = 'America/New_York';
    const range = [D(29), D(0)];
    const query = { measures: ['Downloads.count'], timezone: tz, timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: range }] };
    expect(await sqlOf(query)).toContain(`toStartOfDay(toTimeZone(toDateTime(toStartOfHour(\`downloads\`.ts)), '${tz}'), '${tz}')`);
    const res = await load(suite.service, query).expect(200);
    const expected = await buckets(
      `SELECT ${isoTime(`toStartOfDay(toTimeZone(ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.downloads
       WHERE toDate(toTimeZone(ts, '${tz}')) BETWEEN '${D(29)}' AND '${D(0)}' GROUP BY b ORDER BY b`,
    );
    expect(expected.length).toBeGreaterThan(20);
    expect(res.body.data).toEqual(asTimeRows('Downloads.ts', 'day', 'Downloads.count', expected));
  });

  it('Asia/Kolkata (UTC+05:30): a range of local days keeps the raw column, and its day buckets are local days', async () => {
    const tz = 'Asia/Kolkata';
    const query = { measures: ['Downloads.count'], timezone: tz, timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [D(6), D(4)] }] };
    expect(await sqlOf(query)).not.toContain('toStartOfHour');
    const res = await load(suite.service, query).expect(200);
    const expected = await buckets(
      `SELECT ${isoTime(`toStartOfDay(toTimeZone(ts, '${tz}'))`)} AS b, count() AS v FROM ${db}.downloads
       WHERE toDate(toTimeZone(ts, '${tz}')) BETWEEN '${D(6)}' AND '${D(4)}' GROUP BY b ORDER BY b`,
    );
    expect(res.body.data).toEqual(asTimeRows('Downloads.ts', 'day', 'Downloads.count', expected));
  });
});
