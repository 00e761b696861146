import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, symlinkSync, type WriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Format, Lines } from './source';
import { quoteIdentifier, settingsSql, sqlLiteral } from '../sql';

/** What the readers need of an import: the file, its format, the source's fields, and how many rows a statement takes. */
export interface Reading {
  /** The file's path (`-` was spooled to one). */
  file: string;
  format: Format;
  /** What the format read before the rows (Format.header); [] for none. */
  header: string[];
  fields: readonly string[];
  statementRows?: number;
  progress?: (message: string) => void;
}

/**
 * chDB's session reads files by mmap, which counts the file's pages in the
 * process's RSS: a 2.9 GB NDJSON file grew it by 3.4 GB. pread reads them
 * through a buffer.
 */
const READ_SETTINGS = "storage_file_read_method = 'pread'";

/**
 * The runs of rows the check reads, one statement each. chDB reads the file
 * itself (fileLines); a server, which cannot see it, is sent it first
 * (streamedLines), as is chDB a Parquet or JSON file cut into runs (it is read
 * whole into a staging table, whose runs are ranges of its rows). `table`
 * names that staging table; the caller drops it.
 */
export async function readRuns(
  client: ClickHouseClient,
  reading: Reading,
  engineReadsFiles: boolean,
  table: string,
  cleanup: (() => Promise<unknown>)[],
): Promise<AsyncIterable<Lines> | Lines[]> {
  if (!engineReadsFiles) return streamedLines(client, table, reading);
  if (reading.format.reader !== 'lines' && reading.format.reader !== 'csv' && reading.statementRows !== undefined)
    return stagedRows(client, table, reading, cleanup);
  return fileLines(reading, cleanup);
}

/**
 * chDB reads the file itself, numbering its lines (`_row_number`), with its
 * own LineAsString, CSV or Parquet reader. The file is named by a link of a
 * plain name, since file() reads `*`, `?` and braces in a path as globs.
 * Empty lines, and lines that start with the format's comment, hold no row.
 * A CSV record is a line (a quoted field spanning lines is not supported):
 * the header is skipped, fields are taken by position under the header's
 * names, a record with fewer fields has the rest empty, and one with more is
 * rejected. Cut into runs, a file of lines is cut by Node (lineRuns).
 */
async function* fileLines(reading: Reading, cleanup: (() => Promise<unknown>)[]): AsyncGenerator<Lines> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'import-link-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  const csv = reading.format.reader === 'csv';
  if (reading.statementRows === undefined) {
    const link = path.join(dir, 'source');
    symlinkSync(path.resolve(reading.file), link);
    yield linesOfFile(link, reading.file.endsWith('.gz'), csv ? 2 : 1, reading, 'the file');
    return;
  }
  for await (const run of lineRuns(reading.file, reading.statementRows, dir, csv ? reading.header : undefined)) {
    yield linesOfFile(run.file, false, run.firstLine, reading, `lines ${run.firstLine}–${run.firstLine + run.lines - 1}`);
  }
}

/** `first`: the number in the source of the file's first line that holds a row (after a CSV's header). */
function linesOfFile(file: string, gzip: boolean, first: number, reading: Reading, name: string): Lines {
  const compression = sqlLiteral(gzip ? 'gzip' : 'none');
  // _row_number counts from 0, and from the first line after a skipped one.
  const line = `toUInt64(assumeNotNull(_row_number)) + ${first} AS line`;
  const { format, header, fields } = reading;
  if (format.reader === 'parquet') {
    return { name, from: `(SELECT ${line}, * FROM file(${sqlLiteral(file)}, Parquet, ${sqlLiteral(parquetStructure(fields))}))`, settings: PARQUET_SETTINGS };
  }
  if (format.reader === 'json') {
    return { name, from: `(SELECT ${line}, raw FROM file(${sqlLiteral(file)}, JSONAsString, 'raw String', ${compression}))`, settings: READ_SETTINGS };
  }
  if (format.reader === 'lines') {
    const comment = format.comment === undefined ? '' : ` AND NOT startsWith(raw, ${sqlLiteral(format.comment)})`;
    return {
      name,
      from: `(SELECT ${line}, raw FROM file(${sqlLiteral(file)}, LineAsString, 'raw String', ${compression})
        WHERE NOT match(raw, ${sqlLiteral('^\\s*$')})${comment})`,
      settings: READ_SETTINGS,
    };
  }
  const cells = [...header.map((_, i) => `c${i + 1}`), 'csv_extra'];
  const named = fields.map((f) => `${header.includes(f) ? `c${header.indexOf(f) + 1}` : "''"} AS ${quoteIdentifier(f)}`);
  return {
    name,
    // A blank line reads as a record of empty fields.
    from: `(SELECT ${line}, ${named.join(', ')}, csv_extra
      FROM file(${sqlLiteral(file)}, CSV, ${sqlLiteral(cells.map((c) => `${c} String`).join(', '))}, ${compression})
      WHERE NOT (${cells.map((c) => `${c} = ''`).join(' AND ')}))`,
    settings: `${READ_SETTINGS}, input_format_csv_skip_first_lines = 1, input_format_csv_detect_header = 0, input_format_csv_allow_variable_number_of_columns = 1, input_format_csv_empty_as_default = 1`,
  };
}

/** The fields as Parquet is read: each as text, a missing column or a null as NULL. */
function parquetStructure(fields: readonly string[]): string {
  return fields.map((f) => `${quoteIdentifier(f)} Nullable(String)`).join(', ');
}

/**
 * ClickHouse's Parquet reader: a column the file lacks is read as NULL, and a
 * timestamp without a zone of its own as UTC.
 */
const PARQUET_SETTINGS = `${READ_SETTINGS}, input_format_parquet_allow_missing_columns = 1, session_timezone = 'UTC'`;

/**
 * A Parquet or JSON file cut into runs: read whole into `table` (its rows
 * numbered in the file's order), then a run is a range of them.
 */
async function stagedRows(client: ClickHouseClient, table: string, reading: Reading, cleanup: (() => Promise<unknown>)[]): Promise<Lines[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'import-link-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  const link = path.join(dir, 'source');
  symlinkSync(path.resolve(reading.file), link);
  const structure = reading.format.reader === 'json' ? 'raw String' : parquetStructure(reading.fields);
  await client.command({ query: `CREATE TABLE ${table} (line UInt64, ${structure}) ENGINE = MergeTree ORDER BY line` });
  const { from, settings } = linesOfFile(link, reading.file.endsWith('.gz'), 1, reading, 'the file');
  await client.command({ query: `INSERT INTO ${table} SELECT * FROM ${from} SETTINGS ${settings}` });
  return rangesOf(client, table, reading.statementRows, '*');
}

/** Runs of `per` rows of a staging table of numbered rows (all in one without `per`). */
async function rangesOf(client: ClickHouseClient, table: string, per: number | undefined, selected: string): Promise<Lines[]> {
  const result = await client.query({ query: `SELECT toUInt64(max(line)) AS last FROM ${table}`, format: 'JSONEachRow' });
  const last = Number((await result.json<{ last: string }>())[0].last);
  const run = per ?? Math.max(last, 1);
  const runs: Lines[] = [];
  for (let first = 1; first <= last; first += run) {
    const end = first + run - 1;
    runs.push({ name: `lines ${first}–${Math.min(end, last)}`, from: `(SELECT ${selected} FROM ${table} WHERE line BETWEEN ${first} AND ${end})` });
  }
  return runs;
}

/**
 * The source cut into files of `lines` lines each (uncompressed; a CSV's
 * header, which the reader skips, heading each), in `dir`, written one at a
 * time while the last is read: each is removed when the next is asked for.
 * Node copies bytes and counts newlines, apart from the engine's statements.
 */
async function* lineRuns(
  source: string,
  lines: number,
  dir: string,
  csvHeader: string[] | undefined,
): AsyncGenerator<{ file: string; firstLine: number; lines: number }> {
  let read = 0;
  let headerSkipped = csvHeader === undefined;
  let run: { file: string; firstLine: number; lines: number; out: WriteStream } | undefined;
  let index = 0;
  let partial = false;
  const close = async () => {
    const out = run?.out;
    if (out) await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  };
  for await (const chunk of openSource(source)) {
    const buffer = chunk as Buffer;
    let at = 0;
    while (at < buffer.length) {
      if (!headerSkipped) {
        const newline = buffer.indexOf(10, at);
        at = newline === -1 ? buffer.length : newline + 1;
        if (newline !== -1) {
          headerSkipped = true;
          read = 1;
        }
        continue;
      }
      if (!run) {
        const file = path.join(dir, `run-${(index += 1)}`);
        run = { file, firstLine: read + 1, lines: 0, out: createWriteStream(file) };
        if (csvHeader) run.out.write(`${csvHeader.join(',')}\n`);
      }
      let end = at;
      while (run.lines < lines) {
        const newline = buffer.indexOf(10, end);
        if (newline === -1) {
          end = buffer.length;
          break;
        }
        end = newline + 1;
        run.lines += 1;
        read += 1;
      }
      if (!run.out.write(buffer.subarray(at, end))) await once(run.out, 'drain');
      partial = buffer[end - 1] !== 10;
      at = end;
      if (run.lines === lines) {
        await close();
        yield run;
        rmSync(run.file, { force: true });
        run = undefined;
      }
    }
  }
  if (run) {
    // A last line without a newline.
    if (partial) run.lines += 1;
    await close();
    yield run;
    rmSync(run.file, { force: true });
  }
}

/**
 * A server is sent the file, into a staging table (`table`, which the caller
 * drops): a file of lines as its lines, numbered on their way; a Parquet file
 * as it is, its rows numbered by the server as it reads them (`input()`); a
 * JSON file as it is, its documents numbered by the staging table's default
 * as the server stores them (which also holds where the body comes inline
 * with the statement, as chDB's client sends it, and `input()` reads none).
 */
async function streamedLines(client: ClickHouseClient, table: string, reading: Reading): Promise<Lines[]> {
  const { format, fields } = reading;
  if (format.reader === 'parquet') {
    await client.command({ query: `CREATE TABLE ${table} (line UInt64, ${parquetStructure(fields)}) ENGINE = MergeTree ORDER BY line` });
    const result = await client.exec({
      query: `INSERT INTO ${table} SELECT rowNumberInAllBlocks() + 1, * FROM input(${sqlLiteral(parquetStructure(fields))})
        ${settingsSql({ input_format_parquet_allow_missing_columns: 1, session_timezone: 'UTC', max_threads: 1 })} FORMAT Parquet`,
      values: createReadStream(reading.file),
    });
    for await (const _ of result.stream) void _;
    return rangesOf(client, table, reading.statementRows, '*');
  }
  if (format.reader === 'json') {
    await client.command({ query: `CREATE TABLE ${table} (line UInt64 DEFAULT rowNumberInAllBlocks() + 1, raw String) ENGINE = MergeTree ORDER BY line` });
    const result = await client.exec({
      query: `INSERT INTO ${table} (raw)${settingsSql({ max_threads: 1 })} FORMAT JSONAsString`,
      values: openSource(reading.file),
    });
    for await (const _ of result.stream) void _;
    return rangesOf(client, table, reading.statementRows, '*');
  }
  const csv = format.reader === 'csv';
  const counted = { lines: 0 };
  const columns = csv ? fields.map((f) => `${quoteIdentifier(f)} String`).join(', ') : 'raw String';
  await client.command({ query: `CREATE TABLE ${table} (line UInt64, ${columns}) ENGINE = MergeTree ORDER BY line` });
  const result = await client.exec({
    query: `INSERT INTO ${table}${settingsSql({ input_format_skip_unknown_fields: 1, input_format_csv_empty_as_default: 1 })} FORMAT ${csv ? 'CSVWithNames' : 'TabSeparated'}`,
    values: numberedLines(reading, counted),
  });
  // A server's answer must be read to the end before its connection is reused.
  for await (const _ of result.stream) void _;
  const selected = csv ? `*, '' AS csv_extra` : '*';
  const run = reading.statementRows ?? Math.max(counted.lines, 1);
  const runs: Lines[] = [];
  for (let first = 1; first <= counted.lines; first += run) {
    const last = first + run - 1;
    runs.push({ name: `lines ${first}–${Math.min(last, counted.lines)}`, from: `(SELECT ${selected} FROM ${table} WHERE line BETWEEN ${first} AND ${last})` });
  }
  return runs;
}

/**
 * Numbers the lines on their way in, so a rejected row is reported by its
 * line: lines become `number <TAB> line` (TabSeparated-escaped, so
 * ClickHouse stores each as one String whatever it holds); CSV lines get the
 * number as a first column (a record per line: a quoted field spanning lines
 * is not supported). Empty lines, and lines that start with the format's
 * comment, are skipped.
 */
function numberedLines(reading: Reading, counted: { lines: number }): Readable {
  const { format, progress } = reading;
  let line = 0;
  let rest = '';
  let bytes = 0;
  let lastReport = performance.now();
  const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\r/g, '\\r');
  const emit = (text: string, out: string[]) => {
    line += 1;
    counted.lines = line;
    if (text.trim() === '' || (format.comment !== undefined && text.startsWith(format.comment))) return;
    if (format.reader === 'csv') out.push(`${line === 1 ? 'line' : line},${text}\n`);
    else out.push(`${line}\t${escape(text)}\n`);
  };
  const numbering = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      const out: string[] = [];
      for (const part of parts) emit(part, out);
      if (progress && performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        progress(`read ${line.toLocaleString('en-US')} lines (${Math.round(bytes / 1e6)} MB)`);
      }
      callback(null, out.join(''));
    },
    flush(callback) {
      const out: string[] = [];
      if (rest !== '') emit(rest, out);
      callback(null, out.join(''));
    },
  });
  const input = openSource(reading.file);
  input.on('error', (err: Error) => numbering.destroy(err));
  return input.pipe(numbering);
}

export function openSource(source: string): Readable {
  const file = createReadStream(source);
  return source.endsWith('.gz') ? file.pipe(createGunzip()) : file;
}

/** The CSV header's field names (the file's first line; names are plain words, so splitting on commas reads them). */
export async function csvHeader(source: string): Promise<string[]> {
  let text = '';
  for await (const chunk of openSource(source)) {
    text += (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  return text
    .split('\n')[0]
    .replace(/\r$/, '')
    .split(',')
    .map((f) => f.trim().replace(/^"|"$/g, ''));
}
