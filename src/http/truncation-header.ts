import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { answerJson, type JsonPieces } from '../cube/answer-json';
import { wasTruncated } from '../cube/truncation';

/** The header that says whether the row limit left rows out of an answer (any query of a multi answer). */
export const TRUNCATED_HEADER = 'Result-Truncated';

/**
 * A load answer as JSON, with Result-Truncated: the body keeps its documented
 * shape. The text is res.json's, made a slice of rows at a time
 * (answer-json.ts) so a large answer does not hold the event loop; a small
 * one goes through res.send as res.json sends it.
 */
export async function sendLoadAnswer(res: Response, answer: object): Promise<void> {
  const truncated = wasTruncated(answer);
  const pieces = await answerJson(answer);
  if (truncated !== undefined) res.setHeader(TRUNCATED_HEADER, String(truncated));
  if (!res.get('Content-Type')) res.type('application/json');
  if (pieces.length === 1) {
    res.send(pieces[0]);
    return;
  }
  await sendPieces(res, pieces);
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
