import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from '../limits/envelope';
import { load, meta, probe } from '../support/api';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');

describe('/healthz and /readyz', () => {
  let service: TestService;
  beforeAll(async () => {
    // Two requests without a key per window: the probes must never count.
    service = await startService({ RATE_LIMIT_UNAUTHENTICATED: '2', RATE_LIMIT_REQUESTS: '2' }, { schemaPath: SLOW_SCHEMA });
    await service.cube.models.ready();
  });
  afterAll(() => service.close());

  it('GET /healthz answers 200 without a key, however often', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await probe(service, 'healthz').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers.ratelimit).toBeUndefined();
    }
  });

  it('GET /readyz answers 200 without a key once the models are compiled and the warehouse answers, however often', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await probe(service, 'readyz').expect(200);
      expect(res.body).toEqual({ status: 'ready' });
    }
  });

  it('a key-less API request is still limited: the probes live outside /v1', async () => {
    for (let i = 0; i < 2; i++) await meta(service, { key: null }).expect(401);
    expectEnvelope(await meta(service, { key: null }), 'rate_limited');
    await probe(service, 'readyz').expect(200);
  });

  it('answers 503 not_ready within its 1 s deadline while a long statement holds the engine, and 200 again after it', async () => {
    const slow = load(service, { measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'lt', values: ['100'] }] }).then((res) => res);
    // The 4 s statement holds the engine (other statements take milliseconds).
    while (!(await isRunning(service))) await new Promise((r) => setTimeout(r, 20));
    const busy = await probe(service, 'readyz');
    expectEnvelope(busy, 'not_ready', /warehouse did not answer a probe within 1 s/);
    expect(await slow.then((res) => res.status)).toBe(200);
    await probe(service, 'readyz').expect(200);
  });

  it('answers 503 not_ready saying so once shutdown has begun', async () => {
    service.readiness.markShuttingDown();
    expectEnvelope(await probe(service, 'readyz'), 'not_ready', /shutting down/);
    await probe(service, 'healthz').expect(200);
  });
});

describe('/readyz with models that do not compile', () => {
  let service: TestService;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'broken-models-'));
    writeFileSync(
      path.join(dir, 'Broken.yml'),
      'cubes:\n  - name: Broken\n    sql: SELECT 1\n    measures:\n      - name: count\n        type: no_such_type\n',
    );
    service = await startService({}, { schemaPath: dir, waitForModels: false });
    await service.cube.models.ready().catch(() => undefined);
  });
  afterAll(() => service.close());

  it("answers 503 not_ready naming the models, not the compiler's words", async () => {
    const res = await probe(service, 'readyz');
    expectEnvelope(res, 'not_ready', /models failed to compile/);
    expect(res.body.error).not.toMatch(/no_such_type|Broken\.yml/);
    await probe(service, 'healthz').expect(200);
  });
});

/** A long statement is running when a probe, which jumps the queue, waits 0.5 s in vain. */
async function isRunning(service: TestService): Promise<boolean> {
  return service.warehouse.ping(500).then(
    () => false,
    () => true,
  );
}
