/**
 * Smart-link events through the one import: samples/link-events.* (the same twelve events of the link pages as
 * NDJSON, CSV and Parquet) into link_events, the link views derived from them (the three Links cubes), their
 * rejects, their second delivery, opens and views in different files, an import killed half way, rows a pipeline
 * inserted itself, and the answers of both APIs, into a stopped and into a running service. Every expected value is
 * the sample's, worked out by hand below.
 *
 * The sample, account acme (--account; line 12 names it itself), two links:
 *    1 ep-42 view, c-ann, 01-05 10:00, Safari on an iPhone, 128.232.5.6 (France), utm newsletter/email/"spring%20launch",
 *      referer www.Example.com, Accept-Language "de-CH;q=0.8, fr;q=0.9": French. Unique.
 *    2 ep-42 open apple-podcasts, c-ann, 10:05: marks 1.
 *    3 ep-42 view, c-ann, 10:10, no utm, "en-US,en;q=0.9": English. Not unique.
 *    4 ep-42 open spotify, c-ann, 10:50: 3 (the latest view not opened) lies 40 minutes before: unmatched.
 *    5 ep-42 view, no viewer (hash of 2001:630::5, Japan, and Instagram's in-app browser), 11:00, utm instagram/social,
 *      referer l.instagram.com, "ja": Japanese. Unique.
 *    6 ep-42 view, the same viewer, 11:20. Not unique.
 *    7 ep-42 open overcast, 11:25: marks 6, the latest.
 *    8 ep-42 open pocket-casts, 11:26: 6 is opened, 5 (26 minutes before) is next: marks 5.
 *    9 ep-42 view by Googlebot, 12:00: a bot, no view.
 *   10 show-7 view, c-ann, 2026-01-06T09:00:00+01:00 (08:00 UTC), Chrome, 203.0.113.5 (in no network: no country),
 *      referer www.podnews.net. Unique: another link.
 *   11 show-7 open apple-podcasts, c-bob, 08:10: c-bob has no view before it: unmatched.
 *   12 show-7 view, c-bob, 08:15, Facebook's in-app browser, utm_campaign caf%C3%A9, "*;q=1, es;q=0.5": Spanish
 *      (`*` names no language). Unique; not opened (the open came before it).
 * Views 6, opened 3, unmatched opens 2, bots 1.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { deriveAllLinkViews } from '../../../src/warehouse/derive/link-views';
import { openWarehouse } from '../../../src/warehouse/connection';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { ensureGeo } from '../../../src/warehouse/geo/load';
import { importFile, type ImportOptions } from '../../../src/warehouse/import/import';
import { handOff } from '../../../src/warehouse/import/inbox';
import { ROLLUP_DATABASE } from '../support/constants';
import { testDataDir, type TestService } from '../support/service';
import { writeTinyGeo } from '../../support/tiny-geo';
import { bothApis, countOf, importOptions, rejectLines, rowsOf, serviceStarter } from './support';

const SAMPLES = path.resolve(__dirname, '..', '..', '..', 'samples');
const sample = (name: string) => path.join(SAMPLES, name);
const SCRATCH = mkdtempSync(path.join(os.tmpdir(), 'link-events-suite-'));

let connection: ReturnType<typeof createChdbConnection>;
let client: ClickHouseClient;
beforeAll(() => {
  connection = createChdbConnection({ path: testDataDir() });
  client = createClient({ connection: connection as never });
});
afterAll(async () => {
  for (const database of made) await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  connection.close();
  rmSync(SCRATCH, { recursive: true, force: true });
});

const made: string[] = [];
/** A database of its own with the tiny IP database loaded (128.232.0.0/16 France, 2001:630::/32 Japan). */
async function freshDatabase(): Promise<string> {
  const database = `link_events_${process.pid}_${made.length + 1}`;
  made.push(database, `${database}_import`);
  for (const statement of ddlStatements(database)) await client.command({ query: statement });
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database, rollupDatabase: ROLLUP_DATABASE });
  await ensureGeo(warehouse, writeTinyGeo(path.join(SCRATCH, database)));
  return database;
}

const options = (database: string, extra: Partial<ImportOptions> = {}): ImportOptions =>
  importOptions(database, database, mkdtempSync(path.join(SCRATCH, 'rejects-')), { source: 'link-events', ...extra });
const rows = <T = Record<string, unknown>>(query: string) => rowsOf<T>(client, query);
const count = (query: string) => countOf(client, query);

const IPHONE_INSTAGRAM =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 334.0.0.34.96';

/** Lines 5–8's viewer: SHA-256 of the warehouse's key, the address and the user agent, its first 16 bytes in hex. */
async function hashedViewer(database: string): Promise<string> {
  const [{ key }] = await rows<{ key: string }>(`SELECT key FROM ${database}.link_viewer_key`);
  return createHash('sha256').update(`${key}2001:630::5\n${IPHONE_INSTAGRAM}`).digest('hex').slice(0, 32);
}

/** The stored views, by hand from the sample: time, link, viewer, unique, utm source/medium/campaign, family, open, referer domain, country code and name, language. */
function expectedViews(hashed: string): string[][] {
  return [
    [
      '2026-01-05 10:00:00',
      'ep-42',
      'c-ann',
      'true',
      'newsletter',
      'email',
      'spring launch',
      'Mobile Safari',
      'apple-podcasts',
      'example.com',
      'fr',
      'France',
      'French',
    ],
    ['2026-01-05 10:10:00', 'ep-42', 'c-ann', 'false', '', '', '', 'Mobile Safari', '', '', 'fr', 'France', 'English'],
    ['2026-01-05 11:00:00', 'ep-42', hashed, 'true', 'instagram', 'social', '', 'Instagram', 'pocket-casts', 'l.instagram.com', 'jp', 'Japan', 'Japanese'],
    ['2026-01-05 11:20:00', 'ep-42', hashed, 'false', '', '', '', 'Instagram', 'overcast', '', 'jp', 'Japan', 'Japanese'],
    ['2026-01-06 08:00:00', 'show-7', 'c-ann', 'true', '', '', '', 'Chrome', '', 'podnews.net', '', '', ''],
    ['2026-01-06 08:15:00', 'show-7', 'c-bob', 'true', '', '', 'café', 'Facebook', '', '', '', '', 'Spanish'],
  ];
}

async function views(database: string, account = 'acme'): Promise<string[][]> {
  return (
    await rows<Record<string, unknown>>(`
    SELECT toString(ts), link, link_viewer, toString(is_unique), utm_source, utm_medium, utm_campaign, ua_family, open_param, referer_domain,
      country_code, country_name, language_name
    FROM ${database}.link_views WHERE account_id = '${account}' ORDER BY ts, link_viewer`)
  ).map((row) => Object.values(row).map(String));
}

const IMPORTED = { source: 'link-events', outcome: 'imported', rowsRead: 12, imported: 12, rejected: 0, views: 6, opened: 3, unmatchedOpens: 2, bots: 1 };

describe.each([
  ['chDB reads the file', true],
  ['sent as to a server', false],
])('%s', (_, engineReadsFiles) => {
  const formats: [string, string, Partial<ImportOptions>][] = [
    ['ndjson', 'link-events.ndjson', {}],
    ['csv', 'link-events.csv', {}],
    ['ndjson in statements of 3 rows', 'link-events.ndjson', { statementRows: 3 }],
    // As in the web events' suite: chDB's client, standing in for a server, takes a body as text only.
    ...(engineReadsFiles ? ([['parquet', 'link-events.parquet', {}]] as [string, string, Partial<ImportOptions>][]) : []),
  ];
  it.each(formats)('%s: the six views, three opened, the bot and two unmatched opens counted', async (name, file, extra) => {
    const database = await freshDatabase();
    const summary = await importFile(client, sample(file), options(database, { format: name.split(' ')[0], engineReadsFiles, ...extra }));
    expect(summary).toMatchObject({ ...IMPORTED, accounts: ['acme'], since: Date.parse('2026-01-05T00:00:00Z') / 1000 });
    expect(await views(database)).toEqual(expectedViews(await hashedViewer(database)));
    expect(await count(`SELECT count() AS n FROM ${database}.link_events WHERE account_id = 'acme' AND import_id != ''`)).toBe(12);
  });
});

it('link_views holds no address: the viewer of an event without one is a keyed hash', async () => {
  const database = await freshDatabase();
  await importFile(client, sample('link-events.ndjson'), options(database));
  const text = JSON.stringify(await rows(`SELECT * FROM ${database}.link_views`));
  for (const address of ['128.232.5.6', '2001:630::5', '203.0.113', '66.249.66.1']) expect(text).not.toContain(address);
  // Unkeyed, the hash of the address and agent would be this; with the warehouse's key it is not.
  const unkeyed = createHash('sha256').update(`2001:630::5\n${IPHONE_INSTAGRAM}`).digest('hex').slice(0, 32);
  expect(text).not.toContain(unkeyed);
});

describe('a second delivery', () => {
  it('of the same file, plain or compressed, adds nothing', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('link-events.ndjson'), options(database));
    const gz = path.join(SCRATCH, 'events.ndjson.gz');
    writeFileSync(gz, gzipSync(readFileSync(sample('link-events.ndjson'))));
    expect(await importFile(client, gz, options(database))).toMatchObject({ outcome: 'already imported', imported: 0, views: 0 });
    expect(await count(`SELECT count() AS n FROM ${database}.link_views`)).toBe(6);
  });

  it('of the same events in other formats adds nothing: each is already stored, by its fields', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('link-events.ndjson'), options(database));
    for (const format of ['csv', 'parquet']) {
      expect(await importFile(client, sample(`link-events.${format}`), options(database, { format }))).toMatchObject({
        outcome: 'imported',
        rowsRead: 12,
        imported: 0,
        duplicates: 12,
        views: 0,
      });
    }
    expect(await count(`SELECT count() AS n FROM ${database}.link_events`)).toBe(12);
    expect(await views(database)).toEqual(expectedViews(await hashedViewer(database)));
  });

  it('within one file, a copy of an event is the event once; an event differing in one field is another', async () => {
    const database = await freshDatabase();
    const [first] = readFileSync(sample('link-events.ndjson'), 'utf8').split('\n');
    const file = path.join(SCRATCH, 'copies.ndjson');
    writeFileSync(file, [first, first, first.replace('"c-ann"', '"c-eve"')].join('\n'));
    expect(await importFile(client, file, options(database))).toMatchObject({ rowsRead: 3, imported: 2, duplicates: 1, views: 2 });
  });
});

describe('views and opens in different files', () => {
  // c-ann views show-7 again at 08:20 (not unique: line 10 is hers), c-bob opens it at 08:30 (marks his view of 08:15,
  // line 12, 15 minutes before; c-ann's of 08:20 is another viewer's), and a view of ep-42 by c-ann a day later.
  const later = [
    { time: '2026-01-06T08:20:00Z', link: 'show-7', event: 'view', viewer: 'c-ann', ip: '203.0.113.5', userAgent: 'Mozilla/5.0 Firefox/127.0' },
    {
      time: '2026-01-06T08:30:00Z',
      link: 'show-7',
      event: 'open',
      viewer: 'c-bob',
      ip: '203.0.113.9',
      userAgent: 'Mozilla/5.0 Firefox/127.0',
      target: 'castro',
    },
  ];
  const write = (name: string, events: object[]) => {
    const file = path.join(SCRATCH, name);
    writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n'));
    return file;
  };
  const showSeven = async (database: string) => (await views(database)).filter((v) => v[1] === 'show-7').map((v) => [v[0], v[2], v[3], v[8]]);
  const SHOW_SEVEN = [
    ['2026-01-06 08:00:00', 'c-ann', 'true', ''],
    ['2026-01-06 08:15:00', 'c-bob', 'true', 'castro'],
    ['2026-01-06 08:20:00', 'c-ann', 'false', ''],
  ];

  it('an open marks a view imported before it; a view after another file’s is not unique', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('link-events.ndjson'), options(database));
    expect(await importFile(client, write('later.ndjson', later), options(database))).toMatchObject({ views: 1, opened: 1, unmatchedOpens: 0 });
    expect(await showSeven(database)).toEqual(SHOW_SEVEN);
  });

  it('an open after midnight marks a view of the day before: the answers change from that day (since)', async () => {
    const database = await freshDatabase();
    const view = { time: '2026-01-07T23:50:00Z', link: 'ep-42', event: 'view', viewer: 'c-dan', ip: '203.0.113.7', userAgent: 'Mozilla/5.0 Firefox/127.0' };
    await importFile(client, write('before-midnight.ndjson', [view]), options(database));
    const open = { ...view, time: '2026-01-08T00:10:00Z', event: 'open', target: 'overcast' };
    expect(await importFile(client, write('after-midnight.ndjson', [open]), options(database))).toMatchObject({
      opened: 1,
      since: Date.parse('2026-01-07T00:00:00Z') / 1000,
    });
    expect(await rows(`SELECT toString(ts) AS ts, open_param FROM ${database}.link_views`)).toEqual([{ ts: '2026-01-07 23:50:00', open_param: 'overcast' }]);
  });

  it('in the other order the views come out the same: the open, unmatched when it came, marks the view that came after it', async () => {
    const database = await freshDatabase();
    expect(await importFile(client, write('first.ndjson', later), options(database))).toMatchObject({ views: 1, opened: 0, unmatchedOpens: 1 });
    await importFile(client, sample('link-events.ndjson'), options(database));
    expect(await showSeven(database)).toEqual(SHOW_SEVEN);
  });
});

describe('the derived columns, rule by rule', () => {
  // One view each, of its own viewer (v1…), so each is unique and none opened; what each rule gives, by hand.
  const cases: [Record<string, string>, Record<string, string>][] = [
    [{ acceptLanguage: 'fr;q=0.5, de;q=0.5' }, { language_name: 'French' }], // a tie: the first
    [{ acceptLanguage: 'pt-BR' }, { language_name: 'Portuguese' }], // the region ignored
    [{ acceptLanguage: 'en;q=0, nl;q=0.1' }, { language_name: 'Dutch' }], // weight 0: not acceptable
    [{ acceptLanguage: 'xx-YY' }, { language_name: '' }], // no language of that code
    [{ acceptLanguage: 'DE_at' }, { language_name: 'German' }], // any case, an underscore before the region
    [{ url: 'https://links.example/l?utm_medium=a%2Bb+c&utm_source=x&utm_source=y' }, { utm_source: 'x', utm_medium: 'a+b+c', utm_campaign: '' }],
    [{ referer: 'HTTPS://WWW.Podnews.NET:8443/a?b' }, { referer_domain: 'podnews.net' }],
    [{ referer: 'https://wwwx.example/' }, { referer_domain: 'wwwx.example' }], // only a leading `www.` label goes
    [{ userAgent: 'SomethingNobodyKnows/1.0' }, { ua_family: 'Other' }],
    [{ ip: '::ffff:128.232.5.6' }, { country_code: 'fr', country_name: 'France' }], // IPv4-mapped: the IPv4 network's
  ];
  it.each(cases.map(([fields, expected], i) => [JSON.stringify(fields), fields, expected, i] as const))('%s', async (_, fields, expected, i) => {
    const database = await freshDatabase();
    const event = {
      time: '2026-01-05T10:00:00Z',
      link: 'l',
      event: 'view',
      viewer: `v${i}`,
      ip: '203.0.113.1',
      userAgent: 'Mozilla/5.0 Firefox/127.0',
      ...fields,
    };
    const file = path.join(SCRATCH, `rule-${i}.ndjson`);
    writeFileSync(file, JSON.stringify(event));
    expect(await importFile(client, file, options(database))).toMatchObject({ imported: 1, views: 1 });
    const [row] = await rows<Record<string, string>>(`SELECT ${Object.keys(expected).join(', ')} FROM ${database}.link_views`);
    expect(row).toEqual(expected);
  });
});

describe('bad rows', () => {
  const good = { time: '2026-01-05T10:00:00Z', link: 'ep-42', event: 'view', ip: '128.232.5.6', userAgent: 'Mozilla/5.0 Firefox/127.0' };
  const cases: [string, string][] = [
    ['not json', 'not a JSON object'],
    [JSON.stringify({ ...good, colour: 'blue' }), 'unknown field colour (--ignore-unknown skips unknown fields)'],
    [JSON.stringify({ ...good, time: '' }), 'time is missing'],
    [
      JSON.stringify({ ...good, time: '2026-01-05T25:00:00Z' }),
      'time is not a time from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z (ISO 8601; without a zone, UTC)',
    ],
    [JSON.stringify({ ...good, account: 'globex' }), 'account globex differs from --account acme'],
    [JSON.stringify({ ...good, link: '' }), 'link is missing'],
    [JSON.stringify({ ...good, event: 'click' }), 'event is not view or open'],
    [JSON.stringify({ ...good, ip: 'somewhere' }), 'ip is not an IPv4 or IPv6 address: somewhere'],
    [JSON.stringify({ ...good, event: 'open' }), 'an open without target (the app or service opened)'],
  ];
  const file = path.join(SCRATCH, 'bad.ndjson');
  writeFileSync(file, [JSON.stringify(good), ...cases.map(([text]) => text)].join('\n'));

  it('refuse the file, each named by its line and first reason in the reject file, and nothing is imported', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, file, options(database));
    expect(summary).toMatchObject({ outcome: 'refused', rowsRead: 1 + cases.length, imported: 0, rejected: cases.length });
    expect(rejectLines(summary)).toEqual(cases.map(([, reason], i) => [i + 2, reason]));
    expect(await count(`SELECT count() AS n FROM ${database}.link_events`)).toBe(0);
    expect(await count(`SELECT count() AS n FROM ${database}.link_views`)).toBe(0);
  });

  it('within --max-bad-rows, the good row is imported and viewed', async () => {
    const database = await freshDatabase();
    expect(await importFile(client, file, options(database, { maxBadRows: cases.length }))).toMatchObject({ outcome: 'imported', imported: 1, views: 1 });
  });

  it('without --account, a row that names none is refused', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, sample('link-events.ndjson'), options(database, { account: undefined, maxBadRows: 20 }));
    // Line 12 names acme itself.
    expect(summary).toMatchObject({ outcome: 'imported', imported: 1, rejected: 11 });
  });
});

it('an import killed after moving its events in leaves nothing: the next import removes them and their views', async () => {
  const database = await freshDatabase();
  await importFile(client, sample('link-events.ndjson'), options(database));
  // What a kill -9 after the derivation and before the 'done' record leaves: a 'started' record, rows carrying its id,
  // and the views derived from them: a copy of each event, the cookie viewers' as viewer k-… (four more views), the
  // hashed viewer's in its own group (two more views, and its views' opens and uniqueness taken apart).
  await client.command({
    query: `INSERT INTO ${database}.imports (id, hash, file, source, state, rows, from_ts, to_ts) VALUES ('killed', 'x', 'killed.ndjson', 'link-events', 'started', 12, '2026-01-05 00:00:00', '2026-01-06 23:59:59')`,
  });
  await client.command({
    query: `INSERT INTO ${database}.link_events SELECT * REPLACE (if(viewer = '', '', concat('k-', viewer)) AS viewer, 'killed' AS import_id) FROM ${database}.link_events`,
  });
  await deriveAllLinkViews(client, database, options(database).derivation);
  expect(await count(`SELECT count() AS n FROM ${database}.link_views`)).toBe(12);
  const other = path.join(SCRATCH, 'globex.ndjson');
  writeFileSync(other, JSON.stringify({ time: '2026-02-01T00:00:00Z', link: 'x', event: 'view', ip: '8.8.8.8', userAgent: 'Mozilla/5.0 Firefox/127.0' }));
  expect(await importFile(client, other, options(database, { account: 'globex' }))).toMatchObject({ imported: 1, views: 1 });
  expect(await views(database)).toEqual(expectedViews(await hashedViewer(database)));
  expect(await count(`SELECT count() AS n FROM ${database}.link_events WHERE account_id = 'acme'`)).toBe(12);
  expect(await count(`SELECT count() AS n FROM ${database}.imports WHERE id = 'killed'`)).toBe(0);
});

it('rows a pipeline inserted into link_events itself: `derive` makes their views', async () => {
  const database = await freshDatabase();
  // The sample's rows as a pipeline would write them: no import id.
  await client.command({
    query: `INSERT INTO ${database}.link_events (account_id, ts, event, link, viewer, ip, raw_ua, url, referer, accept_language, target)
      SELECT 'acme', parseDateTime64BestEffort(time, 3, 'UTC'), event, link, ifNull(viewer, ''), toIPv6(ip), userAgent, url, ifNull(referer, ''),
        ifNull(acceptLanguage, ''), ifNull(target, '')
      FROM file('${sample('link-events.ndjson')}', JSONEachRow,
        'time String, link String, event String, viewer Nullable(String), ip String, userAgent String, url String, referer Nullable(String), acceptLanguage Nullable(String), target Nullable(String)')`,
  });
  expect(await deriveAllLinkViews(client, database, options(database).derivation)).toEqual({ linkEvents: 12, linkViews: 6 });
  expect(await views(database)).toEqual(expectedViews(await hashedViewer(database)));
});

describe('imported link events, through both APIs', () => {
  const start = serviceStarter();
  const both = bothApis;
  const byLink = (cube: string, measures: string[]) => ({
    measures: measures.map((m) => `${cube}.${m}`),
    dimensions: [`${cube}.link`],
    order: { [`${cube}.link`]: 'asc' },
  });
  // By hand: ep-42 has views 1, 3, 5, 6 (1 and 5 unique; 1, 5 and 6 opened), show-7 views 10 and 12 (both unique, none opened).
  const ANSWERS: [string, string[], Record<string, string[]>][] = [
    ['LinksBasicAnalytics', ['linkViewCount', 'uniqueLinkViewCount'], { 'ep-42': ['4', '2'], 'show-7': ['2', '2'] }],
    ['LinksAdvancedAnalytics', ['linkViewCount', 'uniqueLinkViewCount', 'openLinkViewCount'], { 'ep-42': ['4', '2', '3'], 'show-7': ['2', '2', '0'] }],
    ['LinksDashboard', ['linkViewCount', 'uniqueLinkViewCount', 'openLinkViewCount'], { 'ep-42': ['4', '2', '3'], 'show-7': ['2', '2', '0'] }],
  ];
  const answersOf = async (service: TestService) => {
    const out: Record<string, Record<string, string[]>[]> = {};
    for (const [cube, measures] of ANSWERS) {
      out[cube] = (await both(service, byLink(cube, measures))).map((answer) =>
        Object.fromEntries(answer.map((r) => [String(r[`${cube}.link`]), measures.map((m) => String(Number(r[`${cube}.${m}`])))])),
      );
    }
    return out;
  };
  const expected = Object.fromEntries(ANSWERS.map(([cube, , answer]) => [cube, [answer, answer]]));

  it('a stopped service’s import: the three cubes count the views, unique views and opens by link', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('link-events.ndjson'), options(database));
    expect(await answersOf(await start(database))).toEqual(expected);
  }, 180_000);

  it('an import handed to the running service: its views in both APIs when the command returns', async () => {
    const database = await freshDatabase();
    const service = await start(database, {}, true);
    const empty = Object.fromEntries(ANSWERS.map(([cube]) => [cube, [{}, {}]]));
    expect(await answersOf(service)).toEqual(empty);
    const job = { source: 'link-events', format: 'csv', account: 'acme', maxBadRows: 0, ignoreUnknown: false, rejectsDir: SCRATCH };
    expect(await handOff(testDataDir(), sample('link-events.csv'), job, () => {})).toMatchObject({ ...IMPORTED, accounts: ['acme'] });
    expect(await answersOf(service)).toEqual(expected);
    // Its country and language breakdown, by hand: France 2 (French, English), Japan 2 (Japanese), none 2.
    const [countries] = await both(service, { measures: ['LinksAdvancedAnalytics.linkViewCount'], dimensions: ['LinksAdvancedAnalytics.countryName'] });
    expect(Object.fromEntries(countries.map((r) => [r['LinksAdvancedAnalytics.countryName'], Number(r['LinksAdvancedAnalytics.linkViewCount'])]))).toEqual({
      France: 2,
      Japan: 2,
      '': 2,
    });
  }, 180_000);
});
