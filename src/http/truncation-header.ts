import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { LoadAnswer } from '../cube/answer';
import type { JsonPieces } from '../json-slices';

/** The header that says whether the row limit left rows out of an answer (any query of a multi answer). */
export const TRUNCATED_HEADER = 'Result-Truncated';

/**
 * A load answer as JSON, with Result-Truncated: the body keeps its documented
 * shape. The text is res.json's, made a slice of rows at a time
 * (src/json-slices.ts) so a large answer does not hold the event loop; a small
 * one goes through res.send as res.json sends it.
 */
export async function sendLoadAnswer(res: Response, answer: LoadAnswer): Promise<void> {
  const pieces = await answer.json();
  res.setHeader(TRUNCATED_HEADER, String(answer.truncated));
  if (!res.get('Content-Type')) res.type('application/json');
  if (pieces.length === 1) {
    const etagFn: unknown = res.req.app.get('etag fn');
    if (typeof etagFn === 'function' && !res.get('ETag')) {
      const tag = etagOnce(pieces, etagFn as EtagFn);
      if (tag !== undefined) res.set('ETag', tag);
    }
    res.send(pieces[0]);
    return;
  }
  await sendPieces(res, pieces);
}

type EtagFn = (body: string, encoding: string) => string | undefined;

const etags = new WeakMap<JsonPieces, { etagFn: EtagFn; tag: string | undefined }>();

/**
 * The ETag res.send would make for a one-piece answer, made once per answer
 * (its pieces are made once too, LoadAnswer): a cached answer is sent
 * again as it is, and hashing its text again for every request was 1.5 % of
 * the service's CPU under a repeated cached query. With the ETag set,
 * res.send neither hashes the text nor encodes a short one to learn its length.
 */
function etagOnce(pieces: JsonPieces, etagFn: EtagFn): string | undefined {
  let known = etags.get(pieces);
  if (known === undefined || known.etagFn !== etagFn) {
    known = { etagFn, tag: etagFn(pieces[0], 'utf8') };
    etags.set(pieces, known);
  }
  return known.tag;
}

/**
 * What res.send does with a string body (Content-Type with its charset,
 * Content-Length, Express's default weak ETag, a 304 to a fresh conditional
 * request, no body to HEAD), with the body encoded and written a piece at a
 * time, a turn of the event loop apart.
 */
async function sendPieces(res: Response, pieces: JsonPieces): Promise<void> {
  res.set('Content-Type', `${res.get('Content-Type')?.split(';')[0]}; charset=utf-8`);
  const chunks: Buffer[] = [];
  const hash = createHash('sha1');
  let length = 0;
  for (const piece of pieces) {
    const chunk = Buffer.from(piece, 'utf8');
    hash.update(chunk);
    length += chunk.length;
    chunks.push(chunk);
    await nextTurn();
  }
  res.set('Content-Length', String(length));
  // The etag package's weak tag, as Express's default `etag` setting makes it for res.send.
  if (res.req.app.get('etag fn') && !res.get('ETag')) res.set('ETag', `W/"${length.toString(16)}-${hash.digest('base64').substring(0, 27)}"`);
  if (res.req.fresh) {
    res.status(304).send();
    return;
  }
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  for (const chunk of chunks) {
    res.write(chunk);
    await nextTurn();
  }
  res.end();
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
