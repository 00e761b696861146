import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, symlinkSync, type WriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier, settingsSql, sqlLiteral } from '../sql';
import type { ImportOptions } from './import';
import { FIELDS, ImportRefused, type ImportFormat } from './records';

/**
 * Where the validation reads the file's lines: `from` yields the lines that
 * hold a row, as `line` (its number in the file) and `raw` (NDJSON,
 * CloudFront) or the canonical fields and `csv_extra` (CSV).
 */
export interface Lines {
  /** Which lines, for progress messages. */
  name: string;
  from: string;
  /**
   * The reader's settings, as the statement's SETTINGS clause: chDB's client
   * turns `clickhouse_settings` into SET statements that outlive the
   * statement.
   */
  settings?: string;
}

/**
 * chDB reads the file itself, numbering its lines (`_row_number`), with its
 * own LineAsString or CSV reader. The file is named by a link of a plain
 * name, since file() reads `*`, `?` and braces in a path as globs. Empty
 * lines, and CloudFront's `#` header lines, hold no row. A CSV record is a
 * line (a quoted field spanning lines is not supported): the header is
 * skipped, fields are taken by position under the header's names, a record
 * with fewer fields has the rest empty, and one with more is rejected.
 */
/**
 * chDB's session reads files by mmap, which counts the file's pages in the
 * process's RSS: a 2.9 GB NDJSON file grew it by 3.4 GB. pread reads them
 * through a buffer.
 */
const READ_SETTINGS = "storage_file_read_method = 'pread'";

export async function* fileLines(
  source: string,
  header: string[],
  format: ImportFormat,
  statementRows: number | undefined,
  cleanup: (() => Promise<unknown>)[],
): AsyncGenerator<Lines> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'import-link-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  if (statementRows === undefined) {
    const link = path.join(dir, 'source');
    symlinkSync(path.resolve(source), link);
    yield linesOfFile(link, source.endsWith('.gz'), format === 'csv' ? 2 : 1, header, format, 'the file');
    return;
  }
  for await (const run of lineRuns(source, statementRows, dir, format === 'csv' ? header : undefined)) {
    yield linesOfFile(run.file, false, run.firstLine, header, format, `lines ${run.firstLine}–${run.firstLine + run.lines - 1}`);
  }
}

/** `first`: the number in the source of the file's first line that holds a row (after a CSV's header). */
function linesOfFile(file: string, gzip: boolean, first: number, header: string[], format: ImportFormat, name: string): Lines {
  const compression = sqlLiteral(gzip ? 'gzip' : 'none');
  // _row_number counts from 0, and from the first line after a skipped one.
  const line = `toUInt64(assumeNotNull(_row_number)) + ${first} AS line`;
  if (format !== 'csv') {
    const comment = format === 'cloudfront' ? " AND NOT startsWith(raw, '#')" : '';
    return {
      name,
      from: `(SELECT ${line}, raw FROM file(${sqlLiteral(file)}, LineAsString, 'raw String', ${compression})
        WHERE NOT match(raw, ${sqlLiteral('^\\s*$')})${comment})`,
      settings: READ_SETTINGS,
    };
  }
  const cells = [...header.map((_, i) => `c${i + 1}`), 'csv_extra'];
  const named = FIELDS.map((f) => `${header.includes(f) ? `c${header.indexOf(f) + 1}` : "''"} AS ${quoteIdentifier(f)}`);
  return {
    name,
    // A blank line reads as a record of empty fields.
    from: `(SELECT ${line}, ${named.join(', ')}, csv_extra
      FROM file(${sqlLiteral(file)}, CSV, ${sqlLiteral(cells.map((c) => `${c} String`).join(', '))}, ${compression})
      WHERE NOT (${cells.map((c) => `${c} = ''`).join(' AND ')}))`,
    settings: `${READ_SETTINGS}, input_format_csv_skip_first_lines = 1, input_format_csv_detect_header = 0, input_format_csv_allow_variable_number_of_columns = 1, input_format_csv_empty_as_default = 1`,
  };
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

/** A server is sent the file's lines, numbered on their way, into a staging table (`table`, which the caller drops). */
export async function streamedLines(
  client: ClickHouseClient,
  table: string,
  source: string,
  options: Pick<ImportOptions, 'format' | 'statementRows' | 'progress'>,
): Promise<Lines[]> {
  const csv = options.format === 'csv';
  const counted = { lines: 0 };
  const columns = csv ? FIELDS.map((f) => `${quoteIdentifier(f)} String`).join(', ') : 'raw String';
  await client.command({ query: `CREATE TABLE ${table} (line UInt64, ${columns}) ENGINE = MergeTree ORDER BY line` });
  const result = await client.exec({
    query: `INSERT INTO ${table}${settingsSql({ input_format_skip_unknown_fields: 1, input_format_csv_empty_as_default: 1 })} FORMAT ${csv ? 'CSVWithNames' : 'TabSeparated'}`,
    values: numberedLines(source, options.format, counted, options.progress),
  });
  // A server's answer must be read to the end before its connection is reused.
  for await (const _ of result.stream) void _;
  const selected = csv ? `*, '' AS csv_extra` : '*';
  const run = options.statementRows ?? Math.max(counted.lines, 1);
  const runs: Lines[] = [];
  for (let first = 1; first <= counted.lines; first += run) {
    const last = first + run - 1;
    runs.push({ name: `lines ${first}–${Math.min(last, counted.lines)}`, from: `(SELECT ${selected} FROM ${table} WHERE line BETWEEN ${first} AND ${last})` });
  }
  return runs;
}

/**
 * Numbers the lines on their way in, so a rejected row is reported by its
 * line: NDJSON lines become `number <TAB> line` (TabSeparated-escaped, so
 * ClickHouse stores each as one String whatever it holds); CSV lines get the
 * number as a first column (a record per line: a quoted field spanning lines
 * is not supported). Empty lines are skipped.
 */
function numberedLines(source: string, format: ImportFormat, counted: { lines: number }, progress?: (message: string) => void): Readable {
  let line = 0;
  let rest = '';
  let bytes = 0;
  let lastReport = performance.now();
  const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\r/g, '\\r');
  const emit = (text: string, out: string[]) => {
    line += 1;
    counted.lines = line;
    if (text.trim() === '' || (format === 'cloudfront' && text.startsWith('#'))) return;
    if (format === 'csv') out.push(`${line === 1 ? 'line' : line},${text}\n`);
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
  const input = openSource(source);
  input.on('error', (err: Error) => numbering.destroy(err));
  return input.pipe(numbering);
}

function openSource(source: string): Readable {
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

/**
 * CloudFront standard access logs: tab-separated, the columns named by the
 * `#Fields:` header line. They log the byte range served (sc-range-start,
 * sc-range-end) rather than the Range header, and URL-encode every field
 * (records.ts, cloudFrontAccessors).
 */
export async function cloudFrontFields(source: string, name: string): Promise<string[]> {
  let text = '';
  for await (const chunk of openSource(source)) {
    text += (chunk as Buffer).toString('utf8');
    const fields = /^#Fields:(.*)$/m.exec(text);
    if (fields && text.indexOf('\n', fields.index) >= 0) return fields[1].trim().split(/\s+/);
    if (text.length > 65_536) break;
  }
  throw new ImportRefused(`${name}: no #Fields: header line, which CloudFront standard logs start with`);
}
