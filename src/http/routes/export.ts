import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../../config';
import { CubeFailure } from '../../cube/errors';
import { exportFailure, type CutBy, type Exporter } from '../../export/exporter';
import { FORMAT_NAMES, FORMATS, formatNamed, type ExportFormat } from '../../export/formats';
import { RecordEnds } from '../../export/records';
import { requestContextOf } from '../auth';
import { ApiError } from '../errors';
import { isQuery, readQueryRequest } from '../../query/request';
import { checkQuerySize } from '../../query/size';
import { TRUNCATED_HEADER } from '../truncation-header';

/**
 * GET|POST /v1/data/export — the rows of one query as a file the engine
 * writes (csv, ndjson, parquet), streamed to the client as the engine
 * produces it: the service holds one chunk at a time, and takes the next
 * only once the client has taken the last (backpressure). A client that
 * goes away stops the statement. Same body, key, scope, account and size
 * limits as /v1/data/load/; its own row and byte caps, whose cut is always
 * said: in Result-Truncated before the first byte (csv, parquet), in the
 * closing line (ndjson), in an HTTP trailer (csv cut by EXPORT_MAX_BYTES).
 */
export function exportRoute(exporter: Exporter, limits: Config['query'], caps: Config['exports']): RequestHandler {
  return async (req, res) => {
    const format = negotiate(req);
    const { query, queryType } = readQueryRequest(req);
    if (queryType === 'multi' || !isQuery(query)) {
      throw new ApiError('invalid_request', 'An export answers one query: the "query" field must be a JSON object (no queryType "multi").');
    }
    // An export's limit is held to EXPORT_MAX_ROWS (the exporter), not to a load's QUERY_MAX_LIMIT.
    checkQuerySize([query], { ...limits, maxLimit: Number.POSITIVE_INFINITY });

    const left = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) left.abort(new CubeFailure('internal', 'The client went away.'));
    });
    const timeout = deadline(limits.timeoutMs);
    const signal = AbortSignal.any([left.signal, timeout.signal]);
    let chunks: AsyncIterator<Uint8Array> | undefined;
    try {
      const opened = await exporter.open(query, format, requestContextOf(res), signal);
      chunks = opened.chunks[Symbol.asyncIterator]();
      // The first chunk before the status line: a statement that fails at once is an error envelope.
      let next: IteratorResult<Uint8Array>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw exportFailure(err, signal);
      }
      res.status(200);
      res.setHeader('Content-Type', format.contentType);
      res.setHeader('Content-Disposition', `attachment; filename="${fileName(opened.members, format)}"`);
      if (opened.truncated !== undefined) res.setHeader(TRUNCATED_HEADER, String(opened.truncated));
      if (format.records === 'csv') res.setHeader('Trailer', TRUNCATED_HEADER);

      // CSV's header row is a record too.
      let rowsLeft = format.records === 'lines' ? opened.rows : format.records === 'csv' ? opened.rows + 1 : Infinity;
      let room = caps.maxBytes;
      const ends = format.records === 'none' ? undefined : new RecordEnds(format.records);
      let cut: CutBy | undefined;
      try {
        for (; !next.done; next = await chunks.next()) {
          const chunk = next.value;
          if (!ends) {
            if (chunk.length > room) {
              // A Parquet file cut short is no file at all: the transfer is broken off instead.
              res.destroy();
              return;
            }
            room -= chunk.length;
            await written(res, chunk);
            continue;
          }
          const { ended, end } = ends.scan(chunk, rowsLeft, room);
          rowsLeft -= ended;
          if (rowsLeft > 0 && chunk.length <= room) {
            room -= chunk.length;
            await written(res, chunk);
            continue;
          }
          await written(res, chunk.subarray(0, end));
          if (rowsLeft > 0) cut = 'EXPORT_MAX_BYTES';
          // The rows are all out; any byte after them is the extra row.
          else if (end < chunk.length || (await hasMore(chunks))) cut = opened.rowCap;
          break;
        }
      } catch (err) {
        if (left.signal.aborted) return;
        const failure = exportFailure(err, signal);
        if (format.name !== 'ndjson') {
          res.destroy();
          return;
        }
        // Nothing may pass for a whole answer: the closing line says why it stops here.
        res.end(`${JSON.stringify({ truncated: true, rows: opened.rows - rowsLeft, error: failure instanceof Error ? failure.message : 'The export failed.' })}\n`);
        return;
      }
      if (left.signal.aborted) return;
      const rowsWritten = format.records === 'csv' ? opened.rows - rowsLeft + 1 : opened.rows - rowsLeft;
      if (format.name === 'ndjson') {
        res.end(`${JSON.stringify({ truncated: cut !== undefined, rows: rowsWritten, ...(cut ? { cutBy: cut } : {}) })}\n`);
        return;
      }
      if (format.records === 'csv') res.addTrailers({ [TRUNCATED_HEADER]: String(cut !== undefined || opened.truncated === true) });
      res.end();
    } finally {
      timeout.clear();
      // Stops the statement when it has not ended (a cap, an error, the client left), which frees the engine.
      await chunks?.return?.();
    }
  };
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

function notAcceptable(asked: string): ApiError {
  const list = FORMATS.map((f) => `${f.name} (${f.accepts[0]})`).join(', ');
  return new ApiError('not_acceptable', `No export format matches ${asked}; the formats are ${list}, chosen by ?format=${FORMAT_NAMES.join('|')} or the Accept header.`);
}

/** The cubes it reads and when, e.g. downloads-20261125-001502.csv. */
function fileName(members: string[], format: ExportFormat): string {
  const cubes = [...new Set(members.map((m) => m.split('.')[0]))].join('-').replace(/[^A-Za-z0-9_-]/g, '') || 'export';
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${cubes.toLowerCase()}-${stamp}.${format.extension}`;
}

function written(res: Response, chunk: Uint8Array): Promise<void> | void {
  // A response already closed emits no more events: the caller sees its aborted signal next.
  if (res.write(chunk) || res.destroyed) return;
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function hasMore(chunks: AsyncIterator<Uint8Array>): Promise<boolean> {
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) if (next.value.length > 0) return true;
  return false;
}

/** QUERY_TIMEOUT_SECONDS bounds a whole export, its wait in the statement queue included. */
function deadline(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CubeFailure('query_timeout', `The export did not finish within ${ms / 1000} s.`)), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
