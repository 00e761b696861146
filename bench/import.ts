import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
// Before chdb, as in the CLI and the service: chDB's allocator reads its options when the library loads.
import '../src/warehouse/allocator';
import { drainPending } from 'chdb';
import type { ClickHouseClient } from '@clickhouse/client';
import { openWarehouse } from '../src/warehouse/connection';
import { ddlStatements } from '../src/warehouse/ddl';
import { quoteIdentifier } from '../src/warehouse/sql';
import { loadUserAgents } from '../src/warehouse/derive/user-agents';
import { importFile, stagingDatabase } from '../src/warehouse/import/import';
import { LINK_EVENT_FIELDS } from '../src/warehouse/import/sources/link-events';
import { SNOWPLOW_FIELDS } from '../src/warehouse/import/sources/web-events';
import { TRACKING_PREFIX } from '../src/warehouse/reference-data';
import { writeRequestsFile, type RequestsFormat } from './requests-file';
import { writeLinkEventsFile } from './link-events-file';
import { writeWebEventsFile } from './web-events-file';
import { CHART_ROWS_PER_DAY, writeChartsFile } from './charts-file';
import { log, mb, perSecond, table } from './report';
import { DATABASE, ROLLUP_DATABASE } from './service';

/**
 * Import benchmark: `npm run bench:import -- [--rows 300000] [--formats ndjson,csv,snowplow,charts] [--user-agents DIR] [--keep-files DIR]
 * [--repeat N] [--baseline DIR] [--request-ids] [--again]`.
 * `--keep-files` writes the generated files to DIR (outside the repository,
 * e.g. /tmp) and reuses them on the next run: 10M requests take minutes to
 * write. The same rows always give the same file (a seeded generator).
 * For each format, one generated file of `rows` rows, in one run on one chDB
 * engine: a request log (`ndjson`, `csv`: bench/requests-file.ts) or
 * Snowplow's enriched events (`snowplow`, website events:
 * bench/web-events-file.ts), the link pages' events (`links`, NDJSON:
 * bench/link-events-file.ts), or chart positions (`charts`, NDJSON:
 * bench/charts-file.ts; whole days of 20,000 positions, as many as make
 * `rows` at least: `--rows 7300000` is a year of daily Apple and Spotify
 * top 10s for 50 countries × 20 categories):
 * (a) the floor, chDB's own `INSERT INTO … SELECT … FROM file(…)` of the
 *     file into a plain MergeTree table with the target's types
 *     (podcast_events', web_events', link_events', channel_ranks'; read, parse, convert,
 *     write; no validation, no derivation);
 * (a2) the issue's floor, the same insert into a fresh `podcast_events` as
 *     the project makes it (its sort key, partitions and hourly projection),
 *     each column a plain function of the file's fields: the token and media
 *     cut from the URL, no check, no user-agent name, no places, no
 *     downloads. Issue 17 names this one ("INSERT INTO podcast_events SELECT
 *     … FROM file(…) … without derivation"); (a) is the stricter bound.
 *     Requests only;
 * (b) `npm run warehouse -- import`'s code on the same file into a fresh
 *     database: hash, validate, rejects, stage, look for ids already there,
 *     attach to the target; for requests derive downloads (IAB, calendar
 *     day), for web events nothing (places from geo_* where given), for
 *     link events the link views, for charts the replacement of snapshots
 *     stored before (none here: a fresh database) and no country names (no
 *     IP database is loaded here, for any).
 * Rows/s of each, the ratio import ÷ floor, the peak RSS above the RSS
 * before each (chDB runs in this process), and the import's own progress
 * lines with the seconds since it started, which say where its time goes.
 * `--repeat N` runs the floor and the import alternately N times per format
 * (a fresh table and database each time) and prints the median of each
 * pair's ratio: on a shared machine the load moves between runs far more
 * than between the two halves of a pair. `--baseline DIR` adds, to each
 * pair, the import of another build of this repository (DIR holds its
 * `build/`, from `tsc -p bench`; e.g. a `git archive` of the commit before
 * a change), so a change is compared with the code before it in one run.
 * `--user-agents DIR` classifies by the OPAWG list in DIR (USER_AGENTS_DIR),
 * the built-in set without it.
 * `--request-ids` gives every request an id of its own (`requestId`, as long
 * as CloudFront's), which the import checks against the ids already stored
 * (src/warehouse/import/import.ts, withoutDuplicates); the imports then run
 * with --ignore-unknown, so that a baseline that does not know the field
 * reads the file too. `--again` follows each import with another of the same
 * requests cut differently (the file without its first line, so not the same
 * file), which imports nothing where the requests carry ids.
 * Figures only: it fails only when an import does.
 */

const SAMPLE_MS = 20;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '300000' },
      formats: { type: 'string', default: 'ndjson,csv' },
      'user-agents': { type: 'string' },
      'keep-files': { type: 'string' },
      repeat: { type: 'string', default: '1' },
      baseline: { type: 'string' },
      'request-ids': { type: 'boolean', default: false },
      again: { type: 'boolean', default: false },
    },
  });
  const requestIds = values['request-ids'];
  const repeat = Number(values.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat ${values.repeat}: expected a positive whole number`);
  const imports: { label: string; importFile: typeof importFile }[] = [{ label: 'import', importFile }];
  if (values.baseline !== undefined) imports.push({ label: 'baseline', importFile: baselineImport(values.baseline) });
  const rows = Number(values.rows);
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`--rows ${values.rows}: expected a positive whole number`);
  const formats = values.formats.split(',') as BenchFormat[];
  for (const f of formats) if (!BENCH_FORMATS.includes(f)) throw new Error(`--formats ${values.formats}: expected some of ${BENCH_FORMATS.join(', ')}`);
  const userAgents = loadUserAgents(values['user-agents']);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-bench-import-'));
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: path.join(scratch, 'chdb'), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  const client = warehouse.client();
  try {
    const results: string[][] = [];
    const medians: string[][] = [];
    const steps: string[] = [];
    for (const format of formats) {
      const web = format === 'snowplow';
      const charts = format === 'charts';
      const links = format === 'links';
      const requests = !web && !links && !charts;
      // Charts come in whole days: as many as make up `--rows` at least.
      const chartDays = Math.ceil(rows / CHART_ROWS_PER_DAY);
      const fileRows = charts ? chartDays * CHART_ROWS_PER_DAY : rows;
      const file = path.join(
        values['keep-files'] ?? scratch,
        web
          ? `web-events-${fileRows}.tsv`
          : links
            ? `link-events-${fileRows}.ndjson`
            : charts
              ? `charts-${chartDays}-days.ndjson`
              : `requests-${fileRows}${requestIds ? '-ids' : ''}.${format}`,
      );
      const noun = requests ? 'requests' : charts ? 'chart positions' : 'events';
      if (existsSync(file)) {
        log(`${file}: ${fileRows.toLocaleString('en')} ${noun}, ${mb(statSync(file).size)} MB, kept from an earlier run`);
      } else {
        const generated = performance.now();
        if (web) await writeWebEventsFile(`${file}.partial`, fileRows);
        else if (links) await writeLinkEventsFile(`${file}.partial`, fileRows);
        else if (charts) await writeChartsFile(`${file}.partial`, chartDays);
        else await writeRequestsFile(`${file}.partial`, fileRows, format, requestIds);
        renameSync(`${file}.partial`, file);
        log(
          `${file}: ${fileRows.toLocaleString('en')} ${noun}, ${mb(statSync(file).size)} MB, written in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
        );
      }

      const again = path.join(scratch, `again.${format}`);
      if (values.again) await withoutFirstRequest(file, again, format);
      const ratios: { wall: number; cpu: number }[][] = imports.map(() => []);
      const eventsRatios: { wall: number; cpu: number }[][] = imports.map(() => []);
      for (let round = 1; round <= repeat; round++) {
        // Round by round, the ratios of the import (and the baseline) to this round's floor, the runs side by side.
        const tag = repeat > 1 ? ` #${round}` : '';
        const raw = await measured(() =>
          web
            ? rawWebInsert(client, file)
            : links
              ? rawLinkInsert(client, file)
              : charts
                ? rawChartsInsert(client, file)
                : rawInsert(client, file, format as RequestsFormat),
        );
        results.push([
          `${format}: raw insert (floor)${tag}`,
          raw.value === fileRows ? perSecond(fileRows / raw.seconds) : `${raw.value} rows?`,
          raw.seconds.toFixed(1),
          raw.cpuSeconds.toFixed(1),
          mb(raw.peakRss),
        ]);
        const events = !requests ? undefined : await measured(() => rawEventsInsert(client, file, format as RequestsFormat));
        if (events) {
          results.push([
            `${format}: raw insert into podcast_events (issue 17's floor)${tag}`,
            events.value === fileRows ? perSecond(fileRows / events.seconds) : `${events.value} rows?`,
            events.seconds.toFixed(1),
            events.cpuSeconds.toFixed(1),
            mb(events.peakRss),
          ]);
        }
        // The import and the baseline take turns going first, so neither always runs right after the floor.
        const order = round % 2 === 1 ? [...imports.entries()] : [...imports.entries()].reverse();
        for (const [i, { label, importFile: run }] of order) {
          const name = `${format}${imports.length > 1 ? ` ${label}` : ''}${tag}`;
          const database = `bench_import_${format}`;
          await dropDatabases(client, database);
          for (const statement of ddlStatements(database)) await client.command({ query: statement });
          const started = performance.now();
          const cpu = process.cpuUsage();
          const since = () => {
            const used = process.cpuUsage(cpu);
            return `${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s ${((used.user + used.system) / 1e6).toFixed(1).padStart(6)} s CPU`;
          };
          const progress = (message: string) => steps.push(`${name} ${since()}  ${message}`);
          const statements: string[] = [];
          const importOptions = {
            database,
            ...(web ? { source: 'web-events', account: 'bench' } : {}),
            format,
            ...(charts ? { source: 'charts', format: 'ndjson' } : {}),
            ...(links ? { source: 'link-events', account: 'bench', format: 'ndjson' } : {}),
            maxBadRows: 0,
            ignoreUnknown: requestIds,
            trackingPrefix: TRACKING_PREFIX,
            rejectsDir: scratch,
            engineReadsFiles: true,
            derivation: { settings: { rules: 'iab' as const, window: 'calendar' as const }, userAgents },
            progress,
          };
          const ours = await measured(() => run(profiled(client, name, statements), file, importOptions));
          if (ours.value.outcome !== 'imported' || ours.value.imported !== fileRows)
            throw new Error(`${name}: the import did not take every row: ${JSON.stringify(ours.value)}`);
          const derived = requests
            ? `: ${Number(ours.value.downloads).toLocaleString('en')} downloads`
            : links
              ? `: ${Number(ours.value.views).toLocaleString('en')} views`
              : '';
          steps.push(`${name} ${since()}  done${derived}`, ...statements);
          ratios[i].push({ wall: raw.seconds / ours.seconds, cpu: raw.cpuSeconds / ours.cpuSeconds });
          if (events) eventsRatios[i].push({ wall: events.seconds / ours.seconds, cpu: events.cpuSeconds / ours.cpuSeconds });
          results.push(
            [
              `${name}: ${label === 'import' ? `import (hash, validate, insert${web ? '' : charts ? ', replace' : ', derive'})` : `import of ${values.baseline}`}`,
              perSecond(fileRows / ours.seconds),
              ours.seconds.toFixed(1),
              ours.cpuSeconds.toFixed(1),
              mb(ours.peakRss),
            ],
            [`${name}: ratio ${label} ÷ floor`, (raw.seconds / ours.seconds).toFixed(2), '', (raw.cpuSeconds / ours.cpuSeconds).toFixed(2), ''],
            ...(events
              ? [
                  [
                    `${name}: ratio ${label} ÷ issue 17's floor`,
                    (events.seconds / ours.seconds).toFixed(2),
                    '',
                    (events.cpuSeconds / ours.cpuSeconds).toFixed(2),
                    '',
                  ],
                ]
              : []),
          );
          if (values.again) {
            const againStatements: string[] = [];
            const second = await measured(() => run(profiled(client, `${name} again`, againStatements), again, importOptions));
            steps.push(`${name} again ${since()}  done`, ...againStatements);
            const { imported, duplicates } = second.value as { imported: number; duplicates?: number };
            results.push([
              `${name}: ${label} again, cut differently: ${imported.toLocaleString('en')} imported, ${(duplicates ?? 0).toLocaleString('en')} already there`,
              perSecond((fileRows - 1) / second.seconds),
              second.seconds.toFixed(1),
              second.cpuSeconds.toFixed(1),
              mb(second.peakRss),
            ]);
          }
        }
      }
      if (repeat > 1 || imports.length > 1) {
        for (const [i, { label }] of imports.entries()) {
          medians.push([
            `${format}: ${label} ÷ floor`,
            String(repeat),
            median(ratios[i].map((r) => r.wall)).toFixed(2),
            median(ratios[i].map((r) => r.cpu)).toFixed(2),
          ]);
          if (requests) {
            medians.push([
              `${format}: ${label} ÷ issue 17's floor`,
              String(repeat),
              median(eventsRatios[i].map((r) => r.wall)).toFixed(2),
              median(eventsRatios[i].map((r) => r.cpu)).toFixed(2),
            ]);
          }
        }
        if (imports.length > 1) {
          // Within a round, the floor divides out: this is the import's speed against the baseline's, pair by pair.
          const against = ratios[0].map((r, round) => ({ wall: r.wall / ratios[1][round].wall, cpu: r.cpu / ratios[1][round].cpu }));
          medians.push([
            `${format}: import ÷ baseline (speed)`,
            String(repeat),
            median(against.map((r) => r.wall)).toFixed(2),
            median(against.map((r) => r.cpu)).toFixed(2),
          ]);
        }
      }
    }
    log(
      `\n${rows.toLocaleString('en')} rows per file, ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
    );
    log(table(['Run', 'Rows/s', 'Seconds', 'CPU seconds', 'Peak RSS above start, MB'], ['l', 'r', 'r', 'r', 'r'], results));
    if (medians.length > 0) {
      log(`\nMedians over the rounds of each round's own ratio (floor and imports side by side in a round):\n`);
      log(table(['Ratio', 'Rounds', 'Median (wall)', 'Median (CPU)'], ['l', 'r', 'r', 'r'], medians));
    }
    log(
      `\nThe import's steps (seconds and CPU seconds since it started), then each statement that took 0.1 s or more (wall, CPU, RSS growth while it ran):\n${steps.join('\n')}`,
    );
    return 0;
  } finally {
    await warehouse.close();
    await drainPending();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const BENCH_FORMATS = ['ndjson', 'csv', 'snowplow', 'links', 'charts'] as const;
type BenchFormat = (typeof BENCH_FORMATS)[number];

/** chDB's own reader straight into a plain table: the fastest way the engine has to take the file in. */
async function rawInsert(client: ClickHouseClient, file: string, format: RequestsFormat): Promise<number> {
  const target = `${quoteIdentifier('bench_raw')}.${quoteIdentifier(format)}`;
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_raw' });
  await client.command({ query: `DROP TABLE IF EXISTS ${target} SYNC` });
  await client.command({
    query: `CREATE TABLE ${target} (ts DateTime('UTC'), ip IPv6, method LowCardinality(String), status UInt16, url String, raw_ua String,
      referer String, byte_range String, account_id LowCardinality(String)) ENGINE = MergeTree ORDER BY (account_id, ts)`,
  });
  const structure = 'time String, ip String, method String, status UInt16, url String, userAgent String, referer String, range String, account String';
  await client.command({
    query: `INSERT INTO ${target} SELECT parseDateTimeBestEffort(time, 'UTC'), toIPv6(ip), method, status, url, userAgent, referer, range, account
      FROM file('${file.replace(/'/g, "\\'")}', ${format === 'csv' ? 'CSVWithNames' : 'JSONEachRow'}, '${structure}')`,
    clickhouse_settings: { input_format_csv_empty_as_default: 1 },
  });
  const result = await client.query({ query: `SELECT count() AS n FROM ${target}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * The floor of website events: chDB's TabSeparated reader straight into a
 * plain table of web_events' types, each column a plain function of its
 * field (the track time derived_tstamp's, the origin the page's scheme and
 * host), no check, no places, no duplicates.
 */
async function rawWebInsert(client: ClickHouseClient, file: string): Promise<number> {
  const target = `${quoteIdentifier('bench_raw')}.${quoteIdentifier('snowplow')}`;
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_raw' });
  await client.command({ query: `DROP TABLE IF EXISTS ${target} SYNC` });
  await client.command({
    query: `CREATE TABLE ${target} (account_id LowCardinality(String), track_ts DateTime64(3, 'UTC'), ingest_ts DateTime64(3, 'UTC'), event_id UUID,
      app_id LowCardinality(String), origin LowCardinality(String), session_id String, ua String, ip IPv6, page_title String, page_url String,
      se_category LowCardinality(String), se_action LowCardinality(String), se_label String, se_value Nullable(Float64), latitude Nullable(Float64),
      longitude Nullable(Float64), city LowCardinality(String), country LowCardinality(String)) ENGINE = MergeTree ORDER BY (account_id, app_id, track_ts)`,
  });
  const structure = SNOWPLOW_FIELDS.map((f) => `${f} String`).join(', ');
  await client.command({
    query: `INSERT INTO ${target} SELECT 'bench', parseDateTime64BestEffort(derived_tstamp, 3, 'UTC'), parseDateTime64BestEffort(collector_tstamp, 3, 'UTC'),
        toUUID(event_id), app_id, concat(page_urlscheme, '://', page_urlhost), domain_sessionid, useragent, toIPv6(user_ipaddress), page_title, page_url,
        se_category, se_action, se_label, toFloat64OrNull(se_value), toFloat64OrNull(geo_latitude), toFloat64OrNull(geo_longitude), geo_city, geo_country
      FROM file('${file.replace(/'/g, "\\'")}', TSV, '${structure}')`,
  });
  const result = await client.query({ query: `SELECT count() AS n FROM ${target}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * The floor of chart positions: chDB's JSONEachRow reader straight into a
 * plain table of channel_ranks' types and sort key, the day as midnight UTC,
 * the country as written, no check, no country name, no replacement.
 */
async function rawChartsInsert(client: ClickHouseClient, file: string): Promise<number> {
  const target = `${quoteIdentifier('bench_raw')}.${quoteIdentifier('charts')}`;
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_raw' });
  await client.command({ query: `DROP TABLE IF EXISTS ${target} SYNC` });
  await client.command({
    query: `CREATE TABLE ${target} (snapshot_ts DateTime('UTC'), platform LowCardinality(String), country_code LowCardinality(String),
      category LowCardinality(String), rank UInt16, podcast_id String, podcast_slug String)
      ENGINE = MergeTree PARTITION BY toYYYYMM(snapshot_ts) ORDER BY (platform, country_code, category, snapshot_ts, rank)`,
  });
  const structure = 'date String, chart String, platform String, country String, category String, rank UInt16, podcastId String, podcastSlug String';
  await client.command({
    query: `INSERT INTO ${target} SELECT toDateTime(toDate(date), 'UTC'), platform, country, category, rank, podcastId, podcastSlug
      FROM file('${file.replace(/'/g, "\\'")}', JSONEachRow, '${structure}')`,
  });
  const result = await client.query({ query: `SELECT count() AS n FROM ${target}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * The floor of link events: chDB's JSONEachRow reader straight into a plain
 * table of link_events' types, each column its field as read: no check, no
 * link views.
 */
async function rawLinkInsert(client: ClickHouseClient, file: string): Promise<number> {
  const target = `${quoteIdentifier('bench_raw')}.${quoteIdentifier('links')}`;
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_raw' });
  await client.command({ query: `DROP TABLE IF EXISTS ${target} SYNC` });
  await client.command({
    query: `CREATE TABLE ${target} (account_id LowCardinality(String), ts DateTime64(3, 'UTC'), event LowCardinality(String), link LowCardinality(String),
      viewer String, ip IPv6, raw_ua String, url String, referer String, accept_language String, target LowCardinality(String))
      ENGINE = MergeTree ORDER BY (account_id, link, ts)`,
  });
  const structure = LINK_EVENT_FIELDS.map((f) => `${f} String`).join(', ');
  await client.command({
    query: `INSERT INTO ${target} SELECT 'bench', parseDateTime64BestEffort(time, 3, 'UTC'), event, link, viewer, toIPv6(ip), userAgent, url, referer,
        acceptLanguage, target
      FROM file('${file.replace(/'/g, "\\'")}', JSONEachRow, '${structure}')`,
  });
  const result = await client.query({ query: `SELECT count() AS n FROM ${target}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * Issue 17's floor: chDB's reader straight into podcast_events as the project
 * makes it, in a database of its own made anew each time. Each column is what
 * a pipeline without checks would write: the token and media path cut from the
 * URL by the tracking prefix, IPv4 as its mapped IPv6, the rest as read.
 */
async function rawEventsInsert(client: ClickHouseClient, file: string, format: RequestsFormat): Promise<number> {
  const database = 'bench_raw_events';
  await client.command({ query: `DROP DATABASE IF EXISTS ${database} SYNC` });
  for (const statement of ddlStatements(database)) await client.command({ query: statement });
  const structure = 'time String, ip String, method String, status UInt16, url String, userAgent String, referer String, range String, account String';
  const prefix = `'${TRACKING_PREFIX.replace(/'/g, "\\'")}'`;
  await client.command({
    query: `INSERT INTO ${database}.podcast_events (account_id, request_id, ts, ip4, ip, url, redirect_url, raw_ua, token, byte_range, byte_range_larger_one,
        referer, method, status)
      SELECT account, generateUUIDv4(), parseDateTimeBestEffort(time, 'UTC'), toIPv4OrDefault(ip), toIPv6(ip), url,
        concat('https://', substring(rest, position(rest, '/') + 1)), userAgent, substring(rest, 1, position(rest, '/') - 1), range,
        NOT match(range, '^bytes=0-[01]$'), referer, method, status
      FROM (SELECT *, substring(url, length(${prefix}) + 1) AS rest
        FROM file('${file.replace(/'/g, "\\'")}', ${format === 'csv' ? 'CSVWithNames' : 'JSONEachRow'}, '${structure}'))`,
    clickhouse_settings: { input_format_csv_empty_as_default: 1 },
  });
  const result = await client.query({ query: `SELECT count() AS n FROM ${database}.podcast_events`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/** The file without its first row (a CSV keeps its header): the same rows but one, not the same file. */
async function withoutFirstRequest(file: string, out: string, format: BenchFormat): Promise<void> {
  const skip = format === 'csv' ? 1 : 0;
  let line = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  const write = createWriteStream(out);
  for await (const text of lines) {
    if (line++ !== skip && !write.write(`${text}\n`)) await once(write, 'drain');
  }
  write.end();
  await once(write, 'finish');
}

/** An earlier round's database and its import's staging database, so each import starts from nothing. */
async function dropDatabases(client: ClickHouseClient, database: string): Promise<void> {
  for (const name of [database, stagingDatabase(database)]) await client.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} SYNC` });
}

/** importFile of another build of this repository (`DIR/build/src/warehouse/import/import.js`, from `tsc -p bench`). */
function baselineImport(dir: string): typeof importFile {
  const module = path.resolve(dir, 'build', 'src', 'warehouse', 'import', 'import.js');
  if (!existsSync(module)) throw new Error(`--baseline ${dir}: no ${module}; build it there with tsc -p bench`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a build chosen at run time
  return (require(module) as { importFile: typeof importFile }).importFile;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * The client, timing each statement it runs: chDB keeps no system.query_log,
 * so this is where the import's time is split by statement.
 */
function profiled(client: ClickHouseClient, format: string, statements: string[]): ClickHouseClient {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'command' && property !== 'query' && property !== 'exec' && property !== 'insert') return value.bind(target);
      return async (params: { query?: string; table?: string }) => {
        const run = await measured(() => (value as (p: unknown) => Promise<unknown>).call(target, params));
        if (run.seconds >= 0.1) {
          const text = (params.query ?? `INSERT INTO ${params.table}`).replace(/\s+/g, ' ').trim();
          statements.push(
            `${format}   ${run.seconds.toFixed(1).padStart(6)} s ${run.cpuSeconds.toFixed(1).padStart(6)} s CPU ${mb(run.peakRss).padStart(5)} MB  ${text.slice(0, 110)}`,
          );
        }
        return run.value;
      };
    },
  });
}

/**
 * Runs `work` while sampling RSS; the peak is above the RSS at its start.
 * CPU seconds are this process's (chDB's threads included), which other
 * work on a shared machine disturbs less than the wall clock.
 */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number; peakRss: number }> {
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), SAMPLE_MS);
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const value = await work();
    const used = process.cpuUsage(cpu);
    return {
      value,
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      peakRss: Math.max(peak, process.memoryUsage.rss()) - start,
    };
  } finally {
    clearInterval(timer);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
