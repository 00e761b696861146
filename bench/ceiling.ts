import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * The throughput ceiling of the cached run: a bare Express 5 app in the same
 * process that answers the same route with the same bytes the service
 * answered, and does nothing else (no auth, no limits, no Cube).
 */
export async function startCeiling(path: string, body: string): Promise<{ baseUrl: string; close(): void }> {
  const app = express();
  app.post(path, express.json({ type: () => true }), (_req, res) => {
    res.type('application/json').send(body);
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
