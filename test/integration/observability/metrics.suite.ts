import { renameSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseConfig } from '../../../src/config';
import { serveMetrics } from '../../../src/metrics/server';
import { createLogger } from '../../../src/log';
import { expectEnvelope } from '../limits/envelope';
import { freePort, httpGet, parseScrape, type Scrape } from '../support/prometheus';
import { startService, type TestService } from '../support/service';
import { load, loadBody, meta, send } from '../support/api';

const ACCOUNT = 'northwind-audio';
const RATE_LIMIT = 20;
const silent = createLogger('error', () => {});

/**
 * Known traffic against a real service (real Cube, real chDB), then the
 * scrape of its /metrics endpoint on a socket of its own, parsed with a
 * Prometheus text parser: every counter moves by exactly what was sent.
 */
describe('GET /metrics after known traffic', () => {
  let service: TestService;
  let metricsServer: Server;
  let metricsUrl: string;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    service = await startService(
      {
        RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
        RATE_LIMIT_UNAUTHENTICATED: '1',
        API_KEYS_RELOAD_MS: '100',
        CORS_ORIGINS: '*',
        METRICS_PORT: String(await freePort()),
      },
      { accounts: [ACCOUNT], log: (line) => logLines.push(JSON.parse(line)) },
    );
    metricsServer = (await serveMetrics(service.config.metrics, service.metrics.registry, silent))!;
    const { address, port } = metricsServer.address() as AddressInfo;
    metricsUrl = `http://${address}:${port}/metrics`;
  });
  afterAll(async () => {
    await new Promise((resolve) => metricsServer?.close(resolve));
    await service?.close();
  });

  const scrape = async (): Promise<Scrape> => {
    const res = await httpGet(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseScrape(res.body);
  };
  // A filter that excludes nothing but makes the SQL this test's own, so no other query warms Cube's cache for it.
  const QUERY = {
    measures: ['Downloads.count'],
    filters: [{ member: 'Downloads.country', operator: 'notEquals', values: ['metrics-test-no-such-country'] }],
  };
  const DURATION = 'analytics_http_request_duration_seconds';
  const QUERIES = 'analytics_query_duration_seconds';
  const LOAD = { route: '/v1/data/load', method: 'POST' };

  it('counts requests by route pattern and status, queries by cube and outcome, cache hits and misses, refusals by reason', async () => {
    const before = await scrape();
    const key = service.accountKeys[ACCOUNT];

    const first = await load(service, QUERY, { key: key });
    const second = await load(service, QUERY, { key: key });
    const third = await load(service, QUERY, { key: key });
    for (const res of [first, second, third]) expect(res.status).toBe(200);
    // Cube's result cache is empty for this SQL at first, then answers it within its 10 s refresh window.
    expect(first.headers['server-timing']).toMatch(/cache;desc="miss"$/);
    expect(second.headers['server-timing']).toMatch(/cache;desc="hit"$/);

    // An unknown member: a client error under no cube of the model.
    expectEnvelope(await load(service, { measures: ['NoSuchCube.count'] }, { key: key }), 'invalid_query');
    // The route pattern, not the raw path: a trailing slash counts under the same route.
    expect((await send(service, 'get', '/v1/data/meta/', { key })).status).toBe(200);
    // A wrong key (401), then one more request without a key from the same address (429, RATE_LIMIT_UNAUTHENTICATED=1).
    expectEnvelope(await load(service, QUERY, { key: 'not-a-key' }), 'unauthorized');
    expectEnvelope(await meta(service, { key: null }), 'rate_limited');
    // The key has spent 5 of its RATE_LIMIT requests; the rest on meta, then one more is refused.
    for (let i = 0; i < RATE_LIMIT - 5; i++) expect((await meta(service, { key })).status).toBe(200);
    expectEnvelope(await load(service, QUERY, { key: key }), 'rate_limited');
    // No route at all.
    expectEnvelope(await send(service, 'get', '/v1/nothing/here/42'), 'not_found');

    const after = await scrape();
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect({
      load200: delta(DURATION, { ...LOAD, status: '200' }),
      load400: delta(DURATION, { ...LOAD, status: '400' }),
      load401: delta(DURATION, { ...LOAD, status: '401' }),
      load429: delta(DURATION, { ...LOAD, status: '429' }),
      meta200: delta(DURATION, { route: '/v1/data/meta', method: 'GET', status: '200' }),
      meta429: delta(DURATION, { route: '/v1/data/meta', method: 'GET', status: '429' }),
      unmatched404: delta(DURATION, { route: 'unmatched', method: 'GET', status: '404' }),
    }).toEqual({ load200: 3, load400: 1, load401: 1, load429: 1, meta200: 1 + RATE_LIMIT - 5, meta429: 1, unmatched404: 1 });
    // No raw path became a label value.
    const routes = new Set(after.families.get(`${DURATION}_count`)!.metrics.map((m) => m.labels?.route));
    expect([...routes].sort()).toEqual(['/v1/data/load', '/v1/data/meta', 'unmatched']);

    expect({
      downloadsOk: delta(QUERIES, { cube: 'Downloads', outcome: 'ok' }),
      unknownClientError: delta(QUERIES, { cube: 'unknown', outcome: 'client_error' }),
      cacheMisses: delta('analytics_result_cache_misses_total'),
      cacheHits: delta('analytics_result_cache_hits_total'),
      authInvalid: delta('analytics_auth_failures_total', { reason: 'invalid' }),
      authMissing: delta('analytics_auth_failures_total', { reason: 'missing' }),
      refusedUnauthenticated: delta('analytics_rate_limit_refusals_total', { reason: 'unauthenticated' }),
      refusedRate: delta('analytics_rate_limit_refusals_total', { reason: 'rate' }),
      refusedConcurrency: delta('analytics_rate_limit_refusals_total', { reason: 'concurrency' }),
    }).toEqual({
      downloadsOk: 3,
      unknownClientError: 1,
      cacheMisses: 1,
      cacheHits: 2,
      authInvalid: 1,
      authMissing: 1,
      refusedUnauthenticated: 1,
      refusedRate: 1,
      refusedConcurrency: 0,
    });
    expect([...after.histograms].filter((name) => name.startsWith('analytics_')).sort()).toEqual([DURATION, QUERIES, 'analytics_warehouse_queue_wait_seconds']);
    // The one miss ran its statement through chDB's queue.
    expect(delta('analytics_warehouse_queue_wait_seconds')).toBeGreaterThanOrEqual(1);
    expect(after.families.get('analytics_warehouse_queue_depth')?.metrics[0].value).toBe('0');
    // prom-client's default process metrics, event-loop lag included.
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(after.families.has(name)).toBe(true);
    }
  });

  it('counts a key file that stops reading cleanly', async () => {
    const before = (await scrape()).value('analytics_key_file_reload_failures_total');
    // Written aside and renamed in, so the watcher sees one change: written in place, a poll between the
    // truncation and the write sees an empty file first, a second failed reload.
    const aside = `${service.config.keys.file}.new`;
    writeFileSync(aside, '{ not json');
    renameSync(aside, service.config.keys.file);
    let after = before;
    while (after === before) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = (await scrape()).value('analytics_key_file_reload_failures_total');
    }
    expect(after - before).toBe(1);
  });

  it('is not served on the API port', async () => {
    expectEnvelope(await send(service, 'get', '/metrics', { key: null }), 'not_found');
    expectEnvelope(await send(service, 'get', '/metrics'), 'not_found');
  });

  it('answers only GET /metrics on its own port', async () => {
    expect((await httpGet(metricsUrl.replace('/metrics', '/v1/data/meta'))).status).toBe(404);
  });

  it('listens on loopback unless METRICS_HOST says otherwise', () => {
    expect(service.config.metrics.host).toBe('127.0.0.1');
    expect((metricsServer.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('serves nothing with METRICS_PORT=0', async () => {
    const config = parseConfig({ METRICS_PORT: '0' });
    expect(await serveMetrics(config.metrics, service.metrics.registry, silent)).toBeUndefined();
  });

  describe('Server-Timing and request ids', () => {
    const timingOf = (header: string | undefined) => {
      const entries = Object.fromEntries(
        (header ?? '').split(', ').map((entry) => {
          const [name, param] = entry.split(';');
          return [name, param.startsWith('dur=') ? Number(param.slice(4)) : param.slice(6, -1)];
        }),
      );
      return entries as { warehouse: number; cube: number; total: number; cache?: string };
    };

    it('says on a load where the time went: warehouse within Cube within the total', async () => {
      const res = await load(service, {
        measures: ['Downloads.count'],
        filters: [{ member: 'Downloads.country', operator: 'equals', values: ['server-timing-test'] }],
      });
      expect(res.status).toBe(200);
      expect(res.headers['server-timing']).toMatch(/^warehouse;dur=[\d.]+, cube;dur=[\d.]+, total;dur=[\d.]+, cache;desc="miss"$/);
      const timing = timingOf(res.headers['server-timing']);
      // A miss ran at least one statement.
      expect(timing.warehouse).toBeGreaterThan(0);
      expect(timing.warehouse).toBeLessThanOrEqual(timing.cube);
      expect(timing.cube).toBeLessThanOrEqual(timing.total);
    });

    it('is on meta and on errors of both routes, and CORS lets browsers read it', async () => {
      const described = await meta(service).set('Origin', 'https://app.example');
      expect(described.headers['server-timing']).toMatch(/^warehouse;dur=0, cube;dur=[\d.]+, total;dur=[\d.]+$/);
      expect(described.headers['access-control-expose-headers']).toMatch(/\bServer-Timing\b/);
      const invalid = await load(service, { measures: ['Nope.count'] });
      expectEnvelope(invalid, 'invalid_query');
      expect(invalid.headers['server-timing']).toMatch(/^warehouse;dur=0, cube;dur=[\d.]+, total;dur=[\d.]+$/);
      const notJson = await loadBody(service, '{');
      expectEnvelope(notJson, 'invalid_json');
      expect(notJson.headers['server-timing']).toMatch(/^warehouse;dur=0, cube;dur=0, total;dur=[\d.]+$/);
      // Not on other routes.
      expect((await send(service, 'get', '/v1/nothing')).headers['server-timing']).toBeUndefined();
    });

    it('takes a sane incoming x-request-id as the request id, in the answer and the log', async () => {
      const id = '5d7b9a30-2f4e-4c1a-9b1e-0c3f6a7d8e21-span-1';
      const res = await load(service, { measures: ['Nope.count'] }).set('x-request-id', id);
      expectEnvelope(res, 'invalid_query');
      expect(res.headers['x-request-id']).toBe(id);
      expect(res.body.requestId).toBe(id);
      expect(logLines).toContainEqual(expect.objectContaining({ msg: 'request', requestId: id, status: 400 }));
    });

    it.each([
      ['with a space', 'abc def'],
      ['with a quote and a newline escape', 'abc"}\\n{"level":"error'],
      ['over 128 characters', 'a'.repeat(129)],
    ])('generates its own id for one %s', async (_case, id) => {
      const res = await meta(service).set('x-request-id', id);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });
  });
});
