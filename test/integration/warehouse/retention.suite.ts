/**
 * Retention (RETENTION_*_DAYS) and listeners' addresses (ADDRESS_RETENTION_DAYS)
 * on chDB, with a running service over a database of its own. Rows are
 * placed by hand at whole days before the engine's clock, read once (NOW),
 * far from any boundary, so the verdicts are the same on every date; the
 * expected counts are worked out from these rows by hand and checked against
 * hand-written SQL.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { parseConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { rederive } from '../../../src/warehouse/derive/rederive';
import { loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { ensureImportTables, importFile, ImportRefused } from '../../../src/warehouse/import/import';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { AddressesReduced, enforceRetention } from '../../../src/warehouse/retention';
import { dataOf, load } from '../support/api';
import { startService, testDataDir, type TestService } from '../support/service';

const DB = `retention_${process.pid}`;
const DAY = 86_400;
const ENV = { RETENTION_RAW_DAYS: '30', RETENTION_DERIVED_DAYS: '30', RETENTION_CHARTS_DAYS: '365', ADDRESS_RETENTION_DAYS: '5' };
const SCRATCH = mkdtempSync(path.join(os.tmpdir(), 'retention-suite-'));

let connection: ReturnType<typeof createChdbConnection>;
let client: ClickHouseClient;
/** The engine's clock at the start, epoch seconds. */
let NOW: number;

const rows = async <T = Record<string, unknown>>(query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<T>();
const value = async (query: string) => Number(Object.values((await rows<Record<string, unknown>>(query))[0])[0]);
const at = (daysAgo: number) => `toDateTime(${NOW - daysAgo * DAY}, 'UTC')`;

/**
 * By hand: downloads and requests 40 days ago (past 30 days), 20 days ago
 * (kept, addresses past 5 days) and 1 day ago (kept, addresses whole); a
 * page view at each download, from its address; chart ranks 400 and 2 days
 * ago (365 days kept). The listener of 40 days ago has no later row.
 */
const PLACED = [
  { daysAgo: 40, ip4: '203.0.113.40', ip: '::ffff:203.0.113.40', n: 3 },
  { daysAgo: 20, ip4: '192.0.2.17', ip: '::ffff:192.0.2.17', n: 4 },
  { daysAgo: 20, ip4: '0.0.0.0', ip: '2001:db8:1:2::5', n: 1 },
  { daysAgo: 1, ip4: '198.51.100.9', ip: '::ffff:198.51.100.9', n: 2 },
];

async function placeRows(): Promise<void> {
  for (const statement of ddlStatements(DB)) await client.command({ query: statement });
  for (const { daysAgo, ip4, ip, n } of PLACED) {
    const times = Array.from({ length: n }, (_, i) => `${at(daysAgo)} + ${i * 60}`);
    await client.command({
      query: `INSERT INTO ${DB}.downloads (account_id, ts, ip, ip4, token, url) SELECT 'acme', arrayJoin([${times.join(', ')}]), toIPv6('${ip}'), toIPv4('${ip4}'), 'abc123', 'https://media.example.com/ep.mp3'`,
    });
    await client.command({
      query: `INSERT INTO ${DB}.podcast_events (account_id, request_id, ts, ip, ip4, token) SELECT 'acme', generateUUIDv4(number), arrayJoin([${times.join(', ')}]), toIPv6('${ip}'), toIPv4('${ip4}'), 'abc123' FROM numbers(1)`,
    });
    await client.command({
      query: `INSERT INTO ${DB}.web_events (account_id, track_ts, ip, ip4) SELECT 'acme', arrayJoin([${times.join(', ')}]), toIPv6('${ip}'), toIPv4('${ip4}')`,
    });
  }
  await client.command({
    query: `INSERT INTO ${DB}.link_views (account_id, ts, link) VALUES ('acme', ${at(40)}, 'l1'), ('acme', ${at(10)}, 'l1'), ('acme', ${at(10)}, 'l2')`,
  });
  for (const table of ['channel_ranks', 'episode_ranks']) {
    await client.command({
      query: `INSERT INTO ${DB}.${table} (snapshot_ts, platform, rank) VALUES (${at(400)}, 'apple', 1), (${at(2)}, 'apple', 1), (${at(2)}, 'apple', 2)`,
    });
  }
}

beforeAll(async () => {
  connection = createChdbConnection({ path: testDataDir() });
  client = createClient({ connection: connection as never });
  NOW = await value('SELECT toUnixTimestamp(now())');
  await placeRows();
});
afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB} SYNC` });
  await connection.close();
  rmSync(SCRATCH, { recursive: true, force: true });
});

/** Each cube's count over all time, as the service answers it. */
async function counts(service: TestService): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const measure of [
    'Downloads.count',
    'DownloadEvents.count',
    'PodcastEvents.count',
    'WebEvents.count',
    'LinksBasicAnalytics.linkViewCount',
    'ChannelRanks.count',
    'EpisodeRanks.count',
  ]) {
    const [row] = await dataOf<Record<string, string>>(load(service, { measures: [measure] }));
    out[measure] = Number(row?.[measure] ?? 0);
  }
  return out;
}

/** The same counts by hand-written SQL over the rows a table keeps. */
async function countsBySql(raw: number, derived: number, charts: number): Promise<Record<string, number>> {
  const kept = (table: string, column: string, days: number) =>
    value(`SELECT count() FROM ${DB}.${table} WHERE ${column} > now() - INTERVAL ${days} DAY - INTERVAL 1 HOUR`);
  return {
    'Downloads.count': await kept('downloads', 'ts', derived),
    'DownloadEvents.count': await kept('downloads', 'ts', derived),
    'PodcastEvents.count': await kept('podcast_events', 'ts', raw),
    'WebEvents.count': await kept('web_events', 'track_ts', raw),
    'LinksBasicAnalytics.linkViewCount': await kept('link_views', 'ts', derived),
    'ChannelRanks.count': await kept('channel_ranks', 'snapshot_ts', charts),
    'EpisodeRanks.count': await kept('episode_ranks', 'snapshot_ts', charts),
  };
}

/** The funnel's steps over all time, as the service answers them. */
async function funnel(service: TestService): Promise<Record<string, number>> {
  const answer = await dataOf<Record<string, string>>(
    load(service, { measures: ['WebEventsFromPodcastFunnel.conversions'], dimensions: ['WebEventsFromPodcastFunnel.step'] }),
  );
  return Object.fromEntries(answer.map((row) => [row['WebEventsFromPodcastFunnel.step'], Number(row['WebEventsFromPodcastFunnel.conversions'])]));
}

/** By hand: three listeners kept (192.0.2.17, 2001:db8:1:2::/64, 198.51.100.9), each with a page view at their download; 203.0.113.40's rows are past. */
const FUNNEL_BY_HAND = { 'Podcast Download': 3, 'Website Visit': 3, Conversion: 0 };

const KEPT_BY_HAND = {
  'Downloads.count': 7,
  'DownloadEvents.count': 7,
  'PodcastEvents.count': 7,
  'WebEvents.count': 7,
  'LinksBasicAnalytics.linkViewCount': 2,
  'ChannelRanks.count': 2,
  'EpisodeRanks.count': 2,
};

describe('rows past their retention', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ CLICKHOUSE_DATABASE: DB, ...ENV });
  });
  afterAll(() => service.close());

  it('are counted by no answer while the engine still holds them', async () => {
    // No TTL yet: every row placed is still stored.
    expect(await value(`SELECT count() FROM ${DB}.downloads`)).toBe(10);
    const answered = await counts(service);
    expect(answered).toEqual(KEPT_BY_HAND);
    expect(answered).toEqual(await countsBySql(30, 30, 365));
    expect(await funnel(service)).toEqual(FUNNEL_BY_HAND);
  });

  it('are removed by the TTL that init and the start set, which is logged and changed with the setting', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', (line) => lines.push(line));
    const settings = parseConfig({ CLICKHOUSE_DATABASE: DB, ...ENV, REJECTS_DIR: SCRATCH });
    await enforceRetention({ client, database: DB, settings, logger });
    const changed = lines.map((l) => JSON.parse(l) as { msg: string; table?: string }).filter((l) => l.msg === 'retention changed');
    expect(changed.map((l) => l.table).sort()).toEqual([
      'channel_ranks',
      'downloads',
      'episode_ranks',
      'link_events',
      'link_views',
      'podcast_events',
      'web_events',
    ]);
    // Gone from the tables themselves, by direct SQL.
    for (const [table, kept] of [
      ['downloads', 7],
      ['podcast_events', 7],
      ['web_events', 7],
      ['link_views', 2],
      ['channel_ranks', 2],
      ['episode_ranks', 2],
    ] as const) {
      expect([table, await value(`SELECT count() FROM ${DB}.${table}`)]).toEqual([table, kept]);
    }
    expect(await counts(service)).toEqual(KEPT_BY_HAND);
    expect(await funnel(service)).toEqual(FUNNEL_BY_HAND);
    // The same settings again change nothing; 0 takes the TTL away.
    lines.length = 0;
    await enforceRetention({ client, database: DB, settings, logger });
    expect(lines.filter((l) => l.includes('retention changed'))).toEqual([]);
    await enforceRetention({ client, database: DB, settings: { ...settings, retention: { ...settings.retention, chartsDays: 0 } }, logger });
    const engines = await rows<{ name: string; engine_full: string }>(
      `SELECT name, engine_full FROM system.tables WHERE database = '${DB}' AND name IN ('channel_ranks', 'downloads')`,
    );
    expect(Object.fromEntries(engines.map((e) => [e.name, / TTL /.test(e.engine_full)]))).toEqual({ channel_ranks: false, downloads: true });
  });
});

describe('addresses past ADDRESS_RETENTION_DAYS', () => {
  it('are cut to their network in every table, and every download is still counted', async () => {
    const service = await startService({ CLICKHOUSE_DATABASE: DB, ...ENV });
    try {
      const before = await counts(service);
      // What the first describe left: the rows of 20 and 1 days ago. Reduced at 5 days: those of 20 days ago.
      await enforceRetention({ client, database: DB, settings: parseConfig({ CLICKHOUSE_DATABASE: DB, ...ENV, REJECTS_DIR: SCRATCH }) });
      for (const [table, time] of [
        ['downloads', 'ts'],
        ['podcast_events', 'ts'],
        ['web_events', 'track_ts'],
      ]) {
        const stored = await rows<{ ip4: string; ip: string; old: number; n: number }>(
          `SELECT toString(ip4) AS ip4, toString(ip) AS ip, ${time} < now() - INTERVAL 5 DAY AS old, count() AS n FROM ${DB}.${table} GROUP BY ip4, ip, old ORDER BY old, ip`,
        );
        expect([table, stored]).toEqual([
          table,
          [
            { ip4: '198.51.100.9', ip: '::ffff:198.51.100.9', old: 0, n: 2 },
            { ip4: '0.0.0.0', ip: '2001:db8:1::', old: 1, n: 1 },
            { ip4: '192.0.2.0', ip: '::ffff:192.0.2.0', old: 1, n: 4 },
          ],
        ]);
      }
      expect(await counts(service)).toEqual(before);
      expect(before['Downloads.count']).toBe(7);
      // Downloads and page views were cut alike: the funnel still follows each network's download to its visit.
      expect(await funnel(service)).toEqual(FUNNEL_BY_HAND);
    } finally {
      await service.close();
    }
  });

  it('refuse to derive downloads again over their span, saying why', async () => {
    const derivation = { settings: { rules: 'iab' as const, window: 'calendar' as const }, userAgents: loadUserAgents(undefined), addressDays: 5 };
    await expect(rederive(client, DB, derivation, NOW - 20 * DAY, NOW)).rejects.toThrow(AddressesReduced);
    await expect(rederive(client, DB, derivation, NOW - 20 * DAY, NOW)).rejects.toThrow(/ADDRESS_RETENTION_DAYS \(5 days/);
    expect(await value(`SELECT count() FROM ${DB}.downloads`)).toBe(7);
  });

  it('refuse an import of requests over their span; its rejects are written owner-only and removed after the period', async () => {
    await ensureImportTables(client, DB);
    const file = path.join(SCRATCH, 'old.ndjson');
    const line = (daysAgo: number) =>
      JSON.stringify({
        time: new Date((NOW - daysAgo * DAY) * 1000).toISOString(),
        ip: '203.0.113.5',
        method: 'GET',
        url: `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`,
        userAgent: 'AppleCoreMedia/1.0.0',
      });
    writeFileSync(file, `${line(20)}\nnot json\n`);
    const rejectsDir = path.join(SCRATCH, 'rejects');
    const options = {
      database: DB,
      source: 'requests',
      format: 'ndjson',
      account: 'acme',
      maxBadRows: 1,
      ignoreUnknown: false,
      trackingPrefix: TRACKING_PREFIX,
      rejectsDir,
      derivation: { settings: { rules: 'iab' as const, window: 'calendar' as const }, userAgents: loadUserAgents(undefined), addressDays: 5 },
      engineReadsFiles: true,
    };
    const refusal = await importFile(client, file, options).then(
      (summary) => summary,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(ImportRefused);
    expect((refusal as Error).message).toMatch(
      /old\.ndjson: downloads from .* on cannot be derived again: addresses older than ADDRESS_RETENTION_DAYS \(5 days/,
    );
    expect(await value(`SELECT count() FROM ${DB}.podcast_events WHERE ip4 = toIPv4('203.0.113.5')`)).toBe(0);
    const [rejects] = readdirSync(rejectsDir);
    expect(rejects).toBe('old.ndjson.rejects.ndjson');
    expect(statSync(rejectsDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(rejectsDir, rejects)).mode & 0o777).toBe(0o600);
    // Kept within the period, removed after it: its age counted on the clock the service reads (the test's, TEST_NOW).
    const settings = parseConfig({ CLICKHOUSE_DATABASE: DB, ...ENV, REJECTS_DIR: rejectsDir });
    const now = new Date();
    utimesSync(path.join(rejectsDir, rejects), now, now);
    await enforceRetention({ client, database: DB, settings });
    expect(readdirSync(rejectsDir)).toEqual([rejects]);
    const sixDaysAgo = new Date(Date.now() - 6 * DAY * 1000);
    utimesSync(path.join(rejectsDir, rejects), sixDaysAgo, sixDaysAgo);
    await enforceRetention({ client, database: DB, settings });
    expect(readdirSync(rejectsDir)).toEqual([]);
  });
});
