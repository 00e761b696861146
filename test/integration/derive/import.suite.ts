import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { ddlStatements } from '../../../src/warehouse/ddl';
import type { DownloadRuleSettings } from '../../../src/warehouse/derive/rules';
import { parseConfig } from '../../../src/config';
import { deriveAll } from '../../../src/warehouse/derive/rederive';
import { BUILT_IN_USER_AGENTS, compileUserAgentPatterns, compileUserAgentPatternsSql, loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { placesFromDatabase } from '../../../src/warehouse/geo/places';
import { ensureImportTables, importFile, ImportRefused, type ImportOptions } from '../../../src/warehouse/import/import';
import { REQUEST_ID_NAMESPACE } from '../../../src/warehouse/import/sources/requests';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { testDataDir } from '../support/service';
import { OPAWG_DIR, OPAWG_LISTS, USER_AGENTS } from './support';
import { CLOUDFRONT_FIELDS, cloudFrontField } from '../../support/cloudfront';

/**
 * The sample files in samples/ imported into chDB and derived. The sample's
 * nine requests are chosen so each rule decides one of them (see the
 * expected counts below): a repeat the same day, a 0-1 probe, two IPv6
 * addresses of one /64, a bot, a HEAD, a 304, and the first listener again
 * 23 hours later.
 */
const SAMPLES = path.resolve(__dirname, '..', '..', '..', 'samples');
// Opened by the suite's hook rather than when jest collects it: in a jest file of several suites a session opened at
// collection stays open through every suite before this one.
let connection: ReturnType<typeof createChdbConnection>;
let client: ClickHouseClient;
beforeAll(async () => {
  connection = createChdbConnection({ path: testDataDir() });
  client = createClient({ connection: connection as never });
  // A process compiles the pattern sets in its first import only: compiled before any, the imports' statements compare alike.
  await compileUserAgentPatterns(client, USER_AGENTS);
});
afterAll(() => connection.close());
// Every file, rejects file and directory the suite writes, removed after its last test (each import writes its rejects).
const SCRATCH = mkdtempSync(path.join(os.tmpdir(), 'import-suite-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

let databases = 0;
async function freshDatabase(): Promise<string> {
  const database = `import_${process.pid}_${(databases += 1)}`;
  for (const statement of ddlStatements(database)) await client.command({ query: statement });
  return database;
}

// chDB reads the file itself; a server is sent its lines. chDB takes the lines as a server would, so both ways are tested here.
let engineReadsFiles = true;

/** An NDJSON file of one request a row: each row's fields over a GET of one episode by one app at 10:0<row>. */
function requestsFile(name: string, rows: Record<string, unknown>[]): string {
  const file = path.join(mkdtempSync(path.join(SCRATCH, `import-${name}-`)), `${name}.ndjson`);
  const base = (i: number) => ({
    time: `2026-01-05T10:${String(i).padStart(2, '0')}:00Z`,
    method: 'GET',
    url: `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`,
    userAgent: 'AppleCoreMedia/1.0.0',
  });
  writeFileSync(file, rows.map((row, i) => JSON.stringify({ ...base(i), ...row })).join('\n'));
  return file;
}

function options(database: string, settings: DownloadRuleSettings, extra: Partial<ImportOptions> = {}): ImportOptions {
  return {
    database,
    format: 'ndjson',
    account: 'acme',
    maxBadRows: 0,
    ignoreUnknown: false,
    trackingPrefix: TRACKING_PREFIX,
    rejectsDir: mkdtempSync(path.join(SCRATCH, 'rejects-')),
    derivation: { settings, userAgents: USER_AGENTS },
    engineReadsFiles,
    ...extra,
  };
}

/** The lines of an import's reject file. */
function rejectsOf(summary: { rejectFile?: string }): { file: string; line: number; reason: string }[] {
  return readFileSync(summary.rejectFile as string, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { file: string; line: number; reason: string });
}

async function count(sql: string): Promise<number> {
  return Number((await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string }>())[0].n);
}

describe.each([
  ['chDB reads the file', true],
  ['its lines sent as to a server', false],
])('%s', (_, readsFiles) => {
  beforeAll(() => {
    engineReadsFiles = readsFiles;
  });
  afterAll(() => {
    engineReadsFiles = true;
  });

  describe('import of samples/requests.ndjson', () => {
    const cases: [DownloadRuleSettings, number][] = [
      // rows 1, 4, 9: the repeat, the probe, the same /64, the bot, HEAD and 304 drop; a new UTC day counts again
      [{ rules: 'iab', window: 'calendar' }, 3],
      // row 9 is 23 h after row 1 opened the window
      [{ rules: 'iab', window: 'first-touch' }, 2],
      // row 9 is 22 h after row 2, the last request
      [{ rules: 'iab', window: 'last-touch' }, 2],
      // OP3 keeps the lone probe (first-two), keys on the full IPv6 address, counts the 304: rows 1, 3, 4, 5, 8, 9
      [{ rules: 'op3', window: 'calendar' }, 6],
    ];
    for (const [settings, expected] of cases) {
      describe(`${settings.rules} ${settings.window}`, () => {
        const file = path.join(SAMPLES, 'requests.ndjson');
        const rows = async (database: string, table: string, columns: string) =>
          (await client.query({ query: `SELECT ${columns} FROM ${database}.${table} ORDER BY ALL`, format: 'JSONEachRow' })).json();
        const eventColumns = 'account_id, ts, ip, url, raw_ua, parsed_ua, token, byte_range, method, status';
        const downloadColumns = 'account_id, ts, ip, token, url, referer, raw_ua, parsed_ua, os_name, device_type, tags';
        // The file imported whole once, for both tests: the first checks that import and a repeat of it, the second
        // compares an import in runs of three rows with its rows as they were before the repeat. Each made an identical
        // import of its own before.
        let whole: string;
        let first: Awaited<ReturnType<typeof importFile>>;
        let wholeRows: { events: unknown[]; downloads: unknown[] };
        beforeAll(async () => {
          whole = await freshDatabase();
          first = await importFile(client, file, options(whole, settings));
          wholeRows = { events: await rows(whole, 'podcast_events', eventColumns), downloads: await rows(whole, 'downloads', downloadColumns) };
        });

        it(`${expected} downloads, and importing the file again adds nothing`, async () => {
          expect(first).toMatchObject({ outcome: 'imported', rowsRead: 9, imported: 9, rejected: 0, downloads: expected });
          expect(await count(`SELECT count() AS n FROM ${whole}.downloads WHERE account_id = 'acme'`)).toBe(expected);
          const again = await importFile(client, file, options(whole, settings));
          expect(again).toMatchObject({ outcome: 'already imported', imported: 0 });
          expect(await count(`SELECT count() AS n FROM ${whole}.podcast_events`)).toBe(9);
          expect(await count(`SELECT count() AS n FROM ${whole}.downloads`)).toBe(expected);
        });

        it('in statements of at most 3 rows, the same requests and downloads as in one', async () => {
          const cut = await freshDatabase();
          const many = await importFile(client, file, options(cut, settings, { statementRows: 3 }));
          expect(many).toMatchObject({ outcome: 'imported', rowsRead: 9, imported: 9, rejected: 0, downloads: expected });
          // Nine lines in runs of three: three validation statements where there was one. The first day's eight requests, of
          // one show, in three parts by listener: IAB's listener is the /64, and hashed by address its two IPv6 requests
          // would fall in two parts and count twice.
          expect(many.statements).toBeGreaterThanOrEqual(first.statements + 2 + 2);
          expect(await rows(cut, 'podcast_events', eventColumns)).toEqual(wholeRows.events);
          expect(await rows(cut, 'downloads', downloadColumns)).toEqual(wholeRows.downloads);
          expect(await count(`SELECT count() AS n FROM system.tables WHERE database = '${cut}_import'`)).toBe(0);
        });
      });
    }
  });

  describe('import of samples/requests.csv (the same requests)', () => {
    it('derives the same 3 IAB calendar downloads; an unknown column refuses the file', async () => {
      const database = await freshDatabase();
      const summary = await importFile(client, path.join(SAMPLES, 'requests.csv'), options(database, { rules: 'iab', window: 'calendar' }, { format: 'csv' }));
      expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 9, imported: 9, rejected: 0, downloads: 3 });
      const dir = mkdtempSync(path.join(SCRATCH, 'csv-'));
      const bad = path.join(dir, 'bad.csv');
      writeFileSync(bad, 'time,ip,colour\n2026-01-05T08:00:00Z,203.0.113.5,blue\n');
      await expect(importFile(client, bad, options(database, { rules: 'iab', window: 'calendar' }, { format: 'csv' }))).rejects.toThrow(
        /unknown column colour/,
      );
    });
  });

  describe('import of samples/requests.cloudfront.log (CloudFront standard log)', () => {
    // GET 200, its 206 repeat, a 0-1 probe (sc-range 0-1), Spotify over IPv6, curl, HEAD, 304, 404, 503, Pocket Casts: IAB counts 3, OP3
    // 5 (the probe and the 304 too, but no answer of the prefix that is an error).
    const cases: [DownloadRuleSettings, number][] = [
      [{ rules: 'iab', window: 'calendar' }, 3],
      [{ rules: 'op3', window: 'calendar' }, 5],
    ];
    for (const [settings, expected] of cases) {
      it(`${settings.rules}: ${expected} downloads, user agents decoded`, async () => {
        const database = await freshDatabase();
        const summary = await importFile(client, path.join(SAMPLES, 'requests.cloudfront.log'), options(database, settings, { format: 'cloudfront' }));
        expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 10, imported: 10, rejected: 0, downloads: expected });
        expect(await count(`SELECT countIf(raw_ua = 'Spotify/8.9.36 Android/34 (SM-S918B)') AS n FROM ${database}.downloads`)).toBe(1);
        // Logged Pocket%2520Casts: the %20 the app sent itself.
        const pocketCasts = 'Pocket%20Casts/7.96.0.4 CFNetwork/3826.600.41 Darwin/24.6.0';
        expect(await count(`SELECT countIf(raw_ua = '${pocketCasts}') AS n FROM ${database}.downloads`)).toBe(1);
      });
    }
  });

  describe('the app name of each imported request', () => {
    it('is its user agent’s entry in the list, for every bot, app, library and browser example, each agent twice', async () => {
      const database = await freshDatabase();
      const expected = (['bots', 'apps', 'libraries', 'browsers'] as const).flatMap((list) =>
        OPAWG_LISTS[list].flatMap((entry) => (entry.examples ?? []).map((ua) => ({ ua, name: entry.name }))),
      );
      expect(expected.length).toBeGreaterThanOrEqual(1420);
      const file = path.join(mkdtempSync(path.join(SCRATCH, 'import-agents-')), 'agents.ndjson');
      const line = (ua: string, i: number) =>
        JSON.stringify({
          time: new Date(Date.UTC(2026, 0, 5) + i * 1000).toISOString(),
          ip: '203.0.113.5',
          method: 'GET',
          url: `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`,
          userAgent: ua,
        });
      writeFileSync(file, [...expected, ...expected].map((e, i) => line(e.ua, i)).join('\n'));
      const summary = await importFile(client, file, options(database, { rules: 'iab', window: 'calendar' }));
      expect(summary).toMatchObject({ outcome: 'imported', imported: expected.length * 2, rejected: 0 });
      const rows = await (
        await client.query({
          query: `SELECT raw_ua, groupUniqArray(parsed_ua) AS names FROM ${database}.podcast_events GROUP BY raw_ua`,
          format: 'JSONEachRow',
        })
      ).json<{ raw_ua: string; names: string[] }>();
      const names = new Map(rows.map((r) => [r.raw_ua, r.names.join(' | ')]));
      expect(expected.map((e) => `${e.ua} → ${names.get(e.ua)}`)).toEqual(expected.map((e) => `${e.ua} → ${e.name}`));
      // The derivation classifies the agents again (once per derivation, not per statement): a download is named as its request.
      const downloads = await (
        await client.query({ query: `SELECT raw_ua, parsed_ua FROM ${database}.downloads`, format: 'JSONEachRow' })
      ).json<{ raw_ua: string; parsed_ua: string }>();
      const listed = new Map(expected.map((e) => [e.ua, e.name]));
      expect(downloads.length).toBeGreaterThan(OPAWG_LISTS.apps.length);
      expect(downloads.filter((d) => listed.get(d.raw_ua) !== d.parsed_ua)).toEqual([]);
      const bots = new Set(OPAWG_LISTS.bots.flatMap((entry) => entry.examples ?? []));
      expect(downloads.filter((d) => bots.has(d.raw_ua))).toEqual([]);
    });

    it('a browser request that Podverse’s web player referred is no download (OP3’s podverse-web-preload), the same request unreferred is', async () => {
      const database = await freshDatabase();
      const firefox = OPAWG_LISTS.browsers.find((entry) => entry.name === 'Firefox')?.examples?.[0];
      expect(firefox).toBeDefined();
      const file = path.join(mkdtempSync(path.join(SCRATCH, 'import-referer-')), 'referer.ndjson');
      const request = (ip: string, referer: string | undefined) =>
        JSON.stringify({
          time: '2026-01-05T10:00:00Z',
          ip,
          method: 'GET',
          url: `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`,
          userAgent: firefox,
          referer,
        });
      writeFileSync(file, [request('203.0.113.6', 'https://podverse.fm/'), request('203.0.113.7', undefined)].join('\n'));
      const summary = await importFile(client, file, options(database, { rules: 'iab', window: 'calendar' }));
      expect(summary).toMatchObject({ outcome: 'imported', imported: 2, downloads: 1 });
      expect(await count(`SELECT count() AS n FROM ${database}.downloads WHERE IPv6NumToString(ip) = '::ffff:203.0.113.7'`)).toBe(1);
    });

    it('Opera on a computer is no download without a referrer (OP3’s opera-desktop-sans-referrer), and is one with any referrer, listed or not', async () => {
      const database = await freshDatabase();
      // The list's Opera examples: a Mac's (a computer), an iPad's (not one).
      const [desktop, tablet] = OPAWG_LISTS.browsers.find((entry) => entry.name === 'Opera')?.examples ?? [];
      const requests = [
        { userAgent: desktop, ip: '203.0.113.8' },
        { userAgent: desktop, ip: '203.0.113.9', referer: 'https://www.example-podcast-site.com/episodes/1' },
        { userAgent: desktop, ip: '203.0.113.10', referer: 'not a url' },
        { userAgent: tablet, ip: '203.0.113.11' },
      ];
      const summary = await importFile(client, requestsFile('opera', requests), options(database, { rules: 'op3', window: 'calendar' }));
      expect(summary).toMatchObject({ outcome: 'imported', imported: 4, downloads: 2 });
      expect(
        (
          await (
            await client.query({ query: `SELECT IPv6NumToString(ip) AS ip FROM ${database}.downloads ORDER BY ip`, format: 'JSONEachRow' })
          ).json<{ ip: string }>()
        ).map((r) => r.ip),
      ).toEqual(['::ffff:203.0.113.11', '::ffff:203.0.113.9']);
    });
  });

  describe('import of samples/requests-with-errors.ndjson', () => {
    const file = path.join(SAMPLES, 'requests-with-errors.ndjson');

    it('refuses the file with its bad rows written to a reject file by line and reason, and imports nothing', async () => {
      const database = await freshDatabase();
      const opts = options(database, { rules: 'iab', window: 'calendar' });
      const summary = await importFile(client, file, opts);
      expect(summary).toMatchObject({ outcome: 'refused', rowsRead: 6, imported: 0, rejected: 5 });
      const rejects = rejectsOf(summary);
      const prefixes = [
        [2, 'not a JSON object'],
        [3, 'ip is not an IPv4 or IPv6 address'],
        [5, `url is not under the tracking prefix ${TRACKING_PREFIX} followed by a token and the media path`],
        [6, 'time is not an ISO 8601 time with a zone or epoch seconds'],
        [7, 'unknown field colour'],
      ] as const;
      expect(rejects.map((r, i) => [r.line, r.reason.startsWith(prefixes[i]?.[1] ?? '\u0000') ? prefixes[i][1] : r.reason])).toEqual(prefixes);
      expect(rejects.every((r) => r.file === file)).toBe(true);
      expect(await count(`SELECT count() AS n FROM ${database}.podcast_events`)).toBe(0);
    });

    it('imports the good rows when --max-bad-rows allows the bad ones, and --ignore-unknown keeps a row with an unknown field', async () => {
      const database = await freshDatabase();
      const summary = await importFile(client, file, options(database, { rules: 'iab', window: 'calendar' }, { maxBadRows: 5, ignoreUnknown: true }));
      expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 6, imported: 2, rejected: 4, downloads: 2 });
    });
  });
});

describe('the time of a request', () => {
  // Instants written out by hand; ClickHouse wrapped the refused ones into other years before the check named them.
  const accepted: [unknown, string][] = [
    ['2026-01-05T23:30:00-05:00', '2026-01-06 04:30:00'],
    ['2026-01-05T23:30:00+05:30', '2026-01-05 18:00:00'],
    ['2026-01-05T23:30:00+0530', '2026-01-05 18:00:00'],
    ['2026-01-05T23:30:00+05', '2026-01-05 18:30:00'],
    ['2026-01-05 23:30:00.250Z', '2026-01-05 23:30:00'],
    ['2026-01-05T23:30Z', '2026-01-05 23:30:00'],
    ['20260105T233000Z', '2026-01-05 23:30:00'],
    ['2024-02-29T10:00:00Z', '2024-02-29 10:00:00'],
    ['1767655800', '2026-01-05 23:30:00'],
    [1767655800, '2026-01-05 23:30:00'],
    ['1767655800.9', '2026-01-05 23:30:00'],
    ['1970-01-01T00:00:00Z', '1970-01-01 00:00:00'],
    ['2106-02-07T06:28:15Z', '2106-02-07 06:28:15'],
    ['4294967295', '2106-02-07 06:28:15'],
  ];
  const notIso = 'time is not an ISO 8601 time with a zone or epoch seconds';
  const outside = 'time is outside 1970-01-01T00:00:00Z … 2106-02-07T06:28:15Z, the times the warehouse holds';
  const pastEpoch = 'time is epoch seconds past 2106-02-07T06:28:15Z (epoch milliseconds are not read)';
  const refused: [unknown, string][] = [
    ['1767655800123', pastEpoch],
    ['4294967296', pastEpoch],
    ['99999999999999999999', pastEpoch],
    ['1969-12-31T23:59:59Z', outside],
    ['1960-01-01T00:00:00Z', outside],
    ['2106-02-07T06:28:16Z', outside],
    ['2200-01-01T00:00:00Z', outside],
    ['2026-01-05T25:00:00Z', notIso],
    ['2026-01-05T24:00:00Z', notIso],
    ['2026-01-05T23:60:00Z', notIso],
    ['2026-01-05T23:30:00+25:00', notIso],
    ['2026-02-29T10:00:00Z', notIso],
    ['2026-13-05T23:30:00Z', notIso],
    ['2026-01-05T23:30:00', notIso],
    ['2026-01-05', notIso],
    ['Mon, 05 Jan 2026 23:30:00 GMT', notIso],
  ];

  it('is read as the instant it names, and one the warehouse cannot hold is refused by its line and reason', async () => {
    const database = await freshDatabase();
    const file = requestsFile(
      'times',
      [...accepted, ...refused].map(([time], i) => ({ time, ip: `198.51.100.${i + 1}` })),
    );
    const summary = await importFile(client, file, options(database, { rules: 'iab', window: 'calendar' }, { maxBadRows: refused.length }));
    expect(summary).toMatchObject({ outcome: 'imported', imported: accepted.length, rejected: refused.length });
    const stored = await (
      await client.query({ query: `SELECT IPv4NumToString(ip4) AS ip, toString(ts) AS ts FROM ${database}.podcast_events ORDER BY ip4`, format: 'JSONEachRow' })
    ).json<{ ip: string; ts: string }>();
    expect(stored).toEqual(accepted.map(([, ts], i) => ({ ip: `198.51.100.${i + 1}`, ts })));
    const rejects = rejectsOf(summary);
    expect(rejects.map((r) => [r.line, r.reason])).toEqual(refused.map(([, reason], i) => [accepted.length + i + 1, reason]));
  });
});

describe('the address of a request', () => {
  it('an IPv4 client logged IPv4-mapped has its IPv4 address, as one logged plainly does; an IPv6 client has none', async () => {
    const database = await freshDatabase();
    // Each address as logged, and its IPv6 and IPv4 forms written out by hand (0:0:0:0:0:ffff:c000:0202 is 192.0.2.2).
    const addresses = [
      ['203.0.113.5', '::ffff:203.0.113.5', '203.0.113.5'],
      ['::ffff:198.51.100.7', '::ffff:198.51.100.7', '198.51.100.7'],
      ['::FFFF:192.0.2.1', '::ffff:192.0.2.1', '192.0.2.1'],
      ['0:0:0:0:0:ffff:c000:0202', '::ffff:192.0.2.2', '192.0.2.2'],
      ['2001:db8::ffff:1', '2001:db8::ffff:1', '0.0.0.0'],
      ['2001:db8::1', '2001:db8::1', '0.0.0.0'],
    ];
    const file = requestsFile(
      'mapped',
      addresses.map(([ip]) => ({ ip })),
    );
    expect(await importFile(client, file, options(database, { rules: 'iab', window: 'calendar' }))).toMatchObject({
      outcome: 'imported',
      imported: addresses.length,
    });
    const stored = await (
      await client.query({
        query: `SELECT IPv6NumToString(ip) AS ip, IPv4NumToString(ip4) AS ip4 FROM ${database}.podcast_events ORDER BY ts`,
        format: 'JSONEachRow',
      })
    ).json<{ ip: string; ip4: string }>();
    expect(stored).toEqual(addresses.map(([, ip, ip4]) => ({ ip, ip4 })));
  });
});

interface LoggedRequest {
  time: string;
  ip: string;
  method: string;
  status: number;
  url: string;
  userAgent: string;
  referer: string;
  /** `bytes=<start>-<end>` or '' (CloudFront logs the range it served, so a closed one stands for both forms). */
  range: string;
  /** CloudFront's x-edge-request-id. */
  requestId: string;
}

/** The requests as a CloudFront standard log: each field as the client sent it, written as AWS documents. */
function cloudFrontLog(requests: LoggedRequest[]): string {
  const lines = requests.map((r) => {
    const url = new URL(r.url);
    const [start, end] = r.range === '' ? ['', ''] : r.range.slice('bytes='.length).split('-');
    const cells: Record<string, string> = {
      date: r.time.slice(0, 10),
      time: r.time.slice(11, 19),
      'x-edge-location': 'FRA56-P1',
      'c-ip': r.ip,
      'cs-method': r.method,
      'cs(Host)': 'd111111abcdef8.cloudfront.net',
      // The path and query as they came on the wire (URL keeps a path's %XX and its other characters as written).
      'cs-uri-stem': r.url.slice(url.origin.length).split('?')[0],
      'cs-uri-query': r.url.includes('?') ? r.url.slice(r.url.indexOf('?') + 1) : '',
      'sc-status': String(r.status),
      'cs(Referer)': r.referer,
      'cs(User-Agent)': r.userAgent,
      'x-host-header': url.host,
      'cs-protocol': 'https',
      'sc-range-start': start ?? '',
      'sc-range-end': end ?? '',
      'x-edge-request-id': r.requestId,
    };
    return CLOUDFRONT_FIELDS.map((f) => cloudFrontField(cells[f] ?? '')).join('\t');
  });
  return `#Version: 1.0\n#Fields: ${CLOUDFRONT_FIELDS.join(' ')}\n${lines.join('\n')}\n`;
}

describe('a CloudFront log and an NDJSON file of the same requests', () => {
  const episode = `${TRACKING_PREFIX}abc123/media.example.com/show/ep-001.mp3`;
  const request = (time: string, ip: string, userAgent: string, extra: Partial<LoggedRequest> = {}): LoggedRequest => ({
    // CloudFront's ids are 56 characters of base64url and `=`.
    requestId: `${time.replace(/:/g, '')}${ip.replace(/[.:]/g, '')}`.padEnd(54, 'x') + '==',
    time: `2026-01-05T${time}Z`,
    ip,
    method: 'GET',
    status: 200,
    url: episode,
    userAgent,
    referer: '',
    range: '',
    ...extra,
  });
  // Agents as the clients sent them: CFNetwork's percent-encoded app names (OPAWG's examples), a lone %, raw UTF-8, a
  // %2520 of its own; a client-encoded path with a query; a referer holding both a %20 and a space.
  const requests: LoggedRequest[] = [
    request('10:00:00', '192.0.2.10', 'Pocket%20Casts/7.96.0.4 CFNetwork/3826.600.41 Darwin/24.6.0'),
    request('10:00:30', '192.0.2.10', 'Pocket%20Casts/7.96.0.4 CFNetwork/3826.600.41 Darwin/24.6.0', { status: 206, range: 'bytes=0-1' }),
    request('10:02:00', '192.0.2.11', 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0', {
      referer: 'https://www.example.com/search?q=pocket%20casts&x=a b',
    }),
    request('10:03:00', '2001:db8::7', 'Audirv%C4%81na%20Studio/20906 CFNetwork/1568.300.101 Darwin/24.2.0', {
      url: `${TRACKING_PREFIX}abc123/media.example.com/show/ep%20002.mp3?id=7&_=1767600000`,
    }),
    request('10:04:00', '192.0.2.12', 'Podcast Player 100% (Ünïcode)/2.0', { status: 206, range: 'bytes=100-200' }),
    request('10:05:00', '192.0.2.13', 'Weird%2520Agent/1.0 (%7Bbraces%7D)'),
    request('10:06:00', '192.0.2.14', 'Spotify/8.9.36 Android/34 (SM-S918B)', { status: 404 }),
  ];
  const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
  const rows = async (database: string, table: string, columns: string) =>
    (await client.query({ query: `SELECT ${columns} FROM ${database}.${table} ORDER BY ALL`, format: 'JSONEachRow' })).json();
  const eventColumns =
    'account_id, request_id, ts, ip, ip4, url, redirect_url, raw_ua, parsed_ua, token, byte_range, byte_range_larger_one, referer, method, status';
  const downloadColumns = 'account_id, ts, ip, token, url, referer, raw_ua, parsed_ua, os_name, device_type, tags';

  it('give the same requests, each field as the client sent it, and the same downloads; the second adds nothing', async () => {
    const dir = mkdtempSync(path.join(SCRATCH, 'import-both-'));
    writeFileSync(path.join(dir, 'requests.log'), cloudFrontLog(requests));
    writeFileSync(path.join(dir, 'requests.ndjson'), requests.map((r) => JSON.stringify(r)).join('\n'));
    const fromCloudFront = await freshDatabase();
    const fromNdjson = await freshDatabase();
    // Ep-001 by four listeners (the probe is one of them again) and ep 002 by one; the 404 is none: 5 by hand.
    expect(await importFile(client, path.join(dir, 'requests.log'), options(fromCloudFront, settings, { format: 'cloudfront' }))).toMatchObject({
      outcome: 'imported',
      imported: requests.length,
      downloads: 5,
    });
    expect(await importFile(client, path.join(dir, 'requests.ndjson'), options(fromNdjson, settings))).toMatchObject({
      outcome: 'imported',
      imported: requests.length,
      downloads: 5,
    });
    const asSent = await client
      .query({ query: `SELECT raw_ua, url, referer FROM ${fromCloudFront}.podcast_events ORDER BY ts`, format: 'JSONEachRow' })
      .then((r) => r.json());
    expect(asSent).toEqual(requests.map((r) => ({ raw_ua: r.userAgent, url: r.url, referer: r.referer })));
    expect(await rows(fromCloudFront, 'podcast_events', eventColumns)).toEqual(await rows(fromNdjson, 'podcast_events', eventColumns));
    expect(await rows(fromCloudFront, 'downloads', downloadColumns)).toEqual(await rows(fromNdjson, 'downloads', downloadColumns));
    // The same requests by their ids (x-edge-request-id, requestId): already there.
    expect(await importFile(client, path.join(dir, 'requests.ndjson'), options(fromCloudFront, settings))).toMatchObject({
      outcome: 'imported',
      rowsRead: requests.length,
      imported: 0,
      duplicates: requests.length,
    });
    expect(await count(`SELECT count() AS n FROM ${fromCloudFront}.podcast_events`)).toBe(requests.length);
  });
});

/** RFC 9562 5.5 (name-based, SHA-1) written out, for the request_id of a request that carries its own id. */
function uuidV5(namespace: string, name: string): string {
  const digest = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  digest[6] = (digest[6] & 0x0f) | 0x50;
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

describe('a request that carries its own id', () => {
  const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
  // Ten listeners of one episode, one request each, an hour apart (09:00–18:00): ten downloads.
  const line = (i: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      time: `2026-01-05T${String(8 + i).padStart(2, '0')}:00:00Z`,
      ip: `198.51.100.${i}`,
      method: 'GET',
      url: `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`,
      userAgent: 'AppleCoreMedia/1.0.0',
      requestId: `req-${i}`,
      ...extra,
    });
  const file = (name: string, lines: string[]) => {
    const written = path.join(mkdtempSync(path.join(SCRATCH, 'import-ids-')), name);
    writeFileSync(written, `${lines.join('\n')}\n`);
    return written;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => line(from + i));
  const events = (database: string) => count(`SELECT count() AS n FROM ${database}.podcast_events`);

  it.each([
    ['in one statement', undefined],
    ['in statements of at most 2 requests', 2],
  ])('a file cut differently adds only what the first lacked (%s)', async (_, statementRows) => {
    const database = await freshDatabase();
    const opts = options(database, settings, { statementRows });
    expect(await importFile(client, file('a.ndjson', range(1, 6)), opts)).toMatchObject({ outcome: 'imported', imported: 6, duplicates: 0, downloads: 6 });
    // Lines 4–10: 4–6 were in the first file.
    expect(await importFile(client, file('b.ndjson', range(4, 10)), opts)).toMatchObject({
      outcome: 'imported',
      rowsRead: 7,
      imported: 4,
      rejected: 0,
      duplicates: 3,
      downloads: 10,
    });
    // All ten in another order, and the first again: nothing new, nothing derived.
    expect(await importFile(client, file('c.ndjson', [...range(1, 10).reverse(), line(1)]), opts)).toMatchObject({
      outcome: 'imported',
      rowsRead: 11,
      imported: 0,
      duplicates: 11,
      downloads: 0,
    });
    expect(await events(database)).toBe(10);
    expect(await count(`SELECT count() AS n FROM ${database}.downloads`)).toBe(10);
    // Its request_id is the version 5 UUID of its account, time and id.
    const [{ id }] = await (
      await client.query({
        query: `SELECT toString(request_id) AS id FROM ${database}.podcast_events WHERE ip4 = toIPv4('198.51.100.1')`,
        format: 'JSONEachRow',
      })
    ).json<{ id: string }>();
    expect(id).toBe(uuidV5(REQUEST_ID_NAMESPACE, `4:acme${Date.parse('2026-01-05T09:00:00Z') / 1000}:req-1`));
  });

  it('within a file: a line repeating one adds nothing, and of two lines with one id and time the same one is kept in either order', async () => {
    const database = await freshDatabase();
    expect(await importFile(client, file('d.ndjson', [line(1), line(1), line(2)]), options(database, settings))).toMatchObject({
      imported: 2,
      duplicates: 1,
    });
    const kept: unknown[] = [];
    for (const agents of [
      ['Overcast/794', 'Podcasts/1740.2'],
      ['Podcasts/1740.2', 'Overcast/794'],
    ]) {
      const other = await freshDatabase();
      const summary = await importFile(
        client,
        file(
          'e.ndjson',
          agents.map((userAgent) => line(3, { userAgent })),
        ),
        options(other, settings),
      );
      expect(summary).toMatchObject({ imported: 1, duplicates: 1 });
      kept.push(...(await (await client.query({ query: `SELECT raw_ua FROM ${other}.podcast_events`, format: 'JSONEachRow' })).json()));
    }
    expect(kept).toHaveLength(2);
    expect(kept[1]).toEqual(kept[0]);
  });

  it('CSV: a requestId column, the same', async () => {
    const database = await freshDatabase();
    const csv = (i: number) =>
      `2026-01-05T${String(8 + i).padStart(2, '0')}:00:00Z,198.51.100.${i},GET,${TRACKING_PREFIX}abc123/media.example.com/ep.mp3,req-${i}`;
    const written = file('k.csv', ['time,ip,method,url,requestId', csv(1), csv(2), csv(1)]);
    expect(await importFile(client, written, options(database, settings, { format: 'csv' }))).toMatchObject({ rowsRead: 3, imported: 2, duplicates: 1 });
  });

  it('is the same request only for the same account at the same time', async () => {
    const database = await freshDatabase();
    await importFile(client, file('f.ndjson', [line(1)]), options(database, settings));
    expect(await importFile(client, file('g.ndjson', [line(1, { account: 'globex' })]), options(database, settings, { account: undefined }))).toMatchObject({
      imported: 1,
      duplicates: 0,
    });
    expect(await importFile(client, file('h.ndjson', [line(1, { time: '2026-01-05T09:00:01Z' })]), options(database, settings))).toMatchObject({
      imported: 1,
      duplicates: 0,
    });
    expect(await events(database)).toBe(3);
  });

  it('a null or empty requestId is none; one that is no string or number is refused by its line', async () => {
    const database = await freshDatabase();
    const lines = [
      line(1, { requestId: null }),
      line(1, { requestId: null }),
      line(2, { requestId: '' }),
      line(2, { requestId: '' }),
      line(3, { requestId: 7 }),
      line(3, { requestId: 7 }),
      line(4, { requestId: true }),
    ];
    const summary = await importFile(client, file('j.ndjson', lines), options(database, settings, { maxBadRows: 1 }));
    expect(summary).toMatchObject({ rowsRead: 7, imported: 5, duplicates: 1, rejected: 1 });
    const rejects = rejectsOf(summary);
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([[7, 'requestId is not a string or a number']]);
  });

  it('without ids, only an identical file is recognised: the overlap of a file cut differently is imported again', async () => {
    const database = await freshDatabase();
    const plain = (from: number, to: number) => range(from, to).map((l) => JSON.stringify({ ...(JSON.parse(l) as object), requestId: undefined }));
    await importFile(client, file('a.ndjson', plain(1, 6)), options(database, settings));
    expect(await importFile(client, file('b.ndjson', plain(4, 10)), options(database, settings))).toMatchObject({ imported: 7, duplicates: 0 });
    expect(await events(database)).toBe(13);
  });
});

describe('the URL of a request', () => {
  // One listener's requests of a day; the file each is of, written out by hand (OP3's R4: parameters a client adds go,
  // scheme and host lower-cased).
  const episode = `${TRACKING_PREFIX}abc123/media.example.com/ep.mp3`;
  const requests: [string, string][] = [
    [episode, episode],
    [`${episode}?_=1767600000`, episode],
    [`${episode}?from=app&_cb=2`, episode],
    [`${episode}?aw_0_1st.playerid=x&source=rss`, episode],
    [`${episode}?download=true&`, episode],
    [`${episode}%3F_from=app`, episode],
    [`${episode}/;?DIST=TuneIn&TGT=TuneIn&maxServers=2`, episode],
    [`${episode}?id=7`, `${episode}?id=7`],
    [`${episode}?ref=feed&id=7`, `${episode}?id=7`],
    [`${episode}?DIST=TuneIn`, `${episode}?DIST=TuneIn`],
    // Scheme and host in any case are the same file (RFC 3986 6.2.2.1); a path differing in case is another.
    ['HTTPS://PFX.EXAMPLE-ANALYTICS.NET/e/abc123/media.example.com/ep.mp3', episode],
    ['Https://Pfx.Example-Analytics.net/e/abc123/media.example.com/ep.mp3?_=1767600001', episode],
    ['https://pfx.example-analytics.NET/e/abc123/media.example.com/ep.mp3?ID=7', `${episode}?ID=7`],
    [`${TRACKING_PREFIX}abc123/media.example.com/EP.mp3`, `${TRACKING_PREFIX}abc123/media.example.com/EP.mp3`],
  ];
  const files = [...new Set(requests.map(([, file]) => file))].sort();

  it.each(['iab', 'op3'] as const)('%s: a download per file, not per client parameter nor per case of its scheme and host', async (rules) => {
    const database = await freshDatabase();
    const file = requestsFile(
      'urls',
      requests.map(([url]) => ({ url, ip: '198.51.100.9' })),
    );
    expect(await importFile(client, file, options(database, { rules, window: 'calendar' }))).toMatchObject({
      outcome: 'imported',
      imported: requests.length,
      downloads: files.length,
    });
    const urls = await (await client.query({ query: `SELECT url FROM ${database}.downloads ORDER BY url`, format: 'JSONEachRow' })).json<{ url: string }>();
    expect(urls.map((u) => u.url)).toEqual(files);
  });
});

describe('the account of a request', () => {
  // Each row's account field (undefined: none), and the account it belongs to with and without --account acme.
  const rows: [string | undefined, string | undefined, string | undefined][] = [
    [undefined, 'acme', undefined],
    ['', 'acme', undefined],
    ['acme', 'acme', 'acme'],
    ['globex', undefined, 'globex'],
  ];
  const file = () =>
    requestsFile(
      'accounts',
      rows.map(([account], i) => ({ ip: `198.51.100.${i + 1}`, ...(account === undefined ? {} : { account }) })),
    );
  const stored = async (database: string) =>
    (
      await (
        await client.query({ query: `SELECT IPv4NumToString(ip4) AS ip, account_id FROM ${database}.podcast_events ORDER BY ip4`, format: 'JSONEachRow' })
      ).json<{ ip: string; account_id: string }>()
    ).map(({ ip, account_id }) => [Number(ip.split('.')[3]) - 1, account_id]);

  it('is its own account field, or --account for a row without one; a row naming another account than --account is refused', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, file(), options(database, { rules: 'iab', window: 'calendar' }, { maxBadRows: 1 }));
    expect(summary).toMatchObject({ outcome: 'imported', imported: 3, rejected: 1 });
    expect(await stored(database)).toEqual(rows.flatMap(([, account], i) => (account === undefined ? [] : [[i, account]])));
    const rejects = rejectsOf(summary);
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([[4, 'account globex differs from --account acme']]);
  });

  it('without --account, a row without one is refused and the others keep theirs', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, file(), options(database, { rules: 'iab', window: 'calendar' }, { account: undefined, maxBadRows: 2 }));
    expect(summary).toMatchObject({ outcome: 'imported', imported: 2, rejected: 2 });
    expect(await stored(database)).toEqual(rows.flatMap(([, , account], i) => (account === undefined ? [] : [[i, account]])));
  });
});

describe('an import killed after moving its rows in', () => {
  it('leaves nothing: the next import removes its rows and derives their span again', async () => {
    const database = await freshDatabase();
    const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
    await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(database, settings));
    // What a kill -9 between the move and the 'done' record leaves: a 'started' record and rows carrying its id, already derived.
    await client.command({
      query: `INSERT INTO ${database}.imports (id, hash, file, state, rows, from_ts, to_ts) VALUES ('killed', 'x', 'killed.ndjson', 'started', 9, '2026-01-05 00:00:00', '2026-01-06 23:59:59')`,
    });
    await client.command({
      query: `INSERT INTO ${database}.podcast_events SELECT * REPLACE (generateUUIDv4() AS request_id, 'killed' AS import_id, toIPv4('192.0.2.200') AS ip4, toIPv6('::ffff:192.0.2.200') AS ip) FROM ${database}.podcast_events`,
    });
    await client.command({ query: `INSERT INTO ${database}.downloads SELECT * REPLACE (toIPv4('192.0.2.200') AS ip4) FROM ${database}.downloads` });
    expect(await count(`SELECT count() AS n FROM ${database}.downloads`)).toBe(6);

    const next = await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(database, settings));
    expect(next.outcome).toBe('already imported');
    expect(await count(`SELECT count() AS n FROM ${database}.podcast_events`)).toBe(9);
    expect(await count(`SELECT count() AS n FROM ${database}.downloads`)).toBe(3);
    expect(await count(`SELECT count() AS n FROM ${database}.imports WHERE id = 'killed'`)).toBe(0);
  });
});

describe('a file is recognised by the SHA-256 of its content', () => {
  // Several of the hash's 1 MiB read chunks: a blank line of 3 MiB (which holds no row) before the sample's rows.
  const dir = mkdtempSync(path.join(SCRATCH, 'import-hash-'));
  const first = path.join(dir, 'first.ndjson');
  const second = path.join(dir, 'second.ndjson');
  const rows = readFileSync(path.join(SAMPLES, 'requests.ndjson'), 'utf8');
  writeFileSync(first, `${' '.repeat(3 << 20)}\n${rows}`);
  // The same bytes and one more newline at the end, past the first chunks.
  writeFileSync(second, `${' '.repeat(3 << 20)}\n${rows}\n`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sha256sum = (file: string) => execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
  const recordedHash = async (database: string) =>
    (await (await client.query({ query: `SELECT hash FROM ${database}.imports WHERE state = 'done'`, format: 'JSONEachRow' })).json<{ hash: string }>())[0]
      .hash;

  it('records the digest sha256sum gives, and takes a file that differs only in its last byte as a new one', async () => {
    const database = await freshDatabase();
    const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
    expect(await importFile(client, first, options(database, settings))).toMatchObject({ outcome: 'imported', imported: 9 });
    expect(await recordedHash(database)).toBe(sha256sum(first));
    expect(await importFile(client, second, options(database, settings))).toMatchObject({ outcome: 'imported', imported: 9 });
    expect(await importFile(client, first, options(database, settings))).toMatchObject({ outcome: 'already imported' });
  });

  it('compressed or not: the same lines plain after a .gz, or as a .gz of two gzip members after the plain file, add nothing', async () => {
    const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
    const content = readFileSync(first);
    const gz = path.join(dir, 'first.ndjson.gz');
    writeFileSync(gz, gzipSync(content));
    // What `cat a.gz b.gz` makes of the file cut in two: one file of two members.
    const members = path.join(dir, 'members.ndjson.gz');
    const cut = content.length - 100;
    writeFileSync(members, Buffer.concat([gzipSync(content.subarray(0, cut)), gzipSync(content.subarray(cut))]));
    const plainFirst = await freshDatabase();
    expect(await importFile(client, first, options(plainFirst, settings))).toMatchObject({ outcome: 'imported', imported: 9 });
    expect(await importFile(client, gz, options(plainFirst, settings))).toMatchObject({ outcome: 'already imported', imported: 0 });
    expect(await importFile(client, members, options(plainFirst, settings))).toMatchObject({ outcome: 'already imported', imported: 0 });
    expect(await count(`SELECT count() AS n FROM ${plainFirst}.podcast_events`)).toBe(9);

    const gzFirst = await freshDatabase();
    expect(await importFile(client, members, options(gzFirst, settings))).toMatchObject({ outcome: 'imported', imported: 9, downloads: 3 });
    expect(await recordedHash(gzFirst)).toBe(sha256sum(first));
    expect(await importFile(client, first, options(gzFirst, settings))).toMatchObject({ outcome: 'already imported', imported: 0 });
    expect(await count(`SELECT count() AS n FROM ${gzFirst}.podcast_events`)).toBe(9);
  });

  it('a .gz an earlier version recorded by its bytes as given is still recognised', async () => {
    const database = await freshDatabase();
    const gz = path.join(dir, 'recorded.ndjson.gz');
    writeFileSync(gz, gzipSync(readFileSync(first)));
    const bytes = sha256sum(gz);
    await ensureImportTables(client, database);
    await client.command({
      query: `INSERT INTO ${database}.imports (id, hash, file, state, rows, from_ts, to_ts) VALUES ('earlier', '${bytes}', 'recorded.ndjson.gz', 'done', 9, '2026-01-05 08:00:00', '2026-01-06 07:00:00')`,
    });
    expect(await importFile(client, gz, options(database, { rules: 'iab', window: 'calendar' }))).toMatchObject({ outcome: 'already imported' });
    expect(await count(`SELECT count() AS n FROM ${database}.podcast_events`)).toBe(0);
  });

  it('a name ending .gz that holds no gzip data refuses the file by name', async () => {
    const database = await freshDatabase();
    const notGzip = path.join(dir, 'plain.ndjson.gz');
    writeFileSync(notGzip, readFileSync(first));
    await expect(importFile(client, notGzip, options(database, { rules: 'iab', window: 'calendar' }))).rejects.toThrow(
      new ImportRefused(`${notGzip}: not gzip data, which a name ending .gz must hold (incorrect header check)`),
    );
  });
});

describe('an import killed before it recorded started', () => {
  it('left only staging tables, which the next import drops', async () => {
    const database = await freshDatabase();
    const staging = `${database}_import`;
    // What a kill -9 while reading the file leaves: a staging table holding part of its rows, and no record.
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${staging}` });
    await client.command({ query: `CREATE TABLE ${staging}.rows_killed ENGINE = MergeTree ORDER BY tuple() AS SELECT * FROM ${database}.podcast_events` });
    await client.command({ query: `INSERT INTO ${staging}.rows_killed (account_id, ts, url) VALUES ('acme', '2026-01-05 00:00:00', 'https://example.com/')` });

    const summary = await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(database, { rules: 'iab', window: 'calendar' }));
    expect(summary).toMatchObject({ outcome: 'imported', imported: 9 });
    expect(await count(`SELECT count() AS n FROM system.tables WHERE database = '${staging}'`)).toBe(0);
    expect(await count(`SELECT count() AS n FROM ${database}.podcast_events`)).toBe(9);
  });
});

describe('the session an import runs in', () => {
  it('has the settings it had before: the import sets its own per statement', async () => {
    const changed = async () =>
      (await client.query({ query: 'SELECT name, value FROM system.settings WHERE changed ORDER BY name', format: 'JSONEachRow' })).json<{
        name: string;
        value: string;
      }>();
    const before = await changed();
    const database = await freshDatabase();
    const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
    await importFile(client, path.join(SAMPLES, 'requests.csv'), { ...options(database, settings), format: 'csv' });
    // A recovery too: it deletes rows, which waits for the mutation.
    await client.command({
      query: `INSERT INTO ${database}.imports (id, hash, file, state, rows, from_ts, to_ts) VALUES ('killed', 'x', 'killed.ndjson', 'started', 9, '2026-01-05 00:00:00', '2026-01-06 23:59:59')`,
    });
    await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(database, settings));
    expect(await count(`SELECT count() AS n FROM ${database}.imports WHERE id = 'killed'`)).toBe(0);
    // Its lines sent as to a server, with the reader's settings.
    await importFile(client, path.join(SAMPLES, 'requests.cloudfront.log'), { ...options(database, settings), format: 'cloudfront', engineReadsFiles: false });
    const after = await changed();
    expect(after).toEqual(before);
    // An earlier test's import in this process would have left it in `before` too.
    for (const name of ['mutations_sync', 'input_format_skip_unknown_fields']) expect(after).not.toContainEqual(expect.objectContaining({ name }));
  });
});

describe('the user-agent pattern sets', () => {
  it('are compiled once in a process: a later import runs no compile statement, and its classifying statements compile none', async () => {
    const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
    await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(await freshDatabase(), settings));
    const sent: string[] = [];
    const recording = new Proxy(client, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (params: { query?: unknown }) => {
          if (typeof params.query === 'string') sent.push(params.query);
          return (value as (p: unknown) => unknown).call(target, params);
        };
      },
    });
    const created = () => count(`SELECT sum(value) AS n FROM system.events WHERE name = 'RegexpWithMultipleNeedlesCreated'`);
    const before = await created();
    const later = await importFile(recording, path.join(SAMPLES, 'requests.csv'), { ...options(await freshDatabase(), settings), format: 'csv' });
    expect(later).toMatchObject({ outcome: 'imported', imported: 9, downloads: 3 });
    // It classified its user agents (in its views and the derivation) with every set already compiled.
    expect(sent.some((query) => query.includes('multiMatchAllIndices'))).toBe(true);
    const compiles = new Set(compileUserAgentPatternsSql(USER_AGENTS));
    expect(sent.filter((query) => compiles.has(query))).toEqual([]);
    expect(await created()).toBe(before);
  });
});

describe('files chDB reads itself', () => {
  const settings: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };

  it('a path with glob characters, a quote and a space, compressed: read as named, not as a pattern', async () => {
    const database = await freshDatabase();
    const dir = mkdtempSync(path.join(SCRATCH, 'import-path-'));
    // A sibling the pattern `{a,b}*` would also match: reading it too would double the rows.
    const file = path.join(dir, "logs {a,b}* it's.ndjson.gz");
    writeFileSync(file, gzipSync(readFileSync(path.join(SAMPLES, 'requests.ndjson'))));
    writeFileSync(path.join(dir, 'logs a.ndjson.gz'), gzipSync(readFileSync(path.join(SAMPLES, 'requests.ndjson'))));
    const summary = await importFile(client, file, options(database, settings));
    expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 9, imported: 9, rejected: 0, downloads: 3 });
  });

  it('CSV: blank lines hold no row, a record with more fields than the header is rejected by its line, one with fewer has the rest empty', async () => {
    const database = await freshDatabase();
    const dir = mkdtempSync(path.join(SCRATCH, 'import-csv-'));
    const file = path.join(dir, 'edges.csv');
    const [header, ...records] = readFileSync(path.join(SAMPLES, 'requests.csv'), 'utf8').trim().split('\n');
    // Line 3 blank, line 4 spaces only, line 6 one field too many, line 8 stops after the url (no user agent, referer, range).
    writeFileSync(
      file,
      [header, records[0], '', '   ', records[1], `${records[2]},surplus`, records[3], records[4].split(',').slice(0, 5).join(','), ''].join('\n'),
    );
    const summary = await importFile(client, file, options(database, settings, { format: 'csv', maxBadRows: 1 }));
    expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 5, imported: 4, rejected: 1 });
    const rejects = rejectsOf(summary);
    expect(rejects).toEqual([expect.objectContaining({ line: 6, reason: 'not a CSV record: more fields than the header names' })]);
    expect(await count(`SELECT countIf(raw_ua = '') AS n FROM ${database}.podcast_events`)).toBe(1);
  });
});

describe('the downloads an import derives again', () => {
  it('are its own accounts’: another account’s downloads of the same days stay as they were', async () => {
    const database = await freshDatabase();
    // A download no rule would derive from any request (none of its account's are there): only a re-derivation of its account removes it.
    await client.command({
      query: `INSERT INTO ${database}.downloads (account_id, ts, ip4, city, country, continent) VALUES ('other', '2026-01-05 10:00:00', '192.0.2.1', 'Atlantis', 'Nowhere', 'Mu')`,
    });
    const summary = await importFile(client, path.join(SAMPLES, 'requests.ndjson'), options(database, { rules: 'iab', window: 'first-touch' }));
    expect(summary).toMatchObject({ outcome: 'imported', downloads: 2, accounts: ['acme'] });
    expect(
      await client
        .query({ query: `SELECT account_id, city, country, continent FROM ${database}.downloads WHERE account_id != 'acme'`, format: 'JSONEachRow' })
        .then((r) => r.json()),
    ).toEqual([{ account_id: 'other', city: 'Atlantis', country: 'Nowhere', continent: 'Mu' }]);
  });
});

describe('without an IP database', () => {
  it('imports with empty places, and a warning says so and what to run', async () => {
    const database = await freshDatabase();
    const warnings: string[] = [];
    const places = await placesFromDatabase(client, database, (message) => warnings.push(message));
    expect(places).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/no IP database is loaded: .*empty places.*npm run warehouse -- geo-refresh/)]);
    const opts = options(database, { rules: 'iab', window: 'calendar' });
    await importFile(client, path.join(SAMPLES, 'requests.ndjson'), { ...opts, derivation: { ...opts.derivation, places } });
    const rows = async (table: string, columns: string) =>
      (await client.query({ query: `SELECT DISTINCT ${columns} FROM ${database}.${table}`, format: 'JSONEachRow' })).json();
    expect(await rows('podcast_events', 'city, country')).toEqual([{ city: '', country: '' }]);
    expect(await rows('downloads', 'city, country, continent, timezone, org')).toEqual([{ city: '', country: '', continent: '', timezone: '', org: '' }]);
  });
});

describe('npm run warehouse -- derive after a change of user-agent set', () => {
  it('names the stored requests again, as their downloads, and renames nothing when run again', async () => {
    const database = await freshDatabase();
    // The list's Android Browser example, which the built-in set takes for Safari (docs/reference/downloads.md lists it).
    const stockBrowser = OPAWG_LISTS.apps.find((entry) => entry.name === 'Android Browser')?.examples?.[0] as string;
    const agents = [stockBrowser, 'Overcast/3.0 (+http://overcast.fm/; iOS podcast app)', 'Unlisted Player/2.1 (Linux; Android 14)'];
    const file = requestsFile(
      'reclassify',
      agents.map((userAgent, i) => ({ userAgent, ip: `203.0.113.${i + 1}` })),
    );
    const builtIn = options(database, { rules: 'iab', window: 'calendar' });
    expect(await importFile(client, file, { ...builtIn, derivation: { ...builtIn.derivation, userAgents: BUILT_IN_USER_AGENTS } })).toMatchObject({
      imported: 3,
      downloads: 3,
    });
    const names = async (table: string) =>
      (
        await (
          await client.query({ query: `SELECT raw_ua, parsed_ua FROM ${database}.${table} ORDER BY raw_ua`, format: 'JSONEachRow' })
        ).json<{ raw_ua: string; parsed_ua: string }>()
      ).map((r) => `${r.raw_ua} → ${r.parsed_ua}`);
    const named = (stock: string) => [`${agents[1]} → Overcast`, `${agents[2]} → ${agents[2]}`, `${stockBrowser} → ${stock}`].sort();
    expect(await names('podcast_events')).toEqual(named('Safari'));
    expect(await names('downloads')).toEqual(named('Safari'));

    const { downloads } = parseConfig({ USER_AGENTS_DIR: OPAWG_DIR });
    const derivation = { settings: downloads, userAgents: loadUserAgents(downloads.userAgentsDir) };
    expect(await deriveAll(client, database, derivation)).toEqual({ requests: 3, renamed: 1, downloads: 3 });
    expect(await names('podcast_events')).toEqual(named('Android Browser'));
    expect(await names('downloads')).toEqual(named('Android Browser'));
    expect(await deriveAll(client, database, derivation)).toEqual({ requests: 3, renamed: 0, downloads: 3 });
    // The Join table of the agents' names is gone with the derivation.
    expect(await count(`SELECT count() AS n FROM system.tables WHERE database = '${database}_import' AND name LIKE 'agent_names_%'`)).toBe(0);
  });
});

describe('the user-agent patterns', () => {
  it('are compiled one set per statement, none in the statements that make the views, read the lines or derive', async () => {
    // A set no statement of this process scanned yet: one more bot first moves every later pattern into another set.
    const userAgents = {
      ...USER_AGENTS,
      agents: [{ type: 'bot' as const, name: 'Never', pattern: `^never-${process.pid}-${Date.now()}$` }, ...USER_AGENTS.agents],
    };
    const compiled = () => count(`SELECT sum(value) AS n FROM system.events WHERE name = 'RegexpWithMultipleNeedlesCreated'`);
    const perStatement: number[] = [];
    // The real client, each statement followed by a look at how many pattern sets ClickHouse compiled for it.
    const observed = new Proxy(client, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function' || !['query', 'command', 'exec', 'insert'].includes(String(property))) return value;
        return async (params: unknown) => {
          const before = await compiled();
          const result: unknown = await (value as (p: unknown) => Promise<unknown>).call(target, params);
          perStatement.push((await compiled()) - before);
          return result;
        };
      },
    });
    const database = await freshDatabase();
    const opts = options(database, { rules: 'iab', window: 'calendar' }, { statementRows: 3 });
    const summary = await importFile(observed, path.join(SAMPLES, 'requests.ndjson'), { ...opts, derivation: { ...opts.derivation, userAgents } });
    expect(summary).toMatchObject({ outcome: 'imported', downloads: 3 });
    expect(perStatement.reduce((a, b) => a + b, 0)).toBeGreaterThan(1);
    expect(Math.max(...perStatement)).toBe(1);
  });
});

describe('the staging tables', () => {
  it("are gone when the import ends, their files left to ClickHouse's background rather than removed in a statement", async () => {
    const database = await freshDatabase();
    const summary = await importFile(
      client,
      path.join(SAMPLES, 'requests.ndjson'),
      options(database, { rules: 'iab', window: 'calendar' }, { statementRows: 3 }),
    );
    expect(summary).toMatchObject({ outcome: 'imported', downloads: 3 });
    const staging = `${database}_import`;
    expect(await count(`SELECT count() AS n FROM system.tables WHERE database = '${staging}'`)).toBe(0);
    const [{ id }] = await (await client.query({ query: `SELECT id FROM ${database}.imports`, format: 'JSONEachRow' })).json<{ id: string }>();
    // Dropped without SYNC: listed until the background removes them (DROP … SYNC removes a table at once, and it is not listed).
    expect(await count(`SELECT count() AS n FROM system.dropped_tables WHERE database = '${staging}' AND table = 'events_${id}'`)).toBe(1);
  });
});
