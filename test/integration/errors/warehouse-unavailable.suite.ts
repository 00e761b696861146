import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { startService, type TestService } from '../support/service';
import { load, meta, probe } from '../support/api';

/**
 * A ClickHouse server that cannot be reached is the service's failure, not
 * the client's: 503 warehouse_unavailable, logged as an error with the
 * request id. Every server here is real: a closed port (bound, then
 * released), one that resets each connection, plain HTTP where TLS is
 * expected, and a host name that does not resolve.
 */

async function listening(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const closeServer = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));

async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listening(server);
  await closeServer(server);
  return port;
}

const servers: (Server | ReturnType<typeof createHttpServer>)[] = [];
afterAll(async () => {
  for (const server of servers) await closeServer(server);
});

async function resettingServer(): Promise<number> {
  const server = createServer((socket) => socket.resetAndDestroy());
  servers.push(server);
  return listening(server);
}

async function plainHttpServer(): Promise<number> {
  const server = createHttpServer((_req, res) => res.end('Ok.\n'));
  servers.push(server);
  return listening(server);
}

async function open(url: string) {
  const lines: Record<string, unknown>[] = [];
  const service = await startService({ CLICKHOUSE_URL: url, DEMO_DATA: 'false' }, { log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { service, lines };
}

describe('a ClickHouse server that refuses connections', () => {
  let service: TestService;
  let lines: Record<string, unknown>[];
  beforeAll(async () => {
    ({ service, lines } = await open(`http://127.0.0.1:${await closedPort()}`));
  });
  afterAll(() => service.close());

  it('answers 503 warehouse_unavailable with Retry-After, and logs the failure as an error with the request id', async () => {
    const res = await load(service, { measures: ['Downloads.count'] }).expect(503);
    expect(res.body).toEqual({ error: expect.stringMatching(/database/i), code: 'warehouse_unavailable', requestId: expect.any(String) });
    expect(res.body.error).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    const logged = lines.filter((line) => line.level === 'error' && line.requestId === res.body.requestId);
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0])).toMatch(/ECONNREFUSED/);
  });

  it('answers the same for a multi query', async () => {
    const query = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last 7 days', 'last 14 days'] }] };
    expect((await load(service, query, { multi: true }).expect(503)).body.code).toBe('warehouse_unavailable');
  });

  it('answers /meta 503 too, and is not ready: models serve only once the warehouse has checked them', async () => {
    const res = await meta(service);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('warehouse_unavailable');
    const ready = await probe(service, 'readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error).toMatch(/models are still compiling/);
  });
});

describe.each([
  ['resets every connection (socket hang up)', async () => `http://127.0.0.1:${await resettingServer()}`, /ECONNRESET/],
  ['speaks plain HTTP where TLS is expected', async () => `https://127.0.0.1:${await plainHttpServer()}`, /ERR_SSL_|EPROTO/],
  ['has a host name that does not resolve', async () => 'http://clickhouse.invalid:8123', /ENOTFOUND|EAI_AGAIN/],
])('a ClickHouse server that %s', (_label, url, code) => {
  it('answers 503 warehouse_unavailable and logs the network error code', async () => {
    const { service, lines } = await open(await url());
    try {
      const res = await load(service, { measures: ['Downloads.count'] }).expect(503);
      expect(res.body.code).toBe('warehouse_unavailable');
      const logged = lines.filter((line) => line.level === 'error' && line.requestId === res.body.requestId);
      expect(JSON.stringify(logged)).toMatch(code);
    } finally {
      await service.close();
    }
  });
});
