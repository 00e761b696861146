/**
 * Chart positions through the one import: samples/charts.* into channel_ranks and episode_ranks, every format, a
 * snapshot delivered again (replaced, never doubled), bad rows, an import killed half way, and both APIs, of a
 * stopped and a running service. Every expected value is the sample's, worked out by hand below.
 *
 * charts.ndjson, charts.csv and charts.parquet hold the same eight positions on 2026-01-05: Apple's France News chart
 * of the day (a `date`: midnight UTC), three shows and two episodes; Spotify's Sweden Comedy chart at 06:00 UTC
 * (a `time`, its country written SE), two shows and one episode. charts.apple.json: Apple's US top shows, five,
 * updated Mon, 05 Jan 2026 08:12:34 +0000, no category (All, unless --category). charts.apple-episodes.json: Apple's
 * GB top episodes, three, Tue, 06 Jan 2026 07:00:00 +0000. charts.spotify.json: four shows, and
 * charts.spotify-episodes.json two episodes, of a chart whose country, category and day only the command says.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { importFile, ImportRefused, type ImportOptions } from '../../../src/warehouse/import/import';
import { handOff } from '../../../src/warehouse/import/inbox';
import { testDataDir } from '../support/service';
import { bothApis, formatCases, importSuite, sample, type Rows, serviceStarter } from './support';

const suite = importSuite('charts');
const { scratch: SCRATCH, freshDatabase, withGeo, rows, count, rejectsOf } = suite;
let client: ClickHouseClient;
beforeAll(() => {
  client = suite.client;
});

const options = (database: string, extra: Partial<ImportOptions> = {}): ImportOptions =>
  suite.options(database, { source: 'charts', format: 'ndjson', ...extra });

/** channel_ranks as text, ordered: time, platform, country code and name, category, rank, podcast id and slug. */
async function shows(database: string): Promise<string[]> {
  return (
    await rows<{ r: string }>(`
    SELECT concat_ws(' | ', toString(snapshot_ts), platform, country_code, country_name, category, toString(rank), podcast_id, podcast_slug) AS r
    FROM ${database}.channel_ranks ORDER BY snapshot_ts, platform, country_code, category, rank`)
  ).map((row) => row.r);
}

/** episode_ranks as text, ordered: time, platform, country code, category, rank, episode id and title, podcast slug. */
async function episodes(database: string): Promise<string[]> {
  return (
    await rows<{ r: string }>(`
    SELECT concat_ws(' | ', toString(snapshot_ts), platform, country_code, category, toString(rank), episode_id, episode_title, podcast_slug) AS r
    FROM ${database}.episode_ranks ORDER BY snapshot_ts, platform, country_code, category, rank`)
  ).map((row) => row.r);
}

/** The eight positions of charts.ndjson, .csv and .parquet, by hand. */
const SAMPLE_SHOWS = [
  '2026-01-05 00:00:00 | apple | fr | France | News | 1 | 1500000001 | the-morning-ledger',
  '2026-01-05 00:00:00 | apple | fr | France | News | 2 | 1500000005 | case-files-unsealed',
  '2026-01-05 00:00:00 | apple | fr | France | News | 3 | 1500000002 | tidal-histories',
  '2026-01-05 06:00:00 | spotify | se | Sweden | Comedy | 1 | spotify:show:0aCmEaUdIoShOwOnE00003 | ',
  '2026-01-05 06:00:00 | spotify | se | Sweden | Comedy | 2 | spotify:show:0aCmEaUdIoShOwOnE00001 | ',
];
const SAMPLE_EPISODES = [
  '2026-01-05 00:00:00 | apple | fr | News | 1 | 1000700000001 | Markets at the open | the-morning-ledger',
  '2026-01-05 00:00:00 | apple | fr | News | 2 | 1000700000003 | A door left open | case-files-unsealed',
  '2026-01-05 06:00:00 | spotify | se | Comedy | 1 | spotify:episode:1aCmEeP000000000000002 | Stand-up on the night bus | ',
];

/** charts.apple.json, by hand: its five shows in the order of feed.results, the slug from each url. */
const appleShows = (category: string) =>
  [
    ['1500000001', 'the-morning-ledger'],
    ['1500000002', 'tidal-histories'],
    ['1500000003', 'laugh-track-weekly'],
    ['1500000004', 'garden-grain'],
    ['1500000005', 'case-files-unsealed'],
  ].map(([id, slug], i) => `2026-01-05 08:12:34 | apple | us | United States | ${category} | ${i + 1} | ${id} | ${slug}`);

const DAY_2026_01_05 = Date.parse('2026-01-05T00:00:00Z') / 1000;

describe.each([
  ['chDB reads the file', true],
  ['sent as to a server', false],
])('%s', (_, engineReadsFiles) => {
  const formats = formatCases(
    engineReadsFiles,
    [
      ['ndjson', 'charts.ndjson', {}],
      ['csv', 'charts.csv', {}],
      ['ndjson in statements of 3 rows', 'charts.ndjson', { statementRows: 3 }],
    ],
    [
      ['parquet', 'charts.parquet', {}],
      ['parquet in statements of 3 rows', 'charts.parquet', { statementRows: 3 }],
    ],
  );
  it.each(formats)('%s: five shows into channel_ranks, three episodes into episode_ranks', async (name, file, extra) => {
    const database = await freshDatabase();
    const summary = await importFile(client, sample(file), options(database, { format: name.split(' ')[0], engineReadsFiles, ...extra }));
    expect(summary).toMatchObject({
      source: 'charts',
      outcome: 'imported',
      rowsRead: 8,
      imported: 8,
      rejected: 0,
      replaced: 0,
      accounts: [],
      since: DAY_2026_01_05,
    });
    expect(await shows(database)).toEqual(SAMPLE_SHOWS);
    expect(await episodes(database)).toEqual(SAMPLE_EPISODES);
  });

  it.each([
    ['', {}],
    [' in statements of 2 rows', { statementRows: 2 }],
  ])('apple-charts%s: a chart of shows, its category All unless --category; a chart of episodes', async (_, extra) => {
    const database = await freshDatabase();
    const apple = options(database, { format: 'apple-charts', engineReadsFiles, ...extra });
    expect(await importFile(client, sample('charts.apple.json'), apple)).toMatchObject({ outcome: 'imported', rowsRead: 5, imported: 5, replaced: 0 });
    expect(await shows(database)).toEqual(appleShows('All'));
    const episodesFile = await importFile(client, sample('charts.apple-episodes.json'), { ...apple, given: { category: 'Comedy' } });
    expect(episodesFile).toMatchObject({ outcome: 'imported', rowsRead: 3, imported: 3, since: Date.parse('2026-01-06T00:00:00Z') / 1000 });
    expect(await episodes(database)).toEqual([
      '2026-01-06 07:00:00 | apple | gb | Comedy | 1 | 1000700000001 | Markets at the open | the-morning-ledger',
      '2026-01-06 07:00:00 | apple | gb | Comedy | 2 | 1000700000002 | The lighthouse keepers | tidal-histories',
      '2026-01-06 07:00:00 | apple | gb | Comedy | 3 | 1000700000003 | A door left open | case-files-unsealed',
    ]);
    expect(await count(`SELECT count() AS n FROM ${database}.channel_ranks`)).toBe(5);
  });

  it.each([
    ['', {}],
    [' in statements of 3 rows', { statementRows: 3 }],
  ])('spotify-charts%s: rank by position, country, category and day from the command', async (_, extra) => {
    const database = await freshDatabase();
    const given = { country: 'de', category: 'Comedy', date: '2026-01-05' };
    const spotify = options(database, { format: 'spotify-charts', engineReadsFiles, given, ...extra });
    expect(await importFile(client, sample('charts.spotify.json'), spotify)).toMatchObject({ outcome: 'imported', rowsRead: 4, imported: 4 });
    expect(await importFile(client, sample('charts.spotify-episodes.json'), spotify)).toMatchObject({ outcome: 'imported', rowsRead: 2, imported: 2 });
    expect(await shows(database)).toEqual([
      '2026-01-05 00:00:00 | spotify | de | Germany | Comedy | 1 | spotify:show:0aCmEaUdIoShOwOnE00001 | ',
      '2026-01-05 00:00:00 | spotify | de | Germany | Comedy | 2 | spotify:show:0aCmEaUdIoShOwOnE00003 | ',
      '2026-01-05 00:00:00 | spotify | de | Germany | Comedy | 3 | spotify:show:0hArBoUrSoUnDsHoW00002 | ',
      '2026-01-05 00:00:00 | spotify | de | Germany | Comedy | 4 | spotify:show:0qUiEtSiGnAlShOw000005 | ',
    ]);
    expect(await episodes(database)).toEqual([
      '2026-01-05 00:00:00 | spotify | de | Comedy | 1 | spotify:episode:1aCmEeP000000000000001 | Markets at the open | ',
      '2026-01-05 00:00:00 | spotify | de | Comedy | 2 | spotify:episode:1aCmEeP000000000000002 | Stand-up on the night bus | ',
    ]);
  });
});

it('a .gz of the Apple chart: the same positions, and the same file as the plain one', async () => {
  const database = await freshDatabase();
  const gz = path.join(SCRATCH, 'apple.json.gz');
  writeFileSync(gz, gzipSync(readFileSync(sample('charts.apple.json'))));
  expect(await importFile(client, gz, options(database, { format: 'apple-charts' }))).toMatchObject({ imported: 5 });
  expect(await shows(database)).toEqual(appleShows('All'));
  expect(await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts' }))).toMatchObject({
    outcome: 'already imported',
    imported: 0,
  });
  // Read whole into a staging table first, as a running service reads it (in statements of 2 rows).
  const staged = await freshDatabase();
  expect(await importFile(client, gz, options(staged, { format: 'apple-charts', statementRows: 2 }))).toMatchObject({ imported: 5 });
  expect(await shows(staged)).toEqual(appleShows('All'));
});

describe('a snapshot delivered again', () => {
  /** charts.apple.json corrected: its entries `order` (1-based positions of the sample's), under `updated`. */
  const corrected = (name: string, order: number[], updated = 'Mon, 05 Jan 2026 08:12:34 +0000') => {
    const feed = JSON.parse(readFileSync(sample('charts.apple.json'), 'utf8')) as { feed: { updated: string; results: unknown[] } };
    const file = path.join(SCRATCH, name);
    writeFileSync(file, JSON.stringify({ feed: { ...feed.feed, updated, results: order.map((i) => feed.feed.results[i - 1]) } }));
    return file;
  };

  it('replaces the one stored: a corrected chart of four shows leaves four, not nine; other snapshots stay', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.ndjson'), options(database));
    await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts' }));
    // The same chart under another category is another snapshot.
    await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts', given: { category: 'Comedy' } }));
    const summary = await importFile(client, corrected('fixed.json', [2, 1, 4, 5]), options(database, { format: 'apple-charts' }));
    expect(summary).toMatchObject({ outcome: 'imported', rowsRead: 4, imported: 4, replaced: 5 });
    const all = appleShows('All');
    const fixed = [all[1], all[0], all[3], all[4]].map((r, i) => r.replace(/\| All \| \d \|/, `| All | ${i + 1} |`));
    expect(await shows(database)).toEqual([...SAMPLE_SHOWS, ...appleShows('Comedy'), ...fixed].sort(byTimeAndChart));
    expect(await episodes(database)).toEqual(SAMPLE_EPISODES);
    // Hand-written: every snapshot holds each rank once.
    expect(
      await count(
        `SELECT count() AS n FROM (SELECT 1 FROM ${database}.channel_ranks GROUP BY platform, country_code, category, snapshot_ts, rank HAVING count() > 1)`,
      ),
    ).toBe(0);
  });

  it('at another time is another snapshot, kept beside it', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts' }));
    const later = corrected('later.json', [1, 2], 'Mon, 05 Jan 2026 20:00:00 +0000');
    expect(await importFile(client, later, options(database, { format: 'apple-charts' }))).toMatchObject({ imported: 2, replaced: 0 });
    expect(await count(`SELECT count() AS n FROM ${database}.channel_ranks`)).toBe(7);
  });

  it('of shows only leaves the snapshot’s episodes as they were, and the other way round', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.ndjson'), options(database));
    const lines = readFileSync(sample('charts.ndjson'), 'utf8').trim().split('\n');
    // Spotify's Sweden Comedy shows again, the two swapped (lines 4 and 5 of the sample, ranks exchanged).
    const swapped = path.join(SCRATCH, 'swapped.ndjson');
    writeFileSync(swapped, `${lines[3].replace('"rank":1', '"rank":2')}\n${lines[4].replace('"rank":2', '"rank":1')}\n`);
    expect(await importFile(client, swapped, options(database))).toMatchObject({ imported: 2, replaced: 2 });
    expect(await shows(database)).toEqual([
      ...SAMPLE_SHOWS.slice(0, 3),
      '2026-01-05 06:00:00 | spotify | se | Sweden | Comedy | 1 | spotify:show:0aCmEaUdIoShOwOnE00001 | ',
      '2026-01-05 06:00:00 | spotify | se | Sweden | Comedy | 2 | spotify:show:0aCmEaUdIoShOwOnE00003 | ',
    ]);
    expect(await episodes(database)).toEqual(SAMPLE_EPISODES);
  });

  it('in the same file again adds nothing', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.csv'), options(database, { format: 'csv' }));
    expect(await importFile(client, sample('charts.csv'), options(database, { format: 'csv' }))).toMatchObject({ outcome: 'already imported', imported: 0 });
    expect(await count(`SELECT count() AS n FROM ${database}.channel_ranks`)).toBe(5);
  });

  it('the same file of a chart that names no day, for another --date, is another snapshot; for the same, nothing', async () => {
    const database = await freshDatabase();
    const spotify = (date: string) => options(database, { format: 'spotify-charts', given: { country: 'de', category: 'Comedy', date } });
    expect(await importFile(client, sample('charts.spotify.json'), spotify('2026-01-05'))).toMatchObject({ outcome: 'imported', imported: 4 });
    expect(await importFile(client, sample('charts.spotify.json'), spotify('2026-01-06'))).toMatchObject({ outcome: 'imported', imported: 4, replaced: 0 });
    expect(await importFile(client, sample('charts.spotify.json'), spotify('2026-01-06'))).toMatchObject({ outcome: 'already imported' });
    expect(await rows(`SELECT toString(toDate(snapshot_ts)) AS day, count() AS n FROM ${database}.channel_ranks GROUP BY day ORDER BY day`)).toEqual([
      { day: '2026-01-05', n: 4 },
      { day: '2026-01-06', n: 4 },
    ]);
  });
});

/** Rows of channel_ranks as shows() writes them, in its order (time, platform, country, category, rank). */
function byTimeAndChart(a: string, b: string): number {
  const key = (r: string) => {
    const [time, platform, country, , category, rank] = r.split(' | ');
    return [time, platform, country, category, rank.padStart(5, '0')].join(' ');
  };
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

describe('bad rows', () => {
  const good = readFileSync(sample('charts.ndjson'), 'utf8').trim().split('\n')[0];
  const row = (changes: Record<string, unknown>, drop: string[] = []) => {
    const fields = { ...(JSON.parse(good) as Record<string, unknown>), ...changes };
    for (const f of drop) delete fields[f];
    return JSON.stringify(fields);
  };
  const cases: [string, string][] = [
    ['[1, 2]', 'not a JSON object'],
    [row({ colour: 'blue' }), 'unknown field colour (--ignore-unknown skips unknown fields)'],
    [row({}, ['date']), 'no time: give the row a time or date, or the file --date'],
    [row({ date: '2026-02-30' }), 'date is not a day (YYYY-MM-DD)'],
    [row({ time: 'yesterday' }), "time is not a time (ISO 8601, or RFC 2822 as Apple's feed.updated writes it)"],
    [row({ time: '2200-01-01T00:00:00Z' }), 'time is outside 1970-01-01T00:00:00Z … 2106-02-07T06:28:15Z, the times the warehouse holds'],
    [row({}, ['chart']), 'chart is missing: shows or episodes (of an Apple entry, its kind: podcasts or podcast-episodes)'],
    [row({ chart: 'albums' }), 'chart is albums, not shows or episodes'],
    [row({}, ['platform']), 'platform is missing'],
    [row({}, ['country']), 'no country: give the row a country or the file --country'],
    [row({ country: 'xx' }), 'country xx is no ISO 3166-1 alpha-2 code'],
    [row({ country: 'France' }), 'country france is no ISO 3166-1 alpha-2 code'],
    [row({}, ['rank']), 'rank is missing'],
    [row({ rank: 0 }), 'rank is not a whole number from 1 to 65535'],
    [row({ rank: 70000 }), 'rank is not a whole number from 1 to 65535'],
    [row({ rank: 2.5 }), 'rank is not a whole number from 1 to 65535'],
    [row({}, ['podcastId']), 'podcastId is missing'],
    [row({ chart: 'episodes' }), 'episodeId is missing'],
  ];
  const file = path.join(SCRATCH, 'bad.ndjson');
  // Each bad line after two good positions (lines 1 and 2, the sample's first and second).
  const second = readFileSync(sample('charts.ndjson'), 'utf8').split('\n')[1];
  writeFileSync(file, [good, second, ...cases.map(([text]) => text)].join('\n'));

  it('refuse the file, each named by its line and first reason in the reject file, and nothing is imported', async () => {
    const database = await freshDatabase();
    const summary = await importFile(client, file, options(database));
    expect(summary).toMatchObject({ outcome: 'refused', rowsRead: 2 + cases.length, imported: 0, rejected: cases.length });
    expect(rejectsOf(summary)).toEqual(cases.map(([, reason], i) => [i + 3, reason]));
    expect(await count(`SELECT count() AS n FROM ${database}.channel_ranks`)).toBe(0);
  });

  it('within --max-bad-rows, the good rows are imported', async () => {
    const database = await freshDatabase();
    expect(await importFile(client, file, options(database, { maxBadRows: cases.length }))).toMatchObject({ outcome: 'imported', imported: 2 });
  });

  it('what the command says must agree with what the file says; a Spotify chart without --date has no day', async () => {
    const database = await freshDatabase();
    const apple = await importFile(
      client,
      sample('charts.apple.json'),
      options(database, { format: 'apple-charts', given: { country: 'gb', date: '2026-01-06' }, maxBadRows: 5 }),
    );
    // Both differ: the day's reason is the first.
    expect(rejectsOf(apple)).toEqual([1, 2, 3, 4, 5].map((i) => [i, 'the day 2026-01-05 differs from --date 2026-01-06']));
    const spotify = await importFile(
      client,
      sample('charts.spotify.json'),
      options(database, { format: 'spotify-charts', given: { country: 'de' }, maxBadRows: 4 }),
    );
    expect(rejectsOf(spotify)).toEqual([1, 2, 3, 4].map((i) => [i, 'no time: give the row a time or date, or the file --date']));
    const csv = await importFile(client, sample('charts.csv'), options(database, { format: 'csv', given: { category: 'News' }, maxBadRows: 3 }));
    expect(rejectsOf(csv)).toEqual([5, 6, 9].map((line) => [line, 'category Comedy differs from --category News']));
    const badDay = await importFile(
      client,
      sample('charts.spotify-episodes.json'),
      options(database, { format: 'spotify-charts', given: { country: 'de', date: '5.1.2026' }, maxBadRows: 2 }),
    );
    expect(rejectsOf(badDay)).toEqual([1, 2].map((i) => [i, '--date 5.1.2026 is not a day (YYYY-MM-DD)']));
  });

  it('a JSON document that is no chart of its format is rejected', async () => {
    const database = await freshDatabase();
    const notApple = path.join(SCRATCH, 'not-apple.json');
    writeFileSync(notApple, '{"feed": {"country": "us", "results": []}}');
    const summary = await importFile(client, notApple, options(database, { format: 'apple-charts' }));
    expect(rejectsOf(summary)).toEqual([[1, "not an Apple chart: no entries in feed.results (Apple's marketing-tools RSS JSON)"]]);
    const notSpotify = path.join(SCRATCH, 'not-spotify.json');
    writeFileSync(notSpotify, '[{"showUri": "spotify:show:a"}, {"episodes": 2}]');
    const given = { country: 'de', date: '2026-01-05' };
    expect(rejectsOf(await importFile(client, notSpotify, options(database, { format: 'spotify-charts', given, maxBadRows: 1 })))).toEqual([
      [2, 'chart is missing: shows or episodes (of an Apple entry, its kind: podcasts or podcast-episodes)'],
    ]);
  });

  it.each([
    ['apple-charts', 'an HTML page', '<html>Service Unavailable</html>', "JSON object must begin with '{'"],
    ['spotify-charts', 'an array of strings', '["spotify:show:a"]', "JSON object must begin with '{'"],
    ['apple-charts', 'JSON cut short', '{"feed": {"country": "us", "results": [', 'Unexpected end of file while parsing JSON object'],
  ])('%s: a file that is no JSON of objects (%s) is refused whole by the reader’s reason, nothing imported', async (format, _, text, reason) => {
    const database = await freshDatabase();
    const file = path.join(SCRATCH, `unreadable-${format}.json`);
    writeFileSync(file, text);
    const given = { country: 'de', date: '2026-01-05' };
    await expect(importFile(client, file, options(database, { format, given }))).rejects.toThrow(
      new ImportRefused(`${file}: not ${format} that ClickHouse's reader can read: ${reason}`),
    );
    expect(await count(`SELECT count() AS n FROM ${database}.imports`)).toBe(0);
  });

  it('a file with --account, or an option charts do not take, is refused whole', async () => {
    const database = await freshDatabase();
    await expect(importFile(client, sample('charts.ndjson'), options(database, { account: 'acme' }))).rejects.toThrow(
      new ImportRefused(`${sample('charts.ndjson')}: chart positions are public, nobody's: give the file no --account`),
    );
    await expect(importFile(client, sample('charts.ndjson'), options(database, { given: { platform: 'apple' } }))).rejects.toThrow(
      new ImportRefused(`${sample('charts.ndjson')}: chart positions take no --platform`),
    );
  });
});

describe('an import killed', () => {
  const killed = (database: string, state: string) =>
    client.command({
      query: `INSERT INTO ${database}.imports (id, hash, file, source, state, rows, from_ts, to_ts) VALUES ('killed', 'x', 'killed.json', 'charts', '${state}', 5, '2026-01-05 08:12:34', '2026-01-05 08:12:34')`,
    });

  it('after moving its positions in, before all were in: the next import removes them, the stored snapshot stays', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts' }));
    await killed(database, 'started');
    await client.command({ query: `INSERT INTO ${database}.channel_ranks SELECT * REPLACE ('killed' AS import_id) FROM ${database}.channel_ranks` });
    expect(await count(`SELECT count() AS n FROM ${database}.channel_ranks`)).toBe(10);
    await importFile(client, sample('charts.ndjson'), options(database));
    expect(await shows(database)).toEqual([...SAMPLE_SHOWS, ...appleShows('All')].sort(byTimeAndChart));
    expect(await count(`SELECT count() AS n FROM ${database}.imports WHERE id = 'killed'`)).toBe(0);
  });

  it('while replacing what it replaces: the next import finishes it, the snapshot held once, the import done', async () => {
    const database = await freshDatabase();
    await importFile(client, sample('charts.apple.json'), options(database, { format: 'apple-charts' }));
    // Its positions, all in: the sample's first two, swapped.
    await killed(database, 'started');
    await killed(database, 'replacing');
    await client.command({
      query: `INSERT INTO ${database}.channel_ranks SELECT * REPLACE (3 - rank AS rank, 'killed' AS import_id) FROM ${database}.channel_ranks WHERE podcast_id IN ('1500000001', '1500000002')`,
    });
    await importFile(client, sample('charts.ndjson'), options(database));
    const [first, second] = appleShows('All');
    expect(await shows(database)).toEqual(
      [...SAMPLE_SHOWS, second.replace('| All | 2 |', '| All | 1 |'), first.replace('| All | 1 |', '| All | 2 |')].sort(byTimeAndChart),
    );
    expect(await rows(`SELECT state FROM ${database}.imports WHERE id = 'killed' ORDER BY state`)).toEqual([
      { state: 'done' },
      { state: 'replacing' },
      { state: 'started' },
    ]);
  });
});

describe('imported charts, through both APIs', () => {
  let imported: string;
  let handed: string;
  // The running service names countries by the IP database's list, as `npm start`, which loads it before it serves.
  beforeAll(async () => {
    imported = await freshDatabase();
    handed = await withGeo();
    expect(await importFile(client, sample('charts.ndjson'), options(imported))).toMatchObject({ imported: 8 });
    expect(await importFile(client, sample('charts.apple.json'), options(imported, { format: 'apple-charts' }))).toMatchObject({ imported: 5 });
  }, 120_000);
  // Charts are public: any account's key reads them.
  const start = serviceStarter();
  const both = bothApis;
  const byCountry = { measures: ['ChannelRanks.count', 'ChannelRanks.rankSum'], dimensions: ['ChannelRanks.countryName'] };
  const countries = (answer: Rows) =>
    Object.fromEntries(answer.map((r) => [r['ChannelRanks.countryName'], [Number(r['ChannelRanks.count']), Number(r['ChannelRanks.rankSum'])]]));
  const byPlatform = { measures: ['EpisodeRanks.count'], dimensions: ['EpisodeRanks.platform'] };
  const platforms = (answer: Rows) => Object.fromEntries(answer.map((r) => [r['EpisodeRanks.platform'], Number(r['EpisodeRanks.count'])]));
  // By hand: France's three shows (ranks 1+2+3), Sweden's two (1+2), the United States' five (1+…+5); episodes: Apple
  // two, Spotify one.
  const COUNTRIES = { France: [3, 6], Sweden: [2, 3], 'United States': [5, 15] };
  const PLATFORMS = { apple: 2, spotify: 1 };

  it('ChannelRanks by country name and EpisodeRanks by platform', async () => {
    const service = await start(imported);
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual(COUNTRIES);
    for (const answer of await both(service, byPlatform)) expect(platforms(answer)).toEqual(PLATFORMS);
  }, 180_000);

  it('imports handed to the running service: their positions in both APIs when each command returns, a corrected chart replacing', async () => {
    const service = await start(handed, {}, true);
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual({});
    const job = { source: 'charts', format: 'ndjson', maxBadRows: 0, ignoreUnknown: false, rejectsDir: SCRATCH };
    await expect(handOff(testDataDir(), sample('charts.ndjson'), { ...job, account: 'acme' }, () => {})).rejects.toThrow(
      new ImportRefused(`${sample('charts.ndjson')}: chart positions are public, nobody's: give the file no --account`),
    );
    expect(await handOff(testDataDir(), sample('charts.ndjson'), job, () => {})).toMatchObject({ outcome: 'imported', imported: 8, accounts: [] });
    expect(await handOff(testDataDir(), sample('charts.apple.json'), { ...job, format: 'apple-charts' }, () => {})).toMatchObject({ imported: 5 });
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual(COUNTRIES);
    for (const answer of await both(service, byPlatform)) expect(platforms(answer)).toEqual(PLATFORMS);
    // The US chart again, its first two shows only: 2 positions, ranks 1 + 2.
    const feed = JSON.parse(readFileSync(sample('charts.apple.json'), 'utf8')) as { feed: { results: unknown[] } };
    const fixed = path.join(SCRATCH, 'handed-fixed.json');
    writeFileSync(fixed, JSON.stringify({ feed: { ...feed.feed, results: feed.feed.results.slice(0, 2) } }));
    expect(await handOff(testDataDir(), fixed, { ...job, format: 'apple-charts' }, () => {})).toMatchObject({ imported: 2, replaced: 5 });
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual({ ...COUNTRIES, 'United States': [2, 3] });
    // A Spotify chart, what it does not say given with it: Germany's four shows, ranks 1 + … + 4.
    const spotify = { ...job, format: 'spotify-charts', given: { country: 'de', date: '2026-01-05' } };
    expect(await handOff(testDataDir(), sample('charts.spotify.json'), spotify, () => {})).toMatchObject({ imported: 4 });
    for (const answer of await both(service, byCountry)) expect(countries(answer)).toEqual({ ...COUNTRIES, 'United States': [2, 3], Germany: [4, 10] });
  }, 180_000);
});
