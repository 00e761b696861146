import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

export interface BareEndpoint {
  baseUrl: string;
  close(): void;
}

/**
 * The throughput ceiling of the cached run: a bare Express 5 app that
 * answers the same route with the same bytes the service answered, and does
 * nothing else (no auth, no limits, no Cube). `npm run bench` serves it in
 * the benchmark's own process; `npm run bench:process` runs this file as a
 * process of its own (CEILING_PORT, CEILING_PATH, CEILING_BODY).
 */
export function startCeiling(path: string, body: string, port = 0): Promise<BareEndpoint> {
  const app = express();
  app.post(path, express.json({ type: () => true }), (_req, res) => {
    res.type('application/json').send(body);
  });
  return listen(app, port);
}

/** The two bare servers the floor is measured on: Node's own, and Express 5 with its JSON body parser only. */
export const FLOOR_KINDS = ['node:http', 'bare Express 5'] as const;
export type FloorKind = (typeof FLOOR_KINDS)[number];

/**
 * The floor under the uncached overhead: an endpoint that reads a JSON body,
 * hands it to `answer` (which runs the request's SQL on the service's own
 * engine) and sends what that returns as JSON. No key check, no limits, no
 * middleware, no Cube: what an uncached load costs over its SQL when the
 * service adds nothing but HTTP and JSON on the same loopback.
 */
export function startFloor(kind: FloorKind, path: string, answer: (body: unknown) => Promise<unknown>): Promise<BareEndpoint> {
  if (kind === 'bare Express 5') {
    const app = express();
    app.post(path, express.json({ type: () => true }), (req, res, next) => {
      answer(req.body).then((result) => res.json(result), next);
    });
    return listen(app);
  }
  return listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      Promise.resolve()
        .then(() => answer(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
        .then(
          (result) => {
            const json = JSON.stringify(result);
            res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
            res.end(json);
          },
          (err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(err instanceof Error ? err.message : String(err));
          },
        );
    });
  });
}

/** Serves `handler` on the loopback, on `port` or a free one. */
export async function listen(handler: http.RequestListener, port = 0): Promise<BareEndpoint> {
  const server = http.createServer(handler).listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

if (require.main === module) {
  const { CEILING_PORT, CEILING_PATH, CEILING_BODY } = process.env;
  if (!CEILING_PORT || !CEILING_PATH || CEILING_BODY === undefined) throw new Error('CEILING_PORT, CEILING_PATH and CEILING_BODY are required');
  void startCeiling(CEILING_PATH, CEILING_BODY, Number(CEILING_PORT)).then(({ close }) => process.once('SIGTERM', close));
}
