import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * The throughput ceiling of the cached run: a bare Express 5 app that
 * answers the same route with the same bytes the service answered, and does
 * nothing else (no auth, no limits, no Cube). `npm run bench` serves it in
 * the benchmark's own process; `npm run bench:process` runs this file as a
 * process of its own (CEILING_PORT, CEILING_PATH, CEILING_BODY).
 */
export async function startCeiling(path: string, body: string, port = 0): Promise<{ baseUrl: string; close(): void }> {
  const app = express();
  app.post(path, express.json({ type: () => true }), (_req, res) => {
    res.type('application/json').send(body);
  });
  const server = app.listen(port, '127.0.0.1');
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
