import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier, settingsSql, sqlLiteral } from '../sql';
import { accountsSql } from '../derive/downloads';
import { derivationStagingDatabase, rederive, replacedFrom, type Derivation } from '../derive/rederive';
import { compileUserAgentPatterns } from '../derive/user-agents';
import { statementTicket } from '../statement-queue';
import { cloudFrontFields, csvHeader, fileLines, streamedLines } from './lines';
import {
  agentsSql,
  carriesIdSql,
  CHECKED_COLUMNS,
  cloudFrontAccessors,
  csvAccessors,
  eventsSql,
  FIELDS,
  ImportRefused,
  JSON_ACCESSORS,
  validateSql,
  type ImportFormat,
} from './records';

export interface ImportOptions {
  database: string;
  format: ImportFormat;
  /** For rows without an `account` field. */
  account?: string;
  maxBadRows: number;
  ignoreUnknown: boolean;
  /** URLs must start with it, then the show's token, '/', and the media host and path. */
  trackingPrefix: string;
  /** Where `<name>.rejects.ndjson` goes. */
  rejectsDir: string;
  derivation: Derivation;
  /** The file's name in summaries, rejects and the imports table, when it is read from a copy (stdin, the service's inbox). */
  name?: string;
  /**
   * The engine runs in this process (chDB), so it reads the file with
   * `file()`; a server is sent the file's lines instead.
   */
  engineReadsFiles: boolean;
  /**
   * Rows one statement takes at most: the file is validated in runs of this
   * many lines, and its downloads derived in parts of about this many
   * requests, so that other statements (on chDB, which runs one at a time,
   * the service's queries) go between. Absent: the file in one statement,
   * derivation in runs of days (rederive's CHUNK_REQUESTS).
   */
  statementRows?: number;
  progress?: (message: string) => void;
}

export interface ImportSummary {
  file: string;
  outcome: 'imported' | 'already imported' | 'refused';
  rowsRead: number;
  imported: number;
  rejected: number;
  /** Requests already imported, found by their own ids (a file without ids has none). */
  duplicates: number;
  downloads: number;
  seconds: number;
  rejectFile?: string;
  /** The accounts whose rows were imported. */
  accounts: string[];
  /**
   * No download before this time (epoch seconds) changed: the start of the UTC day of the file's first request, or
   * of an interrupted import's it rolled back first if earlier (see replacedFrom). Absent when no download changed.
   */
  since?: number;
  /** The statements the import ran, and how long the longest ran (not counting its wait in a queue). */
  statements: number;
  longestStatementSeconds: number;
}

/**
 * Imports request logs into podcast_events and derives their downloads
 * (how the file's lines are read: lines.ts; what a line must hold, and the
 * SQL that checks it: records.ts).
 * ClickHouse reads everything: one statement reads the file's lines
 * (numbered, so a bad row can be reported by its line), validates and
 * converts them into a staging table (in a running service, one statement
 * per run of lines: ImportOptions.statementRows), and only a file whose
 * rejected rows are within the limit is moved into podcast_events. chDB reads the file
 * itself (`file()`); a ClickHouse server, which cannot see the file, is
 * sent its lines first. A file is recognised by the SHA-256 of its content
 * (a .gz's decompressed), recorded in the imports table.
 *
 * `-` reads standard input (spooled to a temporary file, which is hashed and
 * read like any other).
 */
export async function importFile(client: ClickHouseClient, file: string, options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  let spool: string | undefined;
  let source = file;
  if (file === '-') {
    spool = mkdtempSync(path.join(os.tmpdir(), 'import-'));
    source = path.join(spool, 'stdin');
    await pipeline(process.stdin, createWriteStream(source));
  }
  const times = { statements: 0, longestStatementSeconds: 0 };
  try {
    return { ...(await importPath(timed(client, times), options.name ?? file, source, options, started)), ...times };
  } finally {
    if (spool) rmSync(spool, { recursive: true, force: true });
  }
}

/**
 * The client, its statements in a lane of their own in the service's queue
 * (statement-queue.ts: a query waits for at most the one running, not for
 * the import's next), each timed from when it leaves the queue.
 */
function timed(client: ClickHouseClient, times: { statements: number; longestStatementSeconds: number }): ClickHouseClient {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'query' && property !== 'command' && property !== 'exec' && property !== 'insert') return value.bind(target);
      return async (params: unknown) => {
        let began = performance.now();
        const ticket = { lane: IMPORT_LANE, onStart: () => (began = performance.now()) };
        const result: unknown = await statementTicket.run(ticket, () => (value as (p: unknown) => Promise<unknown>).call(target, params));
        times.statements += 1;
        times.longestStatementSeconds = Math.max(times.longestStatementSeconds, Math.round(performance.now() - began) / 1000);
        return result;
      };
    },
  });
}

const IMPORT_LANE = 'import';

type Summary = Omit<ImportSummary, 'statements' | 'longestStatementSeconds'>;

async function importPath(client: ClickHouseClient, name: string, source: string, options: ImportOptions, started: number): Promise<Summary> {
  const db = quoteIdentifier(options.database);
  const staging = quoteIdentifier(stagingDatabase(options.database));
  const seconds = () => Math.round(performance.now() - started) / 1000;
  await ensureImportTables(client, options.database);
  const recovered = await recoverInterrupted(client, options);
  // The scratch database is made here, not with the imports table: a service that never imports keeps one database.
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${staging}` });

  const { hash, given } = await fingerprints(source, name);
  options.progress?.(`${name}: hashed (SHA-256 ${hash.slice(0, 12)}…)`);
  const done = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${db}.imports WHERE hash IN {hashes:Array(String)} AND state = 'done'`, {
    hashes: [hash, ...given],
  });
  if (Number(done[0].n) > 0)
    return { file: name, outcome: 'already imported', rowsRead: 0, imported: 0, rejected: 0, duplicates: 0, downloads: 0, seconds: seconds(), accounts: [] };

  const id = randomUUID();
  const stage = (kind: string) => `${staging}.${quoteIdentifier(`${kind}_${id}`)}`;
  const [checked, events, rejects, toEvents, toRejects, agents, toAgents] = [
    'checked',
    'events',
    'rejects',
    'to_events',
    'to_rejects',
    'agents',
    'to_agents',
  ].map(stage);
  const cleanup: (() => Promise<unknown>)[] = [toAgents, toEvents, toRejects, checked, events, rejects, agents].map((t) => () => dropStaged(client, t));
  try {
    const header = options.format === 'csv' ? await csvHeader(source) : options.format === 'cloudfront' ? await cloudFrontFields(source, name) : [];
    const unknown = options.format === 'csv' ? header.filter((f) => !FIELDS.includes(f)) : [];
    if (unknown.length > 0 && !options.ignoreUnknown) {
      throw new ImportRefused(
        `${name}: unknown column ${unknown.join(', ')} in the CSV header (known: ${FIELDS.join(', ')}; --ignore-unknown skips unknown columns)`,
      );
    }
    if (!options.engineReadsFiles) cleanup.push(() => dropStaged(client, stage('lines')));
    const runs = options.engineReadsFiles
      ? fileLines(source, header, options.format, options.statementRows, cleanup)
      : await streamedLines(client, stage('lines'), source, options);
    const accessors = options.format === 'csv' ? csvAccessors(header) : options.format === 'cloudfront' ? cloudFrontAccessors(header) : JSON_ACCESSORS;
    // The validation's views classify user agents, and making a view already compiles the pattern sets it scans: they are compiled
    // first, each in a statement of its own.
    await compileUserAgentPatterns(client, options.derivation.userAgents);
    // One pass over the file (a statement per run of lines): its checked rows go through a Null table, whose views write the valid ones in
    // podcast_events' own layout (so its parts are attached as they are) and the rejected ones apart.
    await client.command({ query: `CREATE TABLE ${events} AS ${db}.podcast_events` });
    await client.command({ query: `CREATE TABLE ${rejects} (line UInt64, reason String, raw String) ENGINE = MergeTree ORDER BY line` });
    await client.command({ query: `CREATE TABLE ${checked} (${CHECKED_COLUMNS.join(', ')}) ENGINE = Null` });
    await client.command({ query: `CREATE TABLE ${agents} (raw_ua String, parsed_ua String) ENGINE = Join(ANY, LEFT, raw_ua) SETTINGS persistent = 0` });
    await client.command({
      query: `CREATE MATERIALIZED VIEW ${toEvents} TO ${events} AS ${eventsSql(checked, `${stagingDatabase(options.database)}.agents_${id}`, id, options)}`,
    });
    await client.command({ query: `CREATE MATERIALIZED VIEW ${toRejects} TO ${rejects} AS SELECT line, reason, raw FROM ${checked} WHERE reason != ''` });
    // Made after the events' view: chDB ran each block through the view made last first, so a block's agents are known when its
    // events are written (made before, the first block's rows were classified in their rows); the answer is the same either way.
    await client.command({ query: `CREATE MATERIALIZED VIEW ${toAgents} TO ${agents} AS ${agentsSql(checked, options)}` });
    options.progress?.(`${name}: reading and validating its lines`);
    for await (const lines of runs) {
      const began = performance.now();
      await client.command({ query: `INSERT INTO ${checked} ${validateSql(lines, accessors, options)}` });
      options.progress?.(`${name}: validated ${lines.name} in ${((performance.now() - began) / 1000).toFixed(2)} s`);
    }
    const staged = await stagedCounts(client, events);
    const [{ rejected: rejectedText }] = await rows<{ rejected: string }>(client, `SELECT count() AS rejected FROM ${rejects}`);
    const rejected = Number(rejectedText);
    const rowsRead = staged.requests + rejected;
    options.progress?.(`${name}: ${rowsRead} rows read, ${rejected} rejected`);
    let rejectFile: string | undefined;
    if (rejected > 0) rejectFile = await writeRejects(client, rejects, name, options.rejectsDir);
    if (rejected > options.maxBadRows) {
      return { file: name, outcome: 'refused', rowsRead, imported: 0, rejected, duplicates: 0, downloads: 0, seconds: seconds(), rejectFile, accounts: [] };
    }
    let moved = { table: events, counts: staged };
    let duplicates = 0;
    if (staged.identified > 0) {
      const kept = stage('kept');
      cleanup.push(() => dropStaged(client, kept));
      duplicates = await withoutDuplicates(client, options.database, events, kept, staged, options.statementRows ?? DUPLICATE_CHECK_ROWS);
      options.progress?.(`${name}: ${duplicates} of its ${staged.identified} requests with an id already imported`);
      if (duplicates > 0) moved = { table: kept, counts: await stagedCounts(client, kept) };
    }
    const { requests: imported, from, to, accounts } = moved.counts;
    const record = (state: string) =>
      client.command({
        query: `INSERT INTO ${db}.imports (id, hash, file, state, rows, from_ts, to_ts, accounts) VALUES (${sqlLiteral(id)}, ${sqlLiteral(hash)}, ${sqlLiteral(name)}, '${state}', ${imported}, ${from}, ${to}, ${sqlLiteral(accounts)})`,
      });
    let downloads = 0;
    if (imported > 0) {
      // 'started' first: an import killed from here on is found by recoverInterrupted, which removes its rows.
      await record('started');
      options.progress?.(`${name}: moving ${imported} valid rows into podcast_events`);
      await moveEvents(client, options.database, moved.table);
      options.progress?.(`${name}: deriving downloads`);
      downloads = await rederive(client, options.database, options.derivation, from, to, accounts, options.statementRows);
    }
    await record('done');
    const since = imported > 0 ? replacedFrom(Math.min(from, ...recovered)) : undefined;
    return {
      file: name,
      outcome: 'imported',
      rowsRead,
      imported,
      rejected,
      duplicates,
      downloads,
      seconds: seconds(),
      rejectFile,
      accounts: [...accounts].sort(),
      ...(since === undefined ? {} : { since }),
    };
  } finally {
    for (const step of cleanup) await step();
  }
}

interface StagedCounts {
  requests: number;
  /** Epoch seconds of the first and last request (0 when there is none). */
  from: number;
  to: number;
  accounts: string[];
  /** Requests that carry their own id. */
  identified: number;
}

async function stagedCounts(client: ClickHouseClient, table: string): Promise<StagedCounts> {
  const [counts] = await rows<{ requests: string; from: string; to: string; accounts: string[]; identified: string }>(
    client,
    `SELECT count() AS requests, toInt64(min(ts)) AS from, toInt64(max(ts)) AS to, groupUniqArray(account_id) AS accounts,
      countIf(${carriesIdSql('request_id')}) AS identified FROM ${table}`,
  );
  return {
    requests: Number(counts.requests),
    from: Number(counts.from),
    to: Number(counts.to),
    accounts: counts.accounts,
    identified: Number(counts.identified),
  };
}

/**
 * Staged requests one statement of the duplicate check reads at most (whole hours; one hour may exceed it) when the
 * import sets no budget: its statement holds the run's ids (16 bytes each, in a hash set) and the ids stored in its
 * hours.
 */
const DUPLICATE_CHECK_ROWS = 500_000;

/**
 * The staged requests (`events`) that are already there: a request that carries its own id has a request_id made
 * from its account, time and id (requestIdSql), the same as that of a copy stored by an earlier import or on an
 * earlier line of this file. Checked in runs of whole hours of at most `budget` staged requests: a request's copies
 * lie at its time, so only the stored requests of the run's hours are read, and a statement holds one run's ids, not
 * the file's. When there are some, the staged requests are copied into `kept` without them (of the copies in the file,
 * the one whose fields hash least, so the same file always keeps the same row), and `kept` is what is moved. Returns
 * how many there were. Requests without an id are never duplicates: only an identical file is recognised for them.
 */
async function withoutDuplicates(
  client: ClickHouseClient,
  database: string,
  events: string,
  kept: string,
  staged: StagedCounts,
  budget: number,
): Promise<number> {
  const carries = carriesIdSql('request_id');
  const hours = await rows<{ hour: string; n: string }>(
    client,
    `SELECT toInt64(toStartOfHour(ts)) AS hour, count() AS n FROM ${events} GROUP BY hour ORDER BY hour`,
  );
  const runs: { from: number; to: number; requests: number }[] = [];
  for (const { hour, n } of hours) {
    const last = runs.at(-1);
    if (last && last.requests + Number(n) <= budget) {
      last.to = Number(hour) + HOUR;
      last.requests += Number(n);
    } else runs.push({ from: Number(hour), to: Number(hour) + HOUR, requests: Number(n) });
  }
  const within = (run: { from: number; to: number }) => `ts >= toDateTime(${run.from}, 'UTC') AND ts < toDateTime(${run.to}, 'UTC')`;
  const stored = (run: { from: number; to: number }) =>
    `(SELECT request_id FROM ${quoteIdentifier(database)}.podcast_events WHERE ${within(run)}${accountsSql(staged.accounts)} AND ${carries})`;
  const found: number[] = [];
  for (const run of runs) {
    const [{ n }] = await rows<{ n: string }>(
      client,
      `SELECT count() - uniqExactIf(request_id, NOT stored) AS n
      FROM (SELECT request_id, request_id IN ${stored(run)} AS stored FROM ${events} WHERE ${within(run)} AND ${carries})`,
    );
    found.push(Number(n));
  }
  const duplicates = found.reduce((a, b) => a + b, 0);
  if (duplicates === 0) return 0;
  const fields = 'cityHash64(ts, ip, method, status, url, raw_ua, referer, byte_range)';
  await client.command({ query: `CREATE TABLE ${kept} AS ${events}` });
  for (const [i, run] of runs.entries()) {
    const filter =
      found[i] === 0
        ? ''
        : ` AND (NOT ${carries} OR (request_id NOT IN ${stored(run)}
          AND (request_id, ${fields}) IN (SELECT request_id, min(${fields}) FROM ${events} WHERE ${within(run)} AND ${carries} GROUP BY request_id)))
        LIMIT 1 BY request_id`;
    await client.command({ query: `INSERT INTO ${kept} SELECT * FROM ${events} WHERE ${within(run)}${filter}` });
  }
  return duplicates;
}

const HOUR = 3_600;

/**
 * Drops a staging table without SYNC: the table is gone at once (from
 * system.tables, so nothing reads or recovers it), and its files are
 * removed by ClickHouse's background after
 * database_atomic_delay_before_drop_table_sec (480 s), or after the next
 * start of a process that stopped before. With SYNC the statement unlinked
 * the staged parts' files itself: 2.0 s at 100M (a day of 4.5M requests in
 * some 90 parts), holding chDB's one statement lane. The staged events'
 * parts are hard links of the parts attached to podcast_events, so the
 * wait costs little disk.
 */
function dropStaged(client: ClickHouseClient, table: string): Promise<unknown> {
  return client.command({ query: `DROP TABLE IF EXISTS ${table}` });
}

/**
 * The staged parts become podcast_events' parts (ATTACH PARTITION … FROM
 * links them; nothing is read or written again). A podcast_events that is
 * not a MergeTree table of the same layout (a Distributed table on a
 * cluster) is inserted into instead.
 */
async function moveEvents(client: ClickHouseClient, database: string, events: string): Promise<void> {
  const target = `${quoteIdentifier(database)}.podcast_events`;
  const [{ engine }] = await rows<{ engine: string }>(
    client,
    `SELECT engine FROM system.tables WHERE database = {database:String} AND name = 'podcast_events'`,
    { database },
  );
  if (!engine.endsWith('MergeTree')) {
    await client.command({ query: `INSERT INTO ${target} SELECT * FROM ${events}` });
    return;
  }
  const partitions = await rows<{ partition: string }>(client, `SELECT DISTINCT _partition_id AS partition FROM ${events}`);
  for (const { partition } of partitions) {
    await client.command({ query: `ALTER TABLE ${target} ATTACH PARTITION ID ${sqlLiteral(partition)} FROM ${events}` });
  }
}

/** Where an import stages a file's rows (the derivation's database for scratch tables). */
export const stagingDatabase = derivationStagingDatabase;

export async function ensureImportTables(client: ClickHouseClient, database: string): Promise<void> {
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(database)}.imports (
      id String, hash String, file String, state LowCardinality(String), rows UInt64,
      from_ts DateTime('UTC'), to_ts DateTime('UTC'), at DateTime('UTC') DEFAULT now(), accounts Array(String)
    ) ENGINE = MergeTree ORDER BY (hash, id)`,
  });
  // A service following imports (follow.ts) reads whose answers an import changed; tables made before lack it.
  await client.command({ query: `ALTER TABLE ${quoteIdentifier(database)}.imports ADD COLUMN IF NOT EXISTS accounts Array(String)` });
}

/**
 * An import killed between moving its rows in and recording it done left
 * rows with its import_id: they are removed and their span derived again,
 * so a killed import leaves nothing behind. One killed earlier left only
 * its staging tables, which are dropped. Imports into a database run one
 * at a time (the service's inbox takes them in turn), so whatever is staged
 * or started when one begins belongs to an import that died. Returns the
 * first request times of the imports it removed (epoch seconds).
 */
export async function recoverInterrupted(
  client: ClickHouseClient,
  options: Pick<ImportOptions, 'database' | 'derivation' | 'progress' | 'statementRows'>,
): Promise<number[]> {
  const db = quoteIdentifier(options.database);
  const staged = await rows<{ name: string }>(client, 'SELECT name FROM system.tables WHERE database = {staging:String}', {
    staging: stagingDatabase(options.database),
  });
  for (const { name } of staged) {
    options.progress?.(`dropping ${name}, staged by an interrupted import`);
    await client.command({ query: `DROP TABLE IF EXISTS ${quoteIdentifier(stagingDatabase(options.database))}.${quoteIdentifier(name)} SYNC` });
  }
  const pending = await rows<{ id: string; file: string; from: string; to: string }>(
    client,
    `
    SELECT id, any(file) AS file, toInt64(any(from_ts)) AS from, toInt64(any(to_ts)) AS to FROM ${db}.imports
    GROUP BY id HAVING countIf(state = 'done') = 0`,
  );
  for (const p of pending) {
    options.progress?.(`removing the rows of interrupted import ${p.id} (${p.file})`);
    const [{ accounts }] = await rows<{ accounts: string[] }>(
      client,
      `SELECT groupUniqArray(account_id) AS accounts FROM ${db}.podcast_events WHERE import_id = {id:String}`,
      { id: p.id },
    );
    await client.command({ query: `ALTER TABLE ${db}.podcast_events DELETE WHERE import_id = ${sqlLiteral(p.id)}${settingsSql({ mutations_sync: 2 })}` });
    await rederive(client, options.database, options.derivation, Number(p.from), Number(p.to), accounts, options.statementRows);
    await client.command({ query: `ALTER TABLE ${db}.imports DELETE WHERE id = ${sqlLiteral(p.id)}${settingsSql({ mutations_sync: 2 })}` });
    options.progress?.(`removed the rows of interrupted import ${p.id} (${p.file}) and derived their span again`);
  }
  return pending.map((p) => Number(p.from));
}

async function writeRejects(client: ClickHouseClient, rejects: string, name: string, dir: string): Promise<string> {
  const file = path.join(dir, `${path.basename(name === '-' ? 'stdin' : name)}.rejects.ndjson`);
  const result = await client.query({
    query: `SELECT ${sqlLiteral(name)} AS file, line, reason, raw FROM ${rejects} ORDER BY line`,
    format: 'JSONEachRow',
  });
  await pipeline(
    result.stream(),
    new Transform({
      objectMode: true,
      transform(batch: { text: string }[], _encoding, callback) {
        callback(null, batch.map((row) => `${row.text}\n`).join(''));
      },
    }),
    createWriteStream(file),
  );
  return file;
}

/**
 * The SHA-256 of the file's content, which the imports table records: a .gz's decompressed lines, so the same lines
 * delivered plain and compressed are one file; and, for a .gz, of its bytes as given (`given`), which imports recorded
 * before recognised a .gz by, looked up too. One streamed pass: the bytes are hashed on their way to gunzip. Read in
 * chunks of 1 MiB: with the stream's default 64 KiB, the stream's own work per chunk cost twice the hashing (0.3 CPU s
 * for a 88 MB file, 0.1 s in 1 MiB chunks, the same digest).
 */
async function fingerprints(file: string, name: string): Promise<{ hash: string; given: string[] }> {
  const content = createHash('sha256');
  const read = createReadStream(file, { highWaterMark: HASH_CHUNK_BYTES });
  if (!file.endsWith('.gz')) {
    await pipeline(read, content);
    return { hash: content.digest('hex'), given: [] };
  }
  const bytes = createHash('sha256');
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(read, tee, createGunzip({ chunkSize: HASH_CHUNK_BYTES }), content);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code?.startsWith('Z_'))
      throw new ImportRefused(`${name}: not gzip data, which a name ending .gz must hold (${(err as Error).message})`);
    throw err;
  }
  return { hash: content.digest('hex'), given: [bytes.digest('hex')] };
}

const HASH_CHUNK_BYTES = 1 << 20;

async function rows<T>(client: ClickHouseClient, query: string, params?: Record<string, unknown>): Promise<T[]> {
  return (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}
