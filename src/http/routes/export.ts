import { createReadStream } from 'node:fs';
import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../../config';
import { exportFailure, type CutBy, type ExportChunk, type Exporter, type OpenedExport, type WrittenFile } from '../../export/exporter';
import { FORMAT_NAMES, FORMATS, formatNamed, type ExportFormat } from '../../export/formats';
import { RecordEnds } from '../../export/records';
import { Spool } from '../../export/spool';
import { requestScopeOf } from '../scope';
import { ServiceError } from '../../errors';
import type { Admission } from '../../query/admission';
import { TRUNCATED_HEADER } from '../truncation-header';

/** Bytes of an export that wait in memory for a slow client; more wait in a temporary file (see Spool). */
export const SPOOL_MEMORY_BYTES = 4 * 1024 * 1024;
/**
 * How long the status line waits after the engine's first chunk: an export
 * the engine finishes within it (or within SPOOL_MEMORY_BYTES) says in
 * Result-Truncated whether rows were left out, before its first byte.
 */
const HOLD_MS = 1000;

/**
 * GET|POST /v1/data/export — the rows of one query as a file the engine
 * writes (csv, ndjson, parquet). Same body, key, scope, account and size
 * limits as /v1/data/load/; its own row and byte caps, whose cut is always
 * said. csv and ndjson are streamed as the engine writes them, through a
 * spool: the engine goes at its own pace and is free once it has written
 * the rows, whatever the client's pace (chDB runs one statement at a time,
 * so a slow reader holding it would stop every other query), and the
 * service holds at most SPOOL_MEMORY_BYTES in memory. The cut is said in
 * Result-Truncated when known before the first byte, and always at the end:
 * csv's HTTP trailer, ndjson's closing line. parquet is sent once the
 * engine has written the whole file, with its length and Result-Truncated.
 * A client that goes away stops the statement.
 */
export function exportRoute(admission: Admission, exporter: Exporter, limits: Config['query'], caps: Config['exports']): RequestHandler {
  return async (req, res) => {
    const format = negotiate(req);
    const left = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) left.abort(new ServiceError('internal', 'The client went away.'));
    });
    // QUERY_TIMEOUT_SECONDS bounds a whole export, its wait in the statement queue included.
    const scope = requestScopeOf(res, { ms: limits.timeoutMs, what: 'export' });
    const signal = AbortSignal.any([left.signal, scope.deadline!]);
    let opened: OpenedExport | undefined;
    try {
      const { query } = await admission.admit('export', req);
      opened = await exporter.open(query, format, scope, signal);
      if (opened.file) await sendFile(res, opened.file, opened.members, format, signal);
      else await sendStream(res, opened, opened.chunks![Symbol.asyncIterator](), format, caps, signal);
    } finally {
      await opened?.file?.dispose();
    }
  };
}

async function sendFile(res: Response, file: WrittenFile, members: string[], format: ExportFormat, signal: AbortSignal): Promise<void> {
  startAnswer(res, members, format, file.truncated);
  res.setHeader('Content-Length', file.bytes);
  for await (const chunk of createReadStream(file.path, { highWaterMark: SPOOL_MEMORY_BYTES / 4 })) {
    await written(res, chunk as Buffer, signal);
    if (signal.aborted) {
      // A length announced and not reached: the client sees the file is incomplete.
      res.destroy();
      return;
    }
  }
  await file.dispose();
  res.end();
}

async function sendStream(
  res: Response,
  opened: OpenedExport,
  chunks: AsyncIterator<ExportChunk>,
  format: ExportFormat,
  caps: Config['exports'],
  signal: AbortSignal,
): Promise<void> {
  // The first chunk before the status line: a statement that fails at once is an error envelope.
  let first: IteratorResult<ExportChunk>;
  try {
    first = await chunks.next();
  } catch (err) {
    await chunks.return?.();
    throw exportFailure(err, signal);
  }
  const spool = new Spool(SPOOL_MEMORY_BYTES);
  try {
    const cutting = cutAtCaps(first, chunks, spool, format, opened, caps, signal);
    let hold: NodeJS.Timeout | undefined;
    const known = await Promise.race([
      cutting,
      spool.whenBuffered(SPOOL_MEMORY_BYTES).then(() => undefined),
      new Promise<undefined>((resolve) => (hold = setTimeout(() => resolve(undefined), HOLD_MS))),
    ]);
    clearTimeout(hold);
    // Nothing sent yet: a failure is still an error envelope.
    if (known?.failure) throw known.failure;
    startAnswer(res, opened.members, format, known && known.cut !== undefined);
    if (format.records === 'csv') res.setHeader('Trailer', TRUNCATED_HEADER);

    for await (const chunk of spool.chunks()) {
      if (signal.aborted) break;
      await written(res, chunk, signal);
    }
    const outcome = await cutting;
    if (res.destroyed) return;
    const failure = outcome.failure ?? (signal.aborted ? exportFailure(signal.reason, signal) : undefined);
    if (format.name === 'ndjson') {
      // Nothing may pass for a whole answer: the closing line says whether, and why, rows were left out.
      const closing = failure
        ? { truncated: true, rows: outcome.rows, error: failure instanceof Error ? failure.message : 'The export failed.' }
        : { truncated: outcome.cut !== undefined, rows: outcome.rows, ...(outcome.cut ? { cutBy: outcome.cut } : {}) };
      // Freed before the last byte, so a client that asks again at once finds the key's slot free.
      await spool.close();
      res.end(`${JSON.stringify(closing)}\n`);
      return;
    }
    if (failure) {
      res.destroy();
      return;
    }
    await spool.close();
    res.addTrailers({ [TRUNCATED_HEADER]: String(outcome.cut !== undefined) });
    res.end();
  } finally {
    await spool.close();
  }
}

interface Outcome {
  /** Rows passed on, a csv header row not counted. */
  rows: number;
  cut?: CutBy;
  failure?: unknown;
}

/**
 * Passes the engine's bytes into the spool up to the last whole row under
 * the caps, at the engine's pace, and stops the statement there: the row
 * after the last one the file may hold, if the engine wrote it, is the sign
 * that rows were left out. A chunk whose rows the engine counted and that
 * ends before either cap goes on unread; the others are scanned for where
 * rows end (csv's scan reads every byte).
 */
async function cutAtCaps(
  first: IteratorResult<ExportChunk>,
  chunks: AsyncIterator<ExportChunk>,
  spool: Spool,
  format: ExportFormat,
  opened: OpenedExport,
  caps: Config['exports'],
  signal: AbortSignal,
): Promise<Outcome> {
  // CSV's header row is a record too.
  const records = format.records === 'csv' ? opened.rows + 1 : opened.rows;
  let recordsLeft = records;
  let room = caps.maxBytes;
  const ends = new RecordEnds(format.records as 'lines' | 'csv');
  const rows = () => Math.max(0, records - recordsLeft - (format.records === 'csv' ? 1 : 0));
  try {
    for (let next = first; !next.done;) {
      // The engine makes the next chunk while this one is scanned and spooled.
      const coming = chunks.next();
      coming.catch(() => undefined);
      const { bytes: chunk, rows: counted } = next.value;
      const held = counted === undefined ? undefined : counted + (format.records === 'csv' && next === first ? 1 : 0);
      if (held !== undefined && held < recordsLeft && chunk.length <= room) {
        recordsLeft -= held;
        room -= chunk.length;
        await spool.push(chunk);
        next = await coming;
        continue;
      }
      const { ended, end } = ends.scan(chunk, recordsLeft, room);
      recordsLeft -= ended;
      if (recordsLeft > 0 && chunk.length <= room) {
        room -= chunk.length;
        await spool.push(chunk);
        next = await coming;
        continue;
      }
      await spool.push(chunk.subarray(0, end));
      if (recordsLeft > 0) return { rows: rows(), cut: 'EXPORT_MAX_BYTES' };
      // The rows are all in; any byte after them is the extra row.
      if (end < chunk.length || (await hasMore(coming, chunks))) return { rows: rows(), cut: opened.rowCap };
      return { rows: rows() };
    }
    return { rows: rows() };
  } catch (err) {
    return { rows: rows(), failure: exportFailure(err, signal) };
  } finally {
    spool.end();
    // Stops the statement when it has not ended (a cap, an error, the client left), which frees the engine.
    await chunks.return?.();
  }
}

/** The status line and the headers every export has; Result-Truncated when known before the first byte. */
function startAnswer(res: Response, members: string[], format: ExportFormat, truncated: boolean | undefined): void {
  res.status(200);
  res.setHeader('Content-Type', format.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${fileName(members, format)}"`);
  if (truncated !== undefined) res.setHeader(TRUNCATED_HEADER, String(truncated));
}

/** ?format= first, then Accept; neither (or Accept: *\/*) is csv. */
function negotiate(req: Request): ExportFormat {
  const asked = req.query.format;
  if (asked !== undefined) {
    const named = typeof asked === 'string' ? formatNamed(asked) : undefined;
    if (!named) throw notAcceptable(`format=${String(asked)}`);
    return named;
  }
  const types = FORMATS.flatMap((f) => f.accepts);
  const accepted = req.accepts(types);
  if (accepted === false) throw notAcceptable(`Accept: ${req.get('accept')}`);
  return FORMATS.find((f) => f.accepts.includes(accepted))!;
}

function notAcceptable(asked: string): ServiceError {
  const list = FORMATS.map((f) => `${f.name} (${f.accepts[0]})`).join(', ');
  return new ServiceError(
    'not_acceptable',
    `No export format matches ${asked}; the formats are ${list}, chosen by ?format=${FORMAT_NAMES.join('|')} or the Accept header.`,
  );
}

/** The cubes it reads and when, e.g. downloads-20261125-001502.csv. */
function fileName(members: string[], format: ExportFormat): string {
  const cubes = [...new Set(members.map((m) => m.split('.')[0]))].join('-').replace(/[^A-Za-z0-9_-]/g, '') || 'export';
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${cubes.toLowerCase()}-${stamp}.${format.extension}`;
}

/** Resolves once the socket has taken the chunk, the client has gone, or `signal` (the deadline) has stopped the export. */
function written(res: Response, chunk: Uint8Array, signal: AbortSignal): Promise<void> | void {
  // A response already closed emits no more events: the caller sees its aborted signal next.
  if (res.write(chunk) || res.destroyed || signal.aborted) return;
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    signal.addEventListener('abort', done);
  });
}

/** Whether `coming`, or a chunk after it, holds a byte. */
async function hasMore(coming: Promise<IteratorResult<ExportChunk>>, chunks: AsyncIterator<ExportChunk>): Promise<boolean> {
  for (let next = await coming; !next.done; next = await chunks.next()) if (next.value.bytes.length > 0) return true;
  return false;
}
