import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config';
import { classifyGatewayError } from '../cube/engine/errors';
import { ServiceError } from '../errors';
import type { CubeService, Query, RequestScope } from '../cube/service';
import type { Warehouse } from '../warehouse/connection';
import { quoteIdentifier, settingsList, sqlLiteral } from '../warehouse/sql';
import { statementTicket } from '../warehouse/statement-queue';
import { IN_PROCESS_READ_SETTINGS, type ExportFormat } from './formats';

/** What left rows out of an export: the query's own limit, or one of the export caps. */
export type CutBy = 'limit' | 'EXPORT_MAX_ROWS' | 'EXPORT_MAX_BYTES';

export interface OpenedExport {
  /** The members, in the order of the file's columns. */
  members: string[];
  /** Rows the file may hold at most: the query's limit or EXPORT_MAX_ROWS, whichever is less. */
  rows: number;
  /** What cuts the file at `rows`. */
  rowCap: CutBy;
  /**
   * csv and ndjson: the engine's bytes as it writes them, holding one row
   * more than `rows` when rows were left out (the caller cuts and says so);
   * they hold the statement until read to the end or stopped.
   */
  chunks?: AsyncIterable<ExportChunk>;
  /** parquet: the whole file, written and closed, the engine already free. */
  file?: WrittenFile;
}

/** Bytes of a csv or ndjson export as the engine wrote them. */
export interface ExportChunk {
  bytes: Uint8Array;
  /**
   * On chDB, whose stream hands out one block a chunk, the whole rows the
   * bytes hold, csv's header row not counted (only the first chunk has
   * one); a server's chunks are bytes cut anywhere, and say nothing.
   */
  rows?: number;
}

/** A file the engine wrote for an export, with whether `rows` left rows out, known before its first byte is sent. */
export interface WrittenFile {
  path: string;
  bytes: number;
  truncated: boolean;
  /** Removes the file. */
  dispose(): Promise<void>;
}

export interface Exporter {
  /**
   * Generates Cube's SQL for an admitted query (src/query/admission.ts: its `limit`, if any, a whole number of at
   * least 1) and starts the engine on it; rejects before any byte is written.
   */
  open(query: Query, format: ExportFormat, context: RequestScope, signal: AbortSignal): Promise<OpenedExport>;
}

export interface ExporterOptions {
  cube: Pick<CubeService, 'exportSql'>;
  warehouse: Pick<Warehouse, 'stream' | 'readsLocalFiles' | 'client'>;
  limits: Pick<Config['query'], 'timeoutMs' | 'maxMemoryBytes'>;
  caps: Config['exports'];
  /** Where parquet files are written before they are sent; the system's temporary directory by default. */
  spoolDir?: string;
}

/**
 * Exports run Cube's own SQL for the query and the key (CubeService.exportSql),
 * so an export holds what the load of the same query answers, in the same
 * order, and the account's filter is in it. The engine writes the file: its
 * columns renamed to the members' names around Cube's statement, in the
 * format asked for. Each statement waits its turn in the statement queue in
 * the key's lane, like a load's, and is held to the query time and memory
 * limits.
 *
 * Cube's statement runs once (a count first would run it twice): csv and
 * ndjson ask for one row more than the file may hold, and the caller drops
 * it and says so. A parquet file cannot lose its last row once written, so
 * on chDB the engine writes the rows (one more) to a local file in its
 * Native format, counts them there and writes the parquet file from that
 * one, holding `rows` at most. A ClickHouse server cannot write this
 * machine's files, so there the rows are counted by a statement of their own
 * first (a server's stream of a parquet file is one file; chDB's is not).
 * Either way the parquet file is whole before its first byte is sent: a file
 * over EXPORT_MAX_BYTES is refused (a parquet file cut short is unreadable),
 * and Result-Truncated is known. chDB cannot stop a statement it runs, so on
 * chDB a parquet export whose client left runs to its end or the query time
 * limit.
 */
export function createExporter(options: ExporterOptions): Exporter {
  const { cube, warehouse, caps } = options;
  return {
    async open(query, format, scope, signal) {
      const limit = query.limit as number | undefined;
      const rows = Math.min(limit ?? caps.maxRows, caps.maxRows);
      const rowCap: CutBy = limit !== undefined && limit <= caps.maxRows ? 'limit' : 'EXPORT_MAX_ROWS';
      // One row more than the file may hold: whether it exists says whether rows were left out.
      const { sql, columns } = await cube.exportSql(query, rows + 1, scope);
      const projection = columns.map(({ alias, member }) => `${quoteIdentifier(alias)} AS ${quoteIdentifier(member)}`).join(', ');
      const members = columns.map((c) => c.member);
      const select = `SELECT ${projection} FROM (${sql})`;
      const run: ExportRun = { ...options, scope, signal };
      try {
        if (format.records === 'none') return { members, rows, rowCap, file: await parquetFile(run, select, rows, format) };
        let counted: number | undefined;
        const settings = warehouse.readsLocalFiles ? { ...format.settings, ...IN_PROCESS_READ_SETTINGS } : format.settings;
        const chunks = await streamed(run, select, format.clickhouse, settings, rows + 1, (n) => (counted = n));
        const takeCount = () => {
          const given = counted;
          counted = undefined;
          return given;
        };
        return { members, rows, rowCap, chunks: countedChunks(chunks, takeCount, format.records === 'csv') };
      } catch (err) {
        throw exportFailure(err, signal);
      }
    },
  };
}

/** One export: the exporter's options, the request's scope, and what stops its statements (the client left, the deadline). */
interface ExportRun extends ExporterOptions {
  scope: RequestScope;
  signal: AbortSignal;
}

/** What the engine writes for one statement, its turn taken in the key's lane of the statement queue. */
function streamed(
  { warehouse, limits, scope, signal }: ExportRun,
  query: string,
  format: string,
  settings: Record<string, string | number>,
  maxResultRows: number,
  onRows?: (rows: number) => void,
): Promise<AsyncIterable<Uint8Array>> {
  return statementTicket.run({ lane: scope.lane ?? 'unnamed', signal }, () =>
    warehouse.stream({
      query,
      format,
      settings,
      signal,
      onRows,
      limits: { timeoutMs: limits.timeoutMs, maxMemoryBytes: limits.maxMemoryBytes, maxResultRows },
    }),
  );
}

/** A parquet file of the rows of `select`, at most `rows` of them, in a directory of its own that `dispose` removes. */
async function parquetFile(run: ExportRun, select: string, rows: number, format: ExportFormat): Promise<WrittenFile> {
  const dir = await mkdtemp(path.join(run.spoolDir ?? os.tmpdir(), 'analytics-export-'));
  let removed: Promise<void> | undefined;
  const dispose = () => (removed ??= rm(dir, { recursive: true, force: true }));
  try {
    const file = path.join(dir, `export.${format.extension}`);
    const { truncated, bytes } = run.warehouse.readsLocalFiles
      ? await parquetByEngine(run, select, rows, format, dir, file)
      : await parquetFromServer(run, select, rows, format, file);
    if (bytes === undefined) {
      throw new ServiceError(
        'result_too_large',
        `The parquet file would be larger than EXPORT_MAX_BYTES (${run.caps.maxBytes} bytes), and a parquet file cut short cannot be read, so none is sent. Ask for fewer rows ("limit"), or export csv or ndjson, which stop at the cap and say so.`,
      );
    }
    return { path: file, bytes, truncated, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The file's size (undefined over EXPORT_MAX_BYTES), and whether `rows` left rows out. */
interface Written {
  truncated: boolean;
  bytes: number | undefined;
}

/**
 * On chDB: chDB's stream hands out each block as a parquet file of its own (a reader sees the last block's rows
 * only), and a parquet file cannot lose its last row, so the engine writes the rows (one more than the file may
 * hold) in its Native format to a local file, counts them there, and writes the parquet file from it: no byte
 * passes through the service, and no query's SQL runs twice.
 */
async function parquetByEngine(run: ExportRun, select: string, rows: number, format: ExportFormat, dir: string, file: string): Promise<Written> {
  const { warehouse, limits, caps, scope, signal } = run;
  const limitSettings = { max_execution_time: Math.ceil(limits.timeoutMs / 1000), max_memory_usage: limits.maxMemoryBytes };
  const readSql = settingsList({ ...limitSettings, ...IN_PROCESS_READ_SETTINGS });
  // chDB, as clickhouse-local, maps a file() it reads (storage_file_read_method 'mmap'): the Native rows' pages
  // then count in the process's RSS while they are read, 98 MB for 600,000 raw rows.
  const fromFile = { storage_file_read_method: 'pread' };
  // ClickHouse spreads the blocks it reads from a file over max_threads streams (parallelize_output_from_storages)
  // and gathers them for the writer in whichever order they come: the parquet file then held whole blocks of
  // rows out of the query's order, in million-row exports under load; one stream writes them as they
  // are in the Native file, as fast (docs/benchmarks.md, "Exports").
  const inFileOrder = { parallelize_output_from_storages: 0 };
  const writeSql = settingsList({ ...limitSettings, ...format.settings, ...fromFile, ...inFileOrder });
  const client = warehouse.client();
  const inLane = <T>(statement: () => Promise<T>) => statementTicket.run({ lane: scope.lane ?? 'unnamed', signal }, statement);
  let truncated: boolean;
  try {
    const from = `file(${sqlLiteral(path.join(dir, 'rows.native'))}, Native)`;
    await inLane(() => client.command({ query: `INSERT INTO FUNCTION ${from} ${select} SETTINGS ${readSql}` }));
    const counted = await inLane(async () =>
      (await client.query({ query: `SELECT count() AS n FROM ${from} SETTINGS ${settingsList(fromFile)}`, format: 'JSONEachRow' })).json<{ n: string }>(),
    );
    truncated = Number(counted[0].n) > rows;
    await inLane(() =>
      client.command({
        query: `INSERT INTO FUNCTION file(${sqlLiteral(file)}, ${format.clickhouse}) SELECT * FROM ${from} LIMIT ${rows} SETTINGS ${writeSql}`,
      }),
    );
  } finally {
    await client.close();
  }
  const bytes = (await stat(file)).size;
  return { truncated, bytes: bytes > caps.maxBytes ? undefined : bytes };
}

/** A ClickHouse server cannot write this machine's files: its rows are counted by a statement of their own, then streamed into the file. */
async function parquetFromServer(run: ExportRun, select: string, rows: number, format: ExportFormat, file: string): Promise<Written> {
  const counted = await text(await streamed(run, `SELECT count() FROM (${select})`, 'TabSeparated', {}, 1));
  const truncated = Number(counted) > rows;
  const bytes = await written(await streamed(run, `${select} LIMIT ${rows}`, format.clickhouse, format.settings, rows), file, run.caps.maxBytes);
  return { truncated, bytes };
}

async function text(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  let answer = '';
  for await (const chunk of chunks) answer += Buffer.from(chunk).toString('utf8');
  return answer.trim();
}

/**
 * Pairs each chunk with the row count the engine gave just before handing
 * it over (`takeCount`), if it gave one. chDB's stream formats each block
 * on its own, so with CSVWithNames every chunk begins with the header row:
 * the first chunk keeps it, the later ones lose it (the header, the
 * members' names, holds no newline), so the file has it once.
 */
async function* countedChunks(chunks: AsyncIterable<Uint8Array>, takeCount: () => number | undefined, csv: boolean): AsyncIterable<ExportChunk> {
  let first = true;
  for await (const bytes of chunks) {
    const rows = takeCount();
    if (rows === undefined) yield { bytes };
    else if (csv && !first) yield { bytes: bytes.subarray(bytes.indexOf(0x0a) + 1), rows };
    else yield { bytes, rows };
    first = false;
  }
}

/** Writes the chunks to `file`; its size, or undefined (and the statement stopped) once it would pass `maxBytes`. */
async function written(chunks: AsyncIterable<Uint8Array>, file: string, maxBytes: number): Promise<number | undefined> {
  const handle = await open(file, 'wx', 0o600);
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      bytes += chunk.length;
      if (bytes > maxBytes) return undefined;
      await handle.write(chunk);
    }
    return bytes;
  } finally {
    await handle.close();
  }
}

/** A failure of the engine as the error envelope names it; a stop asked for (the client left, the deadline) as its reason. */
export function exportFailure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ServiceError) return err;
  return classifyGatewayError(500, { error: err instanceof Error ? err.message : String(err) });
}
