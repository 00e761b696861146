/**
 * Website events through the one import: samples/web-events.* (the same eleven Snowplow events as enriched TSV, as
 * the analytics SDKs' JSON, and as Parquet) into web_events, their rejects, their second delivery, an import killed
 * half way, and the answers of both APIs and the funnel over imported requests and imported events. Every expected
 * value is the sample's, worked out by hand below; the funnel's also by the hand-written funnel of
 * query-language/funnel.suite.ts.
 *
 * The sample, account acme, beside samples/requests.ndjson's listeners: A is 203.0.113.5 (first download 2026-01-05
 * 08:00), B the IPv6 /64 2001:db8:1:2:: (first download 10:00 that day, from 2001:db8:1:2::10).
 *   1 A page view 01-05 08:30          6 B shop/purchase 24.95, 01-07 09:00
 *   2 A conversion/newsletter_signup   7 B conversion/membership_start 01-14 13:00 (7 days 1 hour after 4)
 *   3 A page_ping: skipped             8 C 128.232.5.6 page view, no derived_tstamp, port 8080
 *   4 B 2001:db8:1:2::abcd page view   9 C unstruct (a link click): skipped
 *     01-06 12:00, geo DE/Berlin      10 D 2001:630::5 page view, collector_tstamp only
 *   5 B player/play 01-06 12:05       11 event 1 again: a duplicate
 * C and D have no geo_* fields: their places come from the IP database (the run's tiny one: 128.232.0.0/16 is
 * France, Testville; 2001:630::/32 Japan, Testfurt); A's address is in none of its networks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { addressPlaces } from '../../../src/warehouse/geo/places';
import { importFile, ImportRefused, type ImportOptions } from '../../../src/warehouse/import/import';
import { handOff } from '../../../src/warehouse/import/inbox';
import { vectors } from '../derive/support';
import { funnelStepsSql } from '../support/catalog';
import { testDataDir } from '../support/service';
import { bothApis, formatCases, importSuite, sample, type Rows, serviceStarter } from './support';

const suite = importSuite('web_events');
const { scratch: SCRATCH, freshDatabase, withGeo, rows, count, rejectsOf } = suite;
let client: ClickHouseClient;
beforeAll(() => {
  client = suite.client;
});

const options = (database: string, extra: Partial<ImportOptions> = {}): ImportOptions =>
  suite.options(database, { source: 'web-events', format: 'snowplow', account: 'acme', ...extra });

/** The stored events, by hand from the sample: id (its last two digits), times, origin, address, places, structured fields. */
const STORED = [
  [
    '01',
    '2026-01-05 08:30:00.050',
    '2026-01-05 08:30:00.250',
    'https://www.acme-podcast.example',
    '203.0.113.5',
    '::ffff:203.0.113.5',
    '',
    '',
    '',
    '',
    null,
    null,
  ],
  [
    '02',
    '2026-01-05 08:40:00.100',
    '2026-01-05 08:40:00.400',
    'https://www.acme-podcast.example',
    '203.0.113.5',
    '::ffff:203.0.113.5',
    '',
    '',
    'conversion',
    'newsletter_signup',
    null,
    null,
  ],
  [
    '04',
    '2026-01-06 12:00:00.500',
    '2026-01-06 12:00:01.000',
    'https://www.acme-podcast.example',
    '0.0.0.0',
    '2001:db8:1:2::abcd',
    'Berlin',
    'Germany',
    '',
    '',
    null,
    52.52,
  ],
  [
    '05',
    '2026-01-06 12:05:00.500',
    '2026-01-06 12:05:01.000',
    'https://www.acme-podcast.example',
    '0.0.0.0',
    '2001:db8:1:2::abcd',
    'Berlin',
    'Germany',
    'player',
    'play',
    null,
    52.52,
  ],
  [
    '06',
    '2026-01-07 09:00:00.500',
    '2026-01-07 09:00:01.000',
    'https://www.acme-podcast.example',
    '0.0.0.0',
    '2001:db8:1:2::abcd',
    'Berlin',
    'Germany',
    'shop',
    'purchase',
    24.95,
    52.52,
  ],
  [
    '07',
    '2026-01-14 13:00:00.500',
    '2026-01-14 13:00:01.000',
    'https://www.acme-podcast.example',
    '0.0.0.0',
    '2001:db8:1:2::abcd',
    'Berlin',
    'Germany',
    'conversion',
    'membership_start',
    5,
    52.52,
  ],
  [
    '08',
    '2026-01-06 14:59:58.000',
    '2026-01-06 15:00:01.000',
    'http://acme-podcast.example:8080',
    '128.232.5.6',
    '::ffff:128.232.5.6',
    'Testville',
    'France',
    '',
    '',
    null,
    null,
  ],
  [
    '10',
    '2026-01-07 10:00:01.500',
    '2026-01-07 10:00:01.500',
    'https://www.acme-podcast.example',
    '0.0.0.0',
    '2001:630::5',
    'Testfurt',
    'Japan',
    '',
    '',
    null,
    null,
  ],
];

async function stored(database: string): Promise<unknown[][]> {
  return (
    await rows<Record<string, unknown>>(`
    SELECT right(toString(event_id), 2) AS id, toString(track_ts) AS track, toString(ingest_ts) AS ingest, origin, IPv4NumToString(ip4) AS ip4,
      IPv6NumToString(ip) AS ip, city, country, se_category, se_action, se_value, latitude
    FROM ${database}.web_events ORDER BY id`)
  ).map((row) => Object.values(row));
}

const IMPORTED = { source: 'web-events', outcome: 'imported', rowsRead: 11, imported: 8, rejected: 0, duplicates: 1, skipped: { page_ping: 1, unstruct: 1 } };

describe("the samples, built from Snowplow's field order", () => {
  it('samples/web-events.snowplow.tsv is samples/web-events.snowplow.ndjson, each line its 131 fields in the order the loaders write them', () => {
    const { fields } = vectors<{ fields: string[] }>('snowplow/enriched-fields.json');
    // The SDKs' JSON writes a timestamp in ISO 8601 (`…T08:30:00.250Z`), the loaders' TSV as `… 08:30:00.250`; a
    // shredded context or self-describing event (contexts_…, unstruct_event_…) is no field of the TSV line here.
    const asTsv = readFileSync(sample('web-events.snowplow.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((event) =>
        fields
          .map((f) => {
            const value = event[f];
            if (value === undefined || value === null) return '';
            return typeof value === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(value) ? value.replace('T', ' ').replace('Z', '') : String(value);
          })
          .join('\t'),
      );
    // The last fields of a line are often empty: only the file's last newline is taken off, not its tabs.
    expect(readFileSync(sample('web-events.snowplow.tsv'), 'utf8').replace(/\n$/, '').split('\n')).toEqual(asTsv);
  });
});

describe.each([
  ['chDB reads the file', true],
  ['sent as to a server', false],
])('%s', (_, engineReadsFiles) => {
  const formats = formatCases(
    engineReadsFiles,
    [
      ['snowplow', 'web-events.snowplow.tsv', {}],
      ['snowplow-json', 'web-events.snowplow.ndjson', {}],
      ['snowplow in statements of 3 rows', 'web-events.snowplow.tsv', { statementRows: 3 }],
    ],
    [
      ['parquet', 'web-events.parquet', {}],
      ['parquet in statements of 3 rows', 'web-events.parquet', { statementRows: 3 }],
    ],
  );
  it.each(formats)('%s: the eight events stored, two skipped by kind, the repeat of the first counted', async (name, file, extra) => {
    const database = await freshDatabase();
    const format = name.split(' ')[0];
    const summary = await importFile(client, sample(file), options(database, { format, engineReadsFiles, ...extra }));
    expect(summary).toMatchObject({ ...IMPORTED, accounts: ['acme'], since: Date.parse('2026-01-05T00:00:00Z') / 1000 });
    expect(await stored(database)).toEqual(STORED);
    expect(await count(`SELECT countIf(account_id = 'acme' AND app_id = 'acme-site' AND import_id != '') AS n FROM ${database}.web_events`)).toBe(8);
  });
});

it('a .gz of the TSV: the same events, and the same file as the plain one', async () => {
  const database = await freshDatabase();
  const gz = path.join(SCRATCH, 'events.tsv.gz');
  writeFileSync(gz, gzipSync(readFileSync(sample('web-events.snowplow.tsv'))));
  expect(await importFile(client, gz, options(database))).toMatchObject(IMPORTED);
  expect(await stored(database)).toEqual(STORED);
  expect(await importFile(client, sample('web-events.snowplow.tsv'), options(database))).toMatchObject({ outcome: 'already imported', imported: 0 });
});

describe('a second delivery', () => {
  it('of the same events in another format adds nothing: each is already stored by its event_id', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('web-events.snowplow.tsv'), options(database));
    // Nine rows of stored kinds: the eight events and the repeat of the first.
    expect(await importFile(client, sample('web-events.snowplow.ndjson'), options(database, { format: 'snowplow-json' }))).toMatchObject({
      outcome: 'imported',
      rowsRead: 11,
      imported: 0,
      duplicates: 9,
      skipped: { page_ping: 1, unstruct: 1 },
    });
    expect(await count(`SELECT count() AS n FROM ${database}.web_events`)).toBe(8);
  });

  it('a copy on the same UTC day as the stored event is it (a tracker’s retry); one on the next day, or for another account, is another event', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('web-events.snowplow.tsv'), options(database));
    const first = readFileSync(sample('web-events.snowplow.tsv'), 'utf8').split('\n')[0].split('\t');
    const copy = (derived: string) => first.map((cell, i) => (i === 124 ? derived : cell)).join('\t');
    const file = path.join(SCRATCH, 'retry.tsv');
    // The stored event is at 2026-01-05 08:30:00.050: 15 hours later that day, and a day later.
    writeFileSync(file, `${copy('2026-01-05 23:30:00.050')}\n${copy('2026-01-06 08:30:00.050')}\n`);
    expect(await importFile(client, file, options(database))).toMatchObject({ outcome: 'imported', rowsRead: 2, imported: 1, duplicates: 1 });
    expect(await rows(`SELECT toString(track_ts) AS t FROM ${database}.web_events WHERE right(toString(event_id), 2) = '01' ORDER BY t`)).toEqual([
      { t: '2026-01-05 08:30:00.050' },
      { t: '2026-01-06 08:30:00.050' },
    ]);
    // The same two lines for another account (another file: the same one again is already imported, whatever --account
    // says): neither is stored for it, and they lie on two days.
    const globex = path.join(SCRATCH, 'retry-globex.tsv');
    writeFileSync(globex, `${readFileSync(file, 'utf8')}\n`);
    expect(await importFile(client, globex, options(database, { account: 'globex' }))).toMatchObject({ imported: 2, duplicates: 0 });
  });

  it('within one file: of two copies that differ, the same one is kept whichever comes first', async () => {
    const first = readFileSync(sample('web-events.snowplow.tsv'), 'utf8').split('\n')[0].split('\t');
    const copy = (derived: string, title: string) => first.map((cell, i) => (i === 124 ? derived : i === 30 ? title : cell)).join('\t');
    const lines = [copy('2026-01-05 08:59:59.000', 'early'), copy('2026-01-05 09:00:01.000', 'late')];
    const kept: unknown[] = [];
    for (const order of [lines, [...lines].reverse()]) {
      const database = await freshDatabase();
      const file = path.join(SCRATCH, `copies-${kept.length}.tsv`);
      writeFileSync(file, `${order.join('\n')}\n`);
      expect(await importFile(client, file, options(database))).toMatchObject({ rowsRead: 2, imported: 1, duplicates: 1 });
      kept.push(...(await rows(`SELECT page_title FROM ${database}.web_events`)));
    }
    expect(kept).toHaveLength(2);
    expect(kept[1]).toEqual(kept[0]);
  });
});

describe('bad rows', () => {
  const good = readFileSync(sample('web-events.snowplow.tsv'), 'utf8').split('\n')[0].split('\t');
  const line = (changes: Record<number, string>) => good.map((cell, i) => changes[i] ?? cell).join('\t');
  const cases: [string, string][] = [
    [good.slice(0, 130).join('\t'), "not 131 tab-separated fields (Snowplow's enriched event)"],
    [line({ 3: '' }), 'collector_tstamp is missing'],
    [
      line({ 3: '2026-01-05 25:00:00' }),
      'collector_tstamp is not a time from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z (YYYY-MM-DD hh:mm:ss[.mmm], UTC, or ISO 8601)',
    ],
    [line({ 6: '' }), 'event_id is missing'],
    [line({ 6: 'not-a-uuid' }), 'event_id is not a UUID'],
    [line({ 5: '' }), 'event is missing'],
    [
      line({ 124: 'yesterday' }),
      'derived_tstamp is not a time from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z (YYYY-MM-DD hh:mm:ss[.mmm], UTC, or ISO 8601)',
    ],
    [line({ 5: 'struct', 53: '' }), 'a structured event without se_category'],
    [line({ 5: 'struct', 53: 'shop', 57: 'lots' }), 'se_value is not a number'],
    [line({ 22: 'north' }), 'geo_latitude is not a number'],
  ];
  const file = path.join(SCRATCH, 'bad.tsv');
  // Each bad line with an id of its own, after two good events (lines 1 and 2, the sample's first and second).
  const second = readFileSync(sample('web-events.snowplow.tsv'), 'utf8').split('\n')[1];
  writeFileSync(file, [good.join('\t'), second, ...cases.map(([text]) => text)].join('\n'));

  it('refuse the file, each named by its line and first reason in the reject file, and nothing is imported', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, file, options(database));
    expect(summary).toMatchObject({ outcome: 'refused', rowsRead: 2 + cases.length, imported: 0, rejected: cases.length });
    expect(rejectsOf(summary)).toEqual(cases.map(([, reason], i) => [i + 3, reason]));
    expect(await count(`SELECT count() AS n FROM ${database}.web_events`)).toBe(0);
  });

  it('within --max-bad-rows, the good rows are imported', async () => {
    const database = await freshDatabase();
    expect(await importFile(client, file, options(database, { maxBadRows: cases.length }))).toMatchObject({ outcome: 'imported', imported: 2 });
  });

  it('JSON: a key that is no field is refused unless --ignore-unknown; the SDKs’ shredded contexts are no error', async () => {
    const database = await freshDatabase();
    const json = path.join(SCRATCH, 'unknown.ndjson');
    const [event] = readFileSync(sample('web-events.snowplow.ndjson'), 'utf8').split('\n');
    writeFileSync(json, `${event}\n${event.replace('"app_id"', '"colour":"blue","app_id"').replace('405001', '405099')}\n`);
    const refused = await importFile(client, json, options(database, { format: 'snowplow-json' }));
    expect(refused).toMatchObject({ outcome: 'refused', rejected: 1 });
    expect(rejectsOf(refused)).toEqual([[2, 'unknown field colour (--ignore-unknown skips unknown fields)']]);
    expect(await importFile(client, json, options(database, { format: 'snowplow-json', ignoreUnknown: true }))).toMatchObject({ imported: 2 });
  });

  it('a path that is no file is refused by name, before anything is read', async () => {
    const database = await freshDatabase();
    for (const missing of [path.join(SCRATCH, 'no-such.tsv'), SCRATCH]) {
      await expect(importFile(client, missing, options(database))).rejects.toThrow(new ImportRefused(`${missing}: no such file`));
    }
  });

  it('a file without --account is refused whole: Snowplow events name no account', async () => {
    const database = await freshDatabase();
    await expect(importFile(client, sample('web-events.snowplow.tsv'), options(database, { account: undefined }))).rejects.toThrow(
      new ImportRefused(`${sample('web-events.snowplow.tsv')}: events name no account: give the file --account`),
    );
  });
});

it('an import killed after moving its events in leaves nothing: the next import removes them', async () => {
  const database = await freshDatabase();
  await importFile(client, sample('web-events.snowplow.tsv'), options(database));
  // What a kill -9 between the move and the 'done' record leaves: a 'started' record and rows carrying its id.
  await client.command({
    query: `INSERT INTO ${database}.imports (id, hash, file, source, state, rows, from_ts, to_ts) VALUES ('killed', 'x', 'killed.tsv', 'web-events', 'started', 8, '2026-01-05 00:00:00', '2026-01-14 23:59:59')`,
  });
  await client.command({
    query: `INSERT INTO ${database}.web_events SELECT * REPLACE (generateUUIDv4() AS event_id, 'killed' AS import_id) FROM ${database}.web_events`,
  });
  expect(await count(`SELECT count() AS n FROM ${database}.web_events`)).toBe(16);
  expect(await importFile(client, sample('web-events.snowplow.ndjson'), options(database, { format: 'snowplow-json' }))).toMatchObject({ imported: 0 });
  expect(await count(`SELECT count() AS n FROM ${database}.web_events`)).toBe(8);
  expect(await count(`SELECT count() AS n FROM ${database}.imports WHERE id = 'killed'`)).toBe(0);
});

describe('imported listeners and imported website events, through both APIs', () => {
  // Databases of their own with the tiny IP database: `imported` holds samples/requests.ndjson and the events, whose
  // listeners are A (203.0.113.5) and B (2001:db8:1:2::/64), entering 2026-01-05 08:00 and 10:00 (their first IAB
  // downloads); `handed` starts empty, for the events handed to a running service.
  let imported: string;
  let handed: string;
  beforeAll(async () => {
    imported = await withGeo();
    handed = await withGeo();
    const places = addressPlaces(imported);
    const requests = { ...options(imported), source: 'requests', format: 'ndjson', derivation: { ...options(imported).derivation, places } };
    expect(await importFile(client, sample('requests.ndjson'), requests)).toMatchObject({ outcome: 'imported', downloads: 3 });
    const events = { ...options(imported), derivation: { ...options(imported).derivation, places } };
    expect(await importFile(client, sample('web-events.snowplow.tsv'), events)).toMatchObject(IMPORTED);
  }, 120_000);
  const start = serviceStarter();
  const both = bothApis;
  const byCountry = { measures: ['WebEvents.count'], dimensions: ['WebEvents.country'] };
  const countries = (rows: Rows) => Object.fromEntries(rows.map((r) => [r['WebEvents.country'], Number(r['WebEvents.count'])]));
  // By hand: A's two events have no place, B's four Germany (geo_*), C France and D Japan (the tiny IP database).
  const COUNTRIES = { '': 2, Germany: 4, France: 1, Japan: 1 };
  const funnel = { measures: ['WebEventsFromPodcastFunnel.conversions'], dimensions: ['WebEventsFromPodcastFunnel.step'] };
  const steps = (rows: Rows) =>
    Object.fromEntries(rows.map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])]));
  const byHand = async (visit: string, conversion: string) =>
    Object.fromEntries(
      (await rows<{ k: string; v: string }>(funnelStepsSql(imported, "account_id = 'acme'", '1 = 1', { visit, conversion }))).map((r) => [r.k, Number(r.v)]),
    );

  it('WebEvents by country in both APIs', async () => {
    const service = await start(imported);
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual(COUNTRIES);
  }, 180_000);

  it('an import handed to the running service: its events in both APIs when the command returns', async () => {
    const service = await start(handed, {}, true);
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual({});
    // A file the service refuses whole is refused as the command alone refuses it, by name and reason.
    const job = { source: 'web-events', format: 'snowplow', maxBadRows: 0, ignoreUnknown: false, rejectsDir: SCRATCH };
    await expect(handOff(testDataDir(), sample('web-events.snowplow.tsv'), job, () => {})).rejects.toThrow(
      new ImportRefused(`${sample('web-events.snowplow.tsv')}: events name no account: give the file --account`),
    );
    const summary = await handOff(testDataDir(), sample('web-events.snowplow.tsv'), { ...job, account: 'acme' }, () => {});
    expect(summary).toMatchObject({ ...IMPORTED, accounts: ['acme'] });
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual(COUNTRIES);
  }, 180_000);

  // The funnel with each setting, its steps worked out by hand above, and the funnel written by hand (a step nobody
  // reached is a row of 0 in the answer, and no row in the hand-written one).
  const funnels: [string, Record<string, string>, { visit: string; conversion: string }, [number, number, number]][] = [
    [
      'by default, A converts; B, an IPv6 listener, visits from another address of its /64 and converts 7 days 1 hour later, too late',
      {},
      { visit: "se_category = ''", conversion: "se_category = 'conversion'" },
      [2, 2, 1],
    ],
    [
      'FUNNEL_CONVERSION=conversion,shop/purchase: B’s purchase the day after its visit converts it too',
      { FUNNEL_CONVERSION: 'conversion,shop/purchase' },
      { visit: "se_category = ''", conversion: "(se_category = 'conversion' OR (se_category = 'shop' AND se_action = 'purchase'))" },
      [2, 2, 2],
    ],
    [
      'FUNNEL_VISIT=player: only B plays an episode, and no conversion follows within 7 days of that',
      { FUNNEL_VISIT: 'player' },
      { visit: "se_category = 'player'", conversion: "se_category = 'conversion'" },
      [2, 1, 0],
    ],
  ];
  it.each(funnels)(
    'the funnel: %s',
    async (_, env, conditions, [download, visit, conversion]) => {
      const service = await start(imported, env);
      const expected = { 'Podcast Download': download, 'Website Visit': visit, Conversion: conversion };
      for (const answer of await both(service, funnel)) expect(steps(answer)).toEqual(expected);
      expect({ Conversion: 0, ...(await byHand(conditions.visit, conditions.conversion)) }).toEqual(expected);
    },
    180_000,
  );

  it('WebEvents joins the funnel by the listener: B’s events from 2001:db8:1:2::abcd are its steps', async () => {
    const service = await start(imported);
    const [answer] = await bothApis(service, {
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.ip4', 'WebEventsFromPodcastFunnel.step'],
    });
    const reached = answer
      .filter((r) => r['WebEventsFromPodcastFunnel.step'] !== null)
      .map((r) => `${r['WebEvents.ip4']} ${r['WebEventsFromPodcastFunnel.step']}`);
    // A reached three steps, B two; each of its events (A 2, B 4) is counted in each step it reached.
    expect(reached.sort()).toEqual(
      ['0.0.0.0 Podcast Download', '0.0.0.0 Website Visit', '203.0.113.5 Conversion', '203.0.113.5 Podcast Download', '203.0.113.5 Website Visit'].sort(),
    );
  }, 180_000);
});
