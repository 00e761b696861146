import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Config } from '../config';
import type { Logger } from '../log';

/**
 * `GET /metrics` in Prometheus text format, on a listener of its own
 * (METRICS_HOST:METRICS_PORT, loopback by default) rather than on the API
 * port, so the endpoint is never public by accident and needs no API key.
 * Resolves to undefined, serving nothing, when METRICS_PORT is 0.
 */
export async function serveMetrics(config: Config['metrics'], registry: Registry, logger: Logger): Promise<Server | undefined> {
  if (config.port === 0) return undefined;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/metrics/')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: the metrics are at GET /metrics.\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => {
        logger.error('metrics not collected', { error: err instanceof Error ? err.message : String(err) });
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  logger.info('metrics listening', { url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics` });
  return server;
}
