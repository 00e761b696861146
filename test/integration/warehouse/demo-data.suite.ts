import { ddlStatements } from '../../../src/warehouse/ddl';
import { loadDemoData } from '../../../src/warehouse/demo-data';
import { DATABASE, TEST_DEMO, TEST_END_DATE } from '../support/constants';
import { openOracle, type Oracle } from '../support/service';
import { USER_AGENTS } from '../derive/support';

let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

const db = DATABASE;
const CALENDAR_END = '2026-04-01';
/** Every time column of the six tables. */
const TIME_COLUMNS: Record<string, string[]> = {
  channel_ranks: ['snapshot_ts'],
  episode_ranks: ['snapshot_ts'],
  podcast_events: ['ts'],
  downloads: ['ts'],
  link_views: ['ts'],
  web_events: ['track_ts', 'ingest_ts'],
};
const endDay = TEST_END_DATE.toISOString().slice(0, 10);
/** User agents the IAB rules drop in this dataset: its robots, and the Apple Watch duplicates (v2.3 5.5.2 item 7). */
const BOT_UA = `match(raw_ua, '(?i)(bot|crawler|spider|curl/|python-requests|wget)|^atc/.*watchOS')`;

describe('demo data', () => {
  it('is the same rows for the same seed, scale and calendar, whether the big steps run as one statement or in parts, and wherever the window ends', async () => {
    const statements: Record<string, number> = {};
    const build = async (database: string, chunkRows?: number, endDate = CALENDAR_END) => {
      for (const statement of ddlStatements(database)) await oracle.rows(statement);
      statements[database] = 0;
      await loadDemoData(
        (sql) => {
          statements[database] += 1;
          return oracle.rows(sql).then(() => undefined);
        },
        {
          database,
          seed: 3,
          scale: 0.005,
          days: 14,
          endDate,
          calendarEndDate: CALENDAR_END,
          chunkRows,
          downloads: { settings: { rules: 'iab', window: 'calendar' }, userAgents: USER_AGENTS },
        },
      );
    };
    // Each table's rows with its times moved back by `days`, hashed.
    const fingerprint = async (database: string, days = 0) =>
      Promise.all(
        Object.entries(TIME_COLUMNS).map(([t, columns]) => {
          const moved = columns.map((c) => `${c} - INTERVAL ${days} DAY AS ${c}`).join(', ');
          return oracle.rows(`SELECT '${t}' AS t, count() AS n, sum(cityHash64(* REPLACE (${moved}))) AS h FROM ${database}.${t}`);
        }),
      );
    try {
      await build('determinism_a');
      // Parts of about 1,000 rows: listener requests and downloads each take several statements.
      await build('determinism_b', 1_000);
      expect(statements.determinism_a).toBe(9);
      expect(statements.determinism_b).toBeGreaterThan(9 + 4);
      const [a, b] = [await fingerprint('determinism_a'), await fingerprint('determinism_b')];
      expect(a).toEqual(b);
      for (const [row] of a) expect(Number((row as { n: string }).n)).toBeGreaterThan(0);
      // A window ending 700 days later, across 29 February 2028 and a month's end: the same rows, 700 days later.
      await build('determinism_c', undefined, '2028-03-01');
      expect(await fingerprint('determinism_c', 700)).toEqual(a);
    } finally {
      for (const database of ['determinism_a', 'determinism_b', 'determinism_c']) await oracle.rows(`DROP DATABASE IF EXISTS ${database}`);
    }
    // Dozens of small derivation statements, each compiling the user-agent list's patterns.
  }, 180_000);

  it('ends its window today (UTC), so recent ranges find rows', async () => {
    const [row] = await oracle.rows<{ first: string; last: string; recent: string }>(`
      SELECT toString(min(toDate(ts))) AS first, toString(max(toDate(ts))) AS last,
             countIf(ts >= toDateTime('${endDay}', 'UTC') - INTERVAL 6 DAY) AS recent
      FROM ${db}.downloads`);
    expect(row.last).toBe(endDay);
    const expectedFirst = new Date(Date.parse(`${endDay}T00:00:00Z`) - (TEST_DEMO.days - 1) * 86_400_000).toISOString().slice(0, 10);
    expect(row.first >= expectedFirst).toBe(true);
    expect(Number(row.recent)).toBeGreaterThan(0);
  });

  it('derives downloads from raw requests the IAB way', async () => {
    const derived = await oracle.value(`
      SELECT count() FROM (
        SELECT 1 FROM ${db}.podcast_events
        WHERE byte_range_larger_one AND NOT ip_blacklisted AND NOT ${BOT_UA}
        GROUP BY ip4, raw_ua, url, toDate(ts))`);
    expect(await oracle.value(`SELECT count() FROM ${db}.downloads`)).toBe(derived);
    expect(await oracle.value(`SELECT count() - uniqExact(ip4, raw_ua, url, toDate(ts)) FROM ${db}.downloads`)).toBe(0);
    expect(await oracle.value(`SELECT countIf(${BOT_UA}) FROM ${db}.downloads`)).toBe(0);
  });

  it('has probes, bots, blacklisted addresses and repeats among the raw requests', async () => {
    const [row] = await oracle.rows<Record<string, string>>(`
      SELECT countIf(byte_range = 'bytes=0-1') AS probes, countIf(${BOT_UA}) AS bots,
             countIf(ip_blacklisted) AS blacklisted, count() - uniqExact(ip4, raw_ua, url, toDate(ts)) AS repeats,
             countIf(byte_range_larger_one = match(byte_range, '^bytes=0-[01]$')) AS inconsistent
      FROM ${db}.podcast_events`);
    for (const key of ['probes', 'bots', 'blacklisted', 'repeats']) expect(Number(row[key])).toBeGreaterThan(0);
    expect(Number(row.inconsistent)).toBe(0);
  });

  it('gives Apple Podcasts and Spotify their realistic shares of downloads', async () => {
    // The OPAWG list names Apple's streaming requests by the framework they come from, AppleCoreMedia.
    const [row] = await oracle.rows<{ apple: number; spotify: number }>(`
      SELECT countIf(parsed_ua IN ('Apple Podcasts', 'AppleCoreMedia')) / count() AS apple, countIf(parsed_ua = 'Spotify') / count() AS spotify
      FROM ${db}.downloads`);
    expect(row.apple).toBeGreaterThan(0.35);
    expect(row.apple).toBeLessThan(0.55);
    expect(row.spotify).toBeGreaterThan(0.18);
    expect(row.spotify).toBeLessThan(0.32);
  });

  it('ranks every chart 1..N without gaps or ties', async () => {
    expect(
      await oracle.value(`
        SELECT count() FROM (
          SELECT snapshot_ts, platform, country_code, category
          FROM ${db}.channel_ranks
          GROUP BY ALL
          HAVING min(rank) != 1 OR max(rank) != count() OR uniqExact(rank) != count())`),
    ).toBe(0);
  });

  it('flags exactly the first view of a link by a viewer as unique', async () => {
    expect(
      await oracle.value(`
        SELECT count() FROM (
          SELECT link, link_viewer, countIf(is_unique) AS flagged, argMin(is_unique, ts) AS first_flagged
          FROM ${db}.link_views GROUP BY link, link_viewer
          HAVING flagged != 1 OR NOT first_flagged)`),
    ).toBe(0);
  });

  it('ingests web events no earlier than they were tracked, and some downloaders convert', async () => {
    expect(await oracle.value(`SELECT countIf(ingest_ts < track_ts) FROM ${db}.web_events`)).toBe(0);
    expect(
      await oracle.value(`
        SELECT uniqExact(w.ip4) FROM ${db}.web_events AS w
        INNER JOIN ${db}.downloads AS d ON w.ip4 = d.ip4
        WHERE w.se_category = 'conversion' AND w.track_ts >= d.ts`),
    ).toBeGreaterThan(0);
  });
});
