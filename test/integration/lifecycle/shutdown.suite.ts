import { createHook } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from '../limits/envelope';
import { createHttpServer } from '../../../src/http/server';
import { EXIT_CLEAN, EXIT_REQUESTS_CUT_OFF, shutDown } from '../../../src/shutdown';
import { load, meta, probe } from '../support/api';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 10));
}

/** The service on a real listening socket, with its log lines kept. */
async function listening(env: Record<string, string>): Promise<{ service: TestService; server: Server; url: string; lines: Record<string, any>[] }> {
  const lines: Record<string, any>[] = [];
  const service = await startService(env, { schemaPath: SLOW_SCHEMA, log: (line) => lines.push(JSON.parse(line)) });
  await service.cube.models.ready();
  const server = createHttpServer(service.app, service.config.http, service.logger, service.metrics);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { service, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines };
}

/** What index.ts does on SIGTERM, with the test's service and server. */
const sigterm = (service: TestService, server: Server) =>
  shutDown(
    {
      server,
      http: service.config.http,
      readiness: service.readiness,
      gate: service.gate,
      cube: service.cube,
      logger: service.logger,
      release: async () => {},
    },
    'SIGTERM',
  );

const slowQuery = (n: number) => ({ measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'notEquals', values: [String(2000 + n)] }] });

describe('SIGTERM with a query running and 31 queued', () => {
  let ctx: Awaited<ReturnType<typeof listening>>;
  beforeAll(async () => {
    ctx = await listening({ QUERY_TIMEOUT_SECONDS: '30', SHUTDOWN_DRAIN_SECONDS: '1.5', RATE_LIMIT_CONCURRENT: '40' });
  });
  afterAll(() => ctx.service.close());

  it('drains, answers the running query, refuses the queued ones with 503 shutting_down, and exits 0', async () => {
    const { service, server, url, lines } = ctx;
    const slow = (n: number) => load(url, slowQuery(n)).then((res) => res);
    const running = slow(0);
    await until(() => service.warehouse.queueDepth() === 0 && service.gate.inFlight().length === 1);
    // As in the report that found it: 32 queries, one running and 31 queued.
    const queued = Array.from({ length: 31 }, (_, i) => slow(i + 1));
    await until(() => service.warehouse.queueDepth() === 31);

    const exit = sigterm(service, server);
    // Readiness turns at once; a request arriving during the drain is answered.
    expectEnvelope(await probe(url, 'readyz'), 'not_ready', /shutting down/);
    const duringDrain = await meta(url);
    expect(duringDrain.status).toBe(200);

    const refused = await Promise.all(queued);
    for (const res of refused) {
      expectEnvelope(res, 'shutting_down');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
    }
    const ran = await running;
    expect(ran.status).toBe(200);
    expect(ran.body.data).toEqual([{ 'Slow.count': '8' }]);
    expect(await exit).toBe(EXIT_CLEAN);

    // The meta request came in during the drain, before the server stopped accepting.
    const msgs = lines.map((l) => (l.msg === 'request' ? `${l.method} ${l.path} ${l.status}` : l.msg));
    expect(msgs.indexOf('GET /v1/data/meta 200')).toBeGreaterThan(msgs.indexOf('shutting down: draining'));
    expect(msgs.indexOf('GET /v1/data/meta 200')).toBeLessThan(msgs.indexOf('shutting down: no longer accepting; waiting for running requests'));
    // A refusal is what a drain is for: logged below error, once per request, naming it.
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    const refusals = lines.filter((l) => l.msg === 'request refused: shutting down');
    expect(refusals.map((l) => l.level)).toEqual(refused.map(() => 'info'));
    expect(refusals.map((l) => l.requestId).sort()).toEqual(refused.map((res) => res.body.requestId).sort());
    // And now nothing listens.
    await expect(probe(url, 'healthz')).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('a request still open at SHUTDOWN_TIMEOUT_SECONDS', () => {
  let ctx: Awaited<ReturnType<typeof listening>>;
  beforeAll(async () => {
    ctx = await listening({ QUERY_TIMEOUT_SECONDS: '1', SHUTDOWN_TIMEOUT_SECONDS: '1', SHUTDOWN_DRAIN_SECONDS: '0', HTTP_REQUEST_TIMEOUT_SECONDS: '60' });
  });
  afterAll(() => ctx.service.close());

  it('is logged with its request id, and the exit code says requests were cut off', async () => {
    const { service, server, lines } = ctx;
    // A client that sends its body slowly keeps its request open.
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`POST /v1/data/load HTTP/1.1\r\nHost: x\r\nx-api-key: ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query":`);
    await until(() => service.gate.inFlight().length === 1);
    const [open] = service.gate.inFlight();

    const code = await sigterm(service, server);
    expect(code).toBe(EXIT_REQUESTS_CUT_OFF);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', msg: 'request cut off at shutdown timeout', requestId: open.requestId }));
    socket.destroy();
  });
});

describe('close', () => {
  let keyDir: string;
  let keyFileBeforeClose: boolean;
  // The timers Cube's in-memory queue starts to wait for a query's result (src/cube/engine/queue-timers.ts), and
  // those of them not yet fired or cleared.
  let queueTimers = 0;
  const pending = new Map<number, NodeJS.Timeout>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout' || !new Error().stack?.includes('.getResultBlocking ')) return;
      queueTimers += 1;
      pending.set(id, resource as NodeJS.Timeout);
    },
    destroy(id) {
      pending.delete(id);
    },
  });

  beforeAll(async () => {
    hook.enable();
    try {
      const service = await startService({ RESULT_CACHE_MB: '0' }, { accounts: ['bright-signal'] });
      keyDir = path.dirname(service.config.keys.file);
      keyFileBeforeClose = existsSync(path.join(keyDir, 'api-keys.json'));
      for (const value of ['a', 'b', 'c']) {
        await load(service, {
          measures: ['Downloads.count'],
          filters: [{ member: 'Downloads.city', operator: 'notEquals', values: [`close-${value}`] }],
        }).expect(200);
      }
      await service.close();
    } finally {
      hook.disable();
    }
  });

  it('removes the key file a local service made for itself (one directory per test service was left in the temp folder)', () => {
    expect(keyFileBeforeClose).toBe(true);
    expect(existsSync(keyDir)).toBe(false);
  });

  it('leaves no timer of Cube’s query queue behind to keep the process alive', () => {
    expect(queueTimers).toBeGreaterThanOrEqual(3);
    // Cube's continue-wait timeout is 5 s here: a timer left running would hold the process now.
    expect([...pending.values()].filter((timer) => timer.hasRef()).length).toBe(0);
  });
});
