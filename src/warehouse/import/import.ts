import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, fchmodSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { derivationStagingDatabase, readsFrom } from '../derive/rederive';
import { statementTicket } from '../statement-queue';
import { withoutDuplicates } from './duplicates';
import { readRuns } from './lines';
import { ImportRefused, type Change, type ImportOptions, type Source } from './source';
import { sourceNamed } from './sources';
import { quoteIdentifier, settingsSql, sqlLiteral } from '../sql';
import { reducedAddressesReason, REJECTS_SUFFIX } from '../retention';
import { bookkeepingStatements, localTableName, mergeTreeEngineSql, type TableName } from '../ddl';
import { layoutOf, mutationTargetSql, onClusterSql, type Layout } from '../layout';

export { ImportRefused, type ImportOptions } from './source';

export interface ImportOutcome {
  file: string;
  source: string;
  outcome: 'imported' | 'already imported' | 'refused';
  rowsRead: number;
  imported: number;
  rejected: number;
  /** Rows already imported, found by their own ids (a file without ids has none). */
  duplicates: number;
  /** Valid rows of kinds the source does not store, by kind (none for a source that stores every kind). */
  skipped: Record<string, number>;
  seconds: number;
  rejectFile?: string;
  /** The accounts whose rows were imported. */
  accounts: string[];
  /**
   * No row, nor anything derived from rows, before this time (epoch seconds) changed: the start of the UTC day of the
   * file's first row, or of an interrupted import's it rolled back first if earlier. Absent when nothing changed.
   */
  since?: number;
}

/**
 * What an import did, with the statements it ran and how long the longest ran (not counting its wait in a queue),
 * and the counts of what its source derived (Source.counts: `downloads` for requests).
 */
export type ImportSummary = ImportOutcome & { statements: number; longestStatementSeconds: number } & Record<string, unknown>;

/**
 * Imports a file of one of the sources (sources/: request logs, website
 * events, …) into the source's table, and derives what follows from its rows
 * (downloads from requests). The source declares what its rows are
 * (source.ts); the rest is this, the same for every source. ClickHouse reads
 * everything: one statement reads the file's rows (numbered, so a bad row
 * can be reported by its line), checks them by the source's SQL and stages
 * the valid ones in the target's layout (in a running service, one statement
 * per run of lines: ImportOptions.statementRows), and only a file whose
 * rejected rows are within the limit is moved into the target. chDB reads
 * the file itself (`file()`); a ClickHouse server, which cannot see the
 * file, is sent it first (lines.ts). A file is recognised by the SHA-256 of
 * its content (a .gz's decompressed), recorded in the imports table.
 *
 * `-` reads standard input (spooled to a temporary file, which is hashed and
 * read like any other).
 */
export async function importFile(client: ClickHouseClient, file: string, options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  if (file !== '-' && !statSync(file, { throwIfNoEntry: false })?.isFile()) throw new ImportRefused(`${options.name ?? file}: no such file`);
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

type Summary = ImportOutcome & Record<string, unknown>;

/**
 * Blocks of at most 128k rows / 64 MB on their way into the staging table
 * (1M rows by default): a block is held, sorted and written with its
 * projection at once, and ClickHouse's default let the import's memory grow
 * by most of a gigabyte. Two threads write the views' blocks side by side.
 * A view writes each block as it comes (its blocks are the insert's, already
 * that size), rather than gathering them to that size: a view of few rows
 * per block (the requests' user agents) would otherwise reach its table only
 * at the end. The file is read and checked in blocks of 8,192 lines (65,536
 * by default): each of a check's thirty-odd columns is a block long, and at
 * 65,536 lines the requests' check alone grew RSS by about 350 MB (about 170
 * MB at 8,192; a million NDJSON requests, `FORMAT Null`).
 */
const INSERT_SETTINGS =
  'max_block_size = 8192, max_insert_threads = 2, min_insert_block_size_rows = 131072, min_insert_block_size_bytes = 67108864, min_insert_block_size_rows_for_materialized_views = 1, min_insert_block_size_bytes_for_materialized_views = 1';

/** The columns every source's checked rows have, before the source's own. */
const CHECKED_COLUMNS = ['line UInt64', 'raw String', 'reason String', 'skip String'];

const DAY = 86_400;

async function importPath(client: ClickHouseClient, name: string, file: string, options: ImportOptions, started: number): Promise<Summary> {
  const source = sourceNamed(options.source);
  const format = source.formats[options.format];
  if (format === undefined) {
    throw new ImportRefused(`${source.name} come in the formats ${Object.keys(source.formats).join(', ')}, not ${options.format}`);
  }
  if (source.public && options.account) throw new ImportRefused(`${name}: ${source.row.many} are public, nobody's: give the file no --account`);
  if (!source.public && !source.rowAccounts && !options.account)
    throw new ImportRefused(`${name}: ${source.row.many} name no account: give the file --account`);
  const notGiven = Object.keys(options.given ?? {}).filter((field) => !source.given?.includes(field));
  if (notGiven.length > 0) throw new ImportRefused(`${name}: ${source.row.many} take no --${notGiven.join(', --')}`);
  const db = quoteIdentifier(options.database);
  const staging = quoteIdentifier(stagingDatabase(options.database));
  const seconds = () => Math.round(performance.now() - started) / 1000;
  // A summary's fields in one order whatever the outcome, as zero until the import counts them.
  const summary = (outcome: ImportOutcome['outcome'], counted: Partial<ImportOutcome> & Record<string, unknown>): Summary => ({
    file: name,
    source: source.name,
    outcome,
    rowsRead: 0,
    imported: 0,
    rejected: 0,
    duplicates: 0,
    skipped: {},
    ...zeroCounts(source),
    ...(source.replaces ? { replaced: 0 } : {}),
    seconds: seconds(),
    accounts: [],
    ...counted,
  });
  const layout = await ensureImportTables(client, options.database);
  const recovered = await recoverInterrupted(client, options);
  // The scratch database is made here, not with the imports table: a service that never imports keeps one database.
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${staging}` });

  const { hash, given } = delivery(await fingerprints(file, name), options.given);
  options.progress?.(`${name}: hashed (SHA-256 ${hash.slice(0, 12)}…)`);
  const done = await rows<{ n: string }>(
    client,
    `SELECT count() AS n FROM ${db}.imports WHERE hash IN {hashes:Array(String)} AND source = {source:String} AND state = 'done'`,
    { hashes: [hash, ...given], source: source.name },
  );
  if (Number(done[0].n) > 0) return summary('already imported', {});

  const id = randomUUID();
  const table = (kind: string) => `${staging}.${quoteIdentifier(`${kind}_${id}`)}`;
  const [checked, events, rejects, kindsSkipped] = ['checked', 'events', 'rejects', 'skipped'].map(table);
  // Dropped views first, then what they wrote to: every name the import may have made, whether it got that far or not.
  const made: string[] = [];
  const cleanup: (() => Promise<unknown>)[] = [
    async () => {
      for (const staged of [...made].reverse()) await dropStaged(client, staged);
    },
  ];
  const make = async (staged: string, query: string) => {
    made.push(staged);
    await client.command({ query });
  };
  try {
    const header = format.header ? await format.header(file, name) : [];
    const unknown = format.reader === 'csv' ? header.filter((f) => !source.fields.includes(f)) : [];
    if (unknown.length > 0 && !options.ignoreUnknown) {
      throw new ImportRefused(
        `${name}: unknown column ${unknown.join(', ')} in the CSV header (known: ${source.fields.join(', ')}; --ignore-unknown skips unknown columns)`,
      );
    }
    made.push(table('lines'));
    const runs = await readRuns(
      client,
      { file, format, header, fields: source.fields, statementRows: options.statementRows, progress: options.progress },
      options.engineReadsFiles,
      table('lines'),
      cleanup,
    ).catch((err: unknown) => {
      throw refusedIfUnreadable(err, name, options.format);
    });
    const accessors = format.accessors(header);
    const staged = await source.stage({ client, options, id, checked, table, joinName: (kind) => `${stagingDatabase(options.database)}.${kind}_${id}` });
    // Each table the source writes has a staging table of its own layout; the target's is `events`.
    const stagedOf = (target: TableName) => (target === source.target ? events : table(`events_${target}`));
    // One pass over the file (a statement per run of lines): its checked rows go through a Null table, whose views write the valid ones in
    // the target's own layout (so its parts are attached as they are), the rejected ones and the skipped ones apart.
    for (const target of targetsOf(source)) await make(stagedOf(target), `CREATE TABLE ${stagedOf(target)} ${stagedLayoutSql(layout, target)}`);
    await make(rejects, `CREATE TABLE ${rejects} (line UInt64, reason String, raw String) ENGINE = MergeTree ORDER BY line`);
    await make(kindsSkipped, `CREATE TABLE ${kindsSkipped} (kind String) ENGINE = MergeTree ORDER BY tuple()`);
    for (const [kind, definition] of Object.entries(staged.tables ?? {})) await make(table(kind), `CREATE TABLE ${table(kind)} ${definition}`);
    await make(checked, `CREATE TABLE ${checked} (${[...CHECKED_COLUMNS, ...source.checked].join(', ')}) ENGINE = Null`);
    await make(table('to_events'), `CREATE MATERIALIZED VIEW ${table('to_events')} TO ${events} AS ${staged.rows}`);
    for (const target of source.more ?? []) {
      const select = staged.more?.[target];
      if (select === undefined) throw new Error(`source ${source.name} stages no rows for ${target}`);
      await make(table(`to_events_${target}`), `CREATE MATERIALIZED VIEW ${table(`to_events_${target}`)} TO ${stagedOf(target)} AS ${select}`);
    }
    await make(
      table('to_rejects'),
      `CREATE MATERIALIZED VIEW ${table('to_rejects')} TO ${rejects} AS SELECT line, reason, raw FROM ${checked} WHERE reason != ''`,
    );
    await make(
      table('to_skipped'),
      `CREATE MATERIALIZED VIEW ${table('to_skipped')} TO ${kindsSkipped} AS SELECT skip AS kind FROM ${checked} WHERE reason = '' AND skip != ''`,
    );
    for (const view of staged.views ?? []) await make(table(view.kind), `CREATE MATERIALIZED VIEW ${table(view.kind)} TO ${view.to} AS ${view.select}`);
    const columns = [...CHECKED_COLUMNS.slice(2), ...source.checked].map((c) => c.split(/\s+/)[0]);
    options.progress?.(`${name}: reading and validating its lines`);
    for await (const lines of runs) {
      const began = performance.now();
      await client
        .command({
          query: `INSERT INTO ${checked} SELECT line, if(reason = '', '', line_text) AS raw, ${columns.join(', ')}
          FROM (${source.check(lines, accessors, options)})
          SETTINGS ${lines.settings ? `${lines.settings}, ` : ''}${INSERT_SETTINGS}`,
        })
        .catch((err: unknown) => {
          throw refusedIfUnreadable(err, name, options.format);
        });
      options.progress?.(`${name}: validated ${lines.name} in ${((performance.now() - began) / 1000).toFixed(2)} s`);
    }
    // What each table's staging table holds, the target's first.
    const moving: { target: TableName; staged: string; counts: StagedCounts }[] = [];
    for (const target of targetsOf(source)) moving.push({ target, staged: stagedOf(target), counts: await stagedCounts(client, source, stagedOf(target)) });
    const counts = totalOf(moving.map((m) => m.counts));
    const [{ rejected: rejectedText }] = await rows<{ rejected: string }>(client, `SELECT count() AS rejected FROM ${rejects}`);
    const rejected = Number(rejectedText);
    const kinds = await rows<{ kind: string; n: string }>(client, `SELECT kind, count() AS n FROM ${kindsSkipped} GROUP BY kind ORDER BY kind`);
    const skipped = Object.fromEntries(kinds.map(({ kind, n }) => [kind, Number(n)]));
    const skippedRows = kinds.reduce((sum, { n }) => sum + Number(n), 0);
    const rowsRead = counts.rows + rejected + skippedRows;
    options.progress?.(`${name}: ${rowsRead} rows read, ${rejected} rejected${skippedRows > 0 ? `, ${skippedRows} skipped` : ''}`);
    let rejectFile: string | undefined;
    if (rejected > 0) rejectFile = await writeRejects(client, rejects, name, options.rejectsDir);
    if (rejected > options.maxBadRows) return summary('refused', { rowsRead, rejected, skipped, rejectFile });
    let duplicates = 0;
    if (counts.identified > 0) {
      const kept = table('kept');
      made.push(kept);
      duplicates = await withoutDuplicates(client, options.database, source, events, kept, counts.accounts, options.statementRows);
      options.progress?.(`${name}: ${duplicates} of its ${counts.identified} ${source.row.many} with an id already imported`);
      if (duplicates > 0) moving[0] = { ...moving[0], staged: kept, counts: await stagedCounts(client, source, kept) };
    }
    const { rows: imported, from, to, accounts } = totalOf(moving.map((m) => m.counts));
    const record = (state: string) =>
      client.command({
        query: `INSERT INTO ${db}.imports (id, hash, file, source, state, rows, from_ts, to_ts, accounts) VALUES (${sqlLiteral(id)}, ${sqlLiteral(hash)}, ${sqlLiteral(name)}, ${sqlLiteral(source.name)}, '${state}', ${imported}, ${from}, ${to}, ${sqlLiteral(accounts)})`,
      });
    let derived = zeroCounts(source);
    const reduced =
      source.derive && imported > 0 ? reducedAddressesReason(readsFrom(from, options.derivation.settings), options.derivation.addressDays ?? 0) : undefined;
    if (reduced !== undefined) throw new ImportRefused(`${name}: ${reduced}`);
    let replaced: { replaced?: number } = {};
    if (imported > 0) {
      // 'started' first: an import killed from here on is found by recoverInterrupted, which removes its rows.
      await record('started');
      for (const m of moving.filter((m) => m.counts.rows > 0)) {
        options.progress?.(`${name}: moving ${m.counts.rows} valid rows into ${m.target}`);
        await moveRows(client, options.database, m.target, m.staged);
      }
      if (source.derive) {
        const change: Change = { client, options, from, to, accounts, id, progress: (message) => options.progress?.(`${name}: ${message}`) };
        derived = { ...derived, ...(await source.derive(change)) };
      }
      if (source.replaces) {
        // 'replacing': every row is in; an import killed from here on is finished by recoverInterrupted, not removed, since the
        // rows it replaces may be gone already.
        await record('replacing');
        replaced = { replaced: await replaceEarlier(client, layout, source, id, from, to) };
        options.progress?.(`${name}: ${replaced.replaced} rows stored before replaced by its own`);
      }
    }
    await record('done');
    const since = imported > 0 ? Math.floor(Math.min(from - (source.derivesBefore ?? 0), ...recovered) / DAY) * DAY : undefined;
    return summary('imported', {
      rowsRead,
      imported,
      rejected,
      duplicates,
      skipped,
      ...derived,
      ...replaced,
      rejectFile,
      accounts: [...accounts].sort(),
      ...(since === undefined ? {} : { since }),
    });
  } finally {
    for (const step of cleanup) await step();
  }
}

/**
 * An error of ClickHouse's reader over a file that is not of its format (JSON that is no JSON, a Parquet file cut
 * short) as the file's refusal, with the reader's reason; any other error as it is.
 */
function refusedIfUnreadable(err: unknown, name: string, format: string): unknown {
  const message = err instanceof Error ? err.message : String(err);
  // chDB's client gives ClickHouse's message without its code, which its cause holds.
  const coded = err instanceof Error && err.cause instanceof Error ? err.cause.message : message;
  if (!/\((INCORRECT_DATA|CANNOT_PARSE_INPUT_ASSERTION_FAILED)\)/.test(coded)) return err;
  const reason = message
    .split('\n')[0]
    .replace(/^Code: \d+\. DB::Exception: /, '')
    .replace(/:? *\(at row \d+\)$/, '');
  return new ImportRefused(`${name}: not ${format} that ClickHouse's reader can read: ${reason}`);
}

/** The summary's counts of what the source derives, before it derived any. */
function zeroCounts(source: Source): Record<string, number> {
  return Object.fromEntries((source.counts ?? []).map((count) => [count, 0]));
}

interface StagedCounts {
  rows: number;
  /** Epoch seconds of the first and last row (0 when there is none). */
  from: number;
  to: number;
  accounts: string[];
  /** Rows that carry their own id. */
  identified: number;
}

async function stagedCounts(client: ClickHouseClient, source: Source, table: string): Promise<StagedCounts> {
  const identified = source.duplicates ? (source.duplicates.identified ?? 'true') : 'false';
  const [counts] = await rows<{ rows: string; from: string; to: string; accounts: string[]; identified: string }>(
    client,
    `SELECT count() AS rows, toInt64(min(${source.time})) AS from, toInt64(max(${source.time})) AS to, ${accountsOf(source)} AS accounts,
      countIf(${identified}) AS identified FROM ${table}`,
  );
  return {
    rows: Number(counts.rows),
    from: Number(counts.from),
    to: Number(counts.to),
    accounts: counts.accounts,
    identified: Number(counts.identified),
  };
}

/** The rows of several staging tables together: their number, the span of those that have rows, their accounts. */
function totalOf(counts: StagedCounts[]): StagedCounts {
  const some = counts.filter((c) => c.rows > 0);
  return {
    rows: some.reduce((n, c) => n + c.rows, 0),
    from: some.length > 0 ? Math.min(...some.map((c) => c.from)) : 0,
    to: some.length > 0 ? Math.max(...some.map((c) => c.to)) : 0,
    accounts: [...new Set(some.flatMap((c) => c.accounts))],
    identified: counts.reduce((n, c) => n + c.identified, 0),
  };
}

/** Every table a source writes, its target first. */
function targetsOf(source: Source): TableName[] {
  return [source.target, ...(source.more ?? [])];
}

/** The accounts of a table's rows (SQL, Array(String)): none for a public source's. */
function accountsOf(source: Source): string {
  return source.public ? 'CAST([] AS Array(String))' : 'groupUniqArray(account_id)';
}

/**
 * Of each whole (Source.replaces) an import's rows belong to, the rows stored before (by other imports, or none) are
 * deleted: the import's rows replace them. A lightweight DELETE, whose rows are gone from every read when it returns;
 * run only where there are some. Run again after it ran, it finds none: recoverInterrupted finishes an import killed
 * while it ran this way. `from`, `to`: the import's span (epoch seconds), within which its wholes lie. Returns the
 * rows deleted.
 */
async function replaceEarlier(client: ClickHouseClient, layout: Layout, source: Source, id: string, from: number, to: number): Promise<number> {
  let replaced = 0;
  const span = `${source.time} BETWEEN toDateTime(${from}, 'UTC') AND toDateTime(${to}, 'UTC')`;
  for (const name of targetsOf(source)) {
    const target = `${quoteIdentifier(layout.database)}.${quoteIdentifier(name)}`;
    const others = `${span} AND import_id != ${sqlLiteral(id)}`;
    // A span that holds no other import's rows (a new day's charts) has nothing to replace: one cheap look, not the set of wholes.
    if ((await rows(client, `SELECT 1 FROM ${target} WHERE ${others} LIMIT 1`)).length === 0) continue;
    const earlier = `${others} AND ${source.replaces} IN (SELECT ${source.replaces} FROM ${target} WHERE ${span} AND import_id = ${sqlLiteral(id)})`;
    const [{ n }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${target} WHERE ${earlier}`);
    if (Number(n) === 0) continue;
    // On a cluster the rows are in the nodes' local tables: the Distributed one takes no DELETE.
    await client.command({ query: `DELETE FROM ${mutationTargetSql(layout, name)} WHERE ${earlier}` });
    replaced += Number(n);
  }
  return replaced;
}

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
 * The staged parts become the target's parts (ATTACH PARTITION … FROM links
 * them; nothing is read or written again). A target that is not a MergeTree
 * table of the same layout (a Distributed table on a cluster) is inserted
 * into instead.
 */
async function moveRows(client: ClickHouseClient, database: string, targetName: string, staged: string): Promise<void> {
  const target = `${quoteIdentifier(database)}.${quoteIdentifier(targetName)}`;
  const [{ engine }] = await rows<{ engine: string }>(client, `SELECT engine FROM system.tables WHERE database = {database:String} AND name = {name:String}`, {
    database,
    name: targetName,
  });
  if (!engine.endsWith('MergeTree')) {
    // Sent to the shards before the statement returns, so the rows are there when the import is recorded done.
    await client.command({ query: `INSERT INTO ${target} SELECT * FROM ${staged}${settingsSql({ insert_distributed_sync: 1 })}` });
    return;
  }
  const partitions = await rows<{ partition: string }>(client, `SELECT DISTINCT _partition_id AS partition FROM ${staged}`);
  for (const { partition } of partitions) {
    await client.command({ query: `ALTER TABLE ${target} ATTACH PARTITION ID ${sqlLiteral(partition)} FROM ${staged}` });
  }
}

/**
 * A staging table in the target's layout: on one node a copy of the target's definition; on a cluster the local
 * table's columns in a plain MergeTree (a copy of the Distributed table would send the staged rows to the target, one
 * of the ReplicatedMergeTree would join the target's replicas).
 */
function stagedLayoutSql(layout: Layout, target: TableName): string {
  const db = quoteIdentifier(layout.database);
  if (layout.cluster === undefined) return `AS ${db}.${quoteIdentifier(target)}`;
  return `AS ${db}.${quoteIdentifier(localTableName(target))} ${mergeTreeEngineSql(target)}`;
}

/** Where an import stages a file's rows (the derivation's database for scratch tables). */
export const stagingDatabase = derivationStagingDatabase;

/**
 * The bookkeeping tables (ddl.ts), and the columns of `imports` a table made before them lacks: a service following
 * imports (follow.ts) reads whose answers an import changed, and a recovery which table an interrupted import's rows
 * are in (every import before sources was of requests). Returns the layout the writes that follow address.
 */
export async function ensureImportTables(client: ClickHouseClient, database: string): Promise<Layout> {
  const layout = await layoutOf(client, database);
  for (const statement of bookkeepingStatements(database, layout.cluster)) await client.command({ query: statement });
  const imports = `${quoteIdentifier(database)}.imports${onClusterSql(layout)}`;
  await client.command({ query: `ALTER TABLE ${imports} ADD COLUMN IF NOT EXISTS accounts Array(String)` });
  await client.command({ query: `ALTER TABLE ${imports} ADD COLUMN IF NOT EXISTS source LowCardinality(String) DEFAULT 'requests'` });
  return layout;
}

/**
 * An import killed between moving its rows in and recording it done left
 * rows with its import_id in its source's table: they are removed and what
 * followed from them undone (requests: their span's downloads derived
 * again), so a killed import leaves nothing behind. One killed earlier left
 * only its staging tables, which are dropped. Imports into a database run
 * one at a time (the service's inbox takes them in turn), so whatever is
 * staged or started when one begins belongs to an import that died. Returns
 * the first row times of the imports it removed (epoch seconds).
 */
export async function recoverInterrupted(
  client: ClickHouseClient,
  options: Pick<ImportOptions, 'database' | 'derivation' | 'progress' | 'statementRows'>,
): Promise<number[]> {
  const db = quoteIdentifier(options.database);
  const layout = await layoutOf(client, options.database);
  const staged = await rows<{ name: string }>(client, 'SELECT name FROM system.tables WHERE database = {staging:String}', {
    staging: stagingDatabase(options.database),
  });
  for (const { name } of staged) {
    options.progress?.(`dropping ${name}, staged by an interrupted import`);
    await client.command({ query: `DROP TABLE IF EXISTS ${quoteIdentifier(stagingDatabase(options.database))}.${quoteIdentifier(name)} SYNC` });
  }
  const pending = await rows<{ id: string; file: string; source: string; from: string; to: string; replacing: number }>(
    client,
    `
    SELECT id, any(file) AS file, any(source) AS source, toInt64(any(from_ts)) AS from, toInt64(any(to_ts)) AS to,
      countIf(state = 'replacing') > 0 AS replacing
    FROM ${db}.imports GROUP BY id HAVING countIf(state = 'done') = 0`,
  );
  for (const p of pending) {
    const source = sourceNamed(p.source);
    if (Number(p.replacing) > 0) {
      // Every row of it is in, and what it replaces may be gone: it is finished rather than removed.
      options.progress?.(`finishing interrupted import ${p.id} (${p.file}): its rows replace those stored before`);
      await replaceEarlier(client, layout, source, p.id, Number(p.from), Number(p.to));
      await client.command({
        query: `INSERT INTO ${db}.imports SELECT * REPLACE ('done' AS state, now() AS at)
          FROM (SELECT * FROM ${db}.imports WHERE id = ${sqlLiteral(p.id)} AND state = 'replacing')`,
      });
      continue;
    }
    options.progress?.(`removing the rows of interrupted import ${p.id} (${p.file})`);
    let accounts: string[] = [];
    for (const name of targetsOf(source)) {
      const [found] = await rows<{ accounts: string[] }>(
        client,
        `SELECT ${accountsOf(source)} AS accounts, count() FROM ${db}.${quoteIdentifier(name)} WHERE import_id = {id:String}`,
        {
          id: p.id,
        },
      );
      accounts = [...new Set([...accounts, ...found.accounts])];
      await client.command({
        query: `ALTER TABLE ${mutationTargetSql(layout, name)} DELETE WHERE import_id = ${sqlLiteral(p.id)}${settingsSql({ mutations_sync: 2 })}`,
      });
    }
    const progress = (message: string) => options.progress?.(`interrupted import ${p.id}: ${message}`);
    await source.undo?.({ client, options, from: Number(p.from), to: Number(p.to), accounts, progress });
    await client.command({
      query: `ALTER TABLE ${db}.imports${onClusterSql(layout)} DELETE WHERE id = ${sqlLiteral(p.id)}${settingsSql({ mutations_sync: 2 })}`,
    });
    options.progress?.(`removed the rows of interrupted import ${p.id} (${p.file}) and undid what followed from them`);
  }
  return pending.map((p) => Number(p.from) - (sourceNamed(p.source).derivesBefore ?? 0));
}

/**
 * The rejected lines, addresses in them, to a file only its owner may read
 * (also one an earlier import of the same name left), in a folder only its
 * owner may enter when this makes it; removed after ADDRESS_RETENTION_DAYS
 * (src/warehouse/retention.ts).
 */
async function writeRejects(client: ClickHouseClient, rejects: string, name: string, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${path.basename(name === '-' ? 'stdin' : name)}${REJECTS_SUFFIX}`);
  const fd = openSync(file, 'w', 0o600);
  fchmodSync(fd, 0o600);
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
    createWriteStream('', { fd }),
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

/**
 * What recognises a delivery: its content's fingerprints, and with them what the command says of its rows
 * (ImportOptions.given): a Spotify chart of the same entries on another --date is another chart.
 */
function delivery(prints: { hash: string; given: string[] }, values: Record<string, string> = {}): { hash: string; given: string[] } {
  const said = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : 1));
  if (said.length === 0) return prints;
  const of = (hash: string) =>
    createHash('sha256')
      .update(`${hash}\n${JSON.stringify(said)}`)
      .digest('hex');
  return { hash: of(prints.hash), given: prints.given.map(of) };
}

async function rows<T>(client: ClickHouseClient, query: string, params?: Record<string, unknown>): Promise<T[]> {
  return (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}
