/**
 * An export streams: over a real socket, a client that stops reading holds
 * the statement where it is (backpressure: the engine goes no further than
 * what the socket takes, so the service holds no more of the answer); a
 * client that goes away frees the engine within a second (the statement is
 * cancelled, not run to its end); and an open export counts against the
 * key's concurrency limit like a load. The Numbers cube (fixtures) makes
 * 1.1 million rows in the engine.
 */
import http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';

const EXPORT_SCHEMA = path.join(__dirname, '..', 'fixtures', 'export-schema');
let service: TestService;
let server: Server;
let port: number;
beforeAll(async () => {
  service = await startService({ RATE_LIMIT_CONCURRENT: '1' }, { schemaPath: EXPORT_SCHEMA });
  server = await new Promise<Server>((resolve) => {
    const s = service.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await service.close();
});

/** A million rows (EXPORT_MAX_ROWS), about 51 MB of ndjson. */
const MILLION = { dimensions: ['Numbers.number', 'Numbers.label'], order: { 'Numbers.number': 'asc' } };

/** Starts an export and stops reading it after the first chunk; resolves with the request and what arrived. */
function pausedExport(): Promise<{ req: http.ClientRequest; received: () => number }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=ndjson', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' } }, (res) => {
      expect(res.statusCode).toBe(200);
      res.once('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.pause();
        res.on('data', (more: Buffer) => (bytes += more.length));
        resolve({ req, received: () => bytes });
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end(JSON.stringify({ query: MILLION }));
  });
}

/** A statement of its own through the engine's queue; resolves with how long it waited. */
function probe(): { answered: Promise<number> } {
  const started = performance.now();
  const client = service.warehouse.client();
  return {
    answered: client
      .query({ query: 'SELECT 1', format: 'JSONEachRow' })
      .then((rows) => rows.json())
      .then(() => performance.now() - started),
  };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise.then((value) => ({ value })), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))]);

it('a client that stops reading holds the statement; one that leaves frees the engine within a second', async () => {
  const { req, received } = await pausedExport();
  const waiting = probe();
  // The engine waits for the reader: nothing else runs, and the answer is not all out.
  expect(await within(waiting.answered, 1500)).toBe('late');
  expect(received()).toBeLessThan(16 * 1024 * 1024);
  const left = performance.now();
  req.destroy();
  await waiting.answered;
  expect(performance.now() - left).toBeLessThan(1000);
});

it('an open export counts against the key\'s concurrency limit like a load', async () => {
  const { req } = await pausedExport();
  const load = await request(service.app).post('/v1/data/load/').set('x-api-key', API_KEY).send({ query: { measures: ['Numbers.count'] } });
  expect(load.status).toBe(429);
  req.destroy();
  // The slot is free again once the export has stopped.
  for (let tries = 0; ; tries++) {
    const again = await request(service.app).post('/v1/data/load/').set('x-api-key', API_KEY).send({ query: { measures: ['Numbers.count'] } });
    if (again.status === 200) break;
    expect(tries).toBeLessThan(20);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

it('read to its end: a million rows and the closing line, the row after them left out and said so', async () => {
  const res = await new Promise<{ lines: number; last: string }>((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=ndjson', headers: { 'x-api-key': API_KEY } }, (response) => {
      let lines = 0;
      let tail = '';
      let last = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const parts = (tail + chunk).split('\n');
        tail = parts.pop()!;
        lines += parts.length;
        if (parts.length > 0) last = parts.at(-1)!;
      });
      response.on('end', () => resolve({ lines, last }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ query: MILLION }));
  });
  expect(res.lines).toBe(1_000_001);
  expect(JSON.parse(res.last)).toEqual({ truncated: true, rows: 1_000_000, cutBy: 'EXPORT_MAX_ROWS' });
});
