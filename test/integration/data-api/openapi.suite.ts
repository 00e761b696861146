import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import OpenAPIBackend from 'openapi-backend';
import { STATUS_BY_CODE } from '../../../src/http/errors';
import { openApiDocument } from '../../../src/http/openapi';
import { takeContractViolations, withContractChecks } from '../support/contract';
import { startService, type TestService } from '../support/service';
import { meta, send } from '../support/api';

const ROOT = path.join(__dirname, '..', '..', '..');
const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
const OPERATIONS = [
  ['/v1/data/meta/', 'get'],
  ['/v1/data/load/', 'get'],
  ['/v1/data/load/', 'post'],
] as const;

let service: TestService;
beforeAll(async () => {
  // One request without a key per window: the document must not count against it.
  service = await startService({ RATE_LIMIT_UNAUTHENTICATED: '1' }, { schemaPath: SLOW_SCHEMA });
});
afterAll(() => service.close());

const fetchDocument = () => send(service, 'get', '/v1/openapi.json', { key: null });

describe('GET /v1/openapi.json', () => {
  it('answers the OpenAPI 3.1 document without a key and without rate limits, as application/json', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetchDocument().expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.body.openapi).toBe('3.1.0');
      expect(OPERATIONS.map(([p, method]) => res.body.paths[p]?.[method]?.operationId)).toEqual(['getMeta', 'loadGet', 'load']);
    }
  });

  it('answers other methods 405', async () => {
    const res = await send(service, 'post', '/v1/openapi.json', { key: null }).expect(405);
    expect(res.body.code).toBe('method_not_allowed');
  });

  it('is a document openapi-backend accepts in strict mode', async () => {
    const { body } = await fetchDocument().expect(200);
    const api = await new OpenAPIBackend({ definition: body, strict: true, ignoreTrailingSlashes: false }).init();
    expect(
      api
        .getOperations()
        .map((o) => o.operationId)
        .sort(),
    ).toEqual(['export', 'exportGet', 'getMeta', 'load', 'loadGet']);
  });

  it("passes Redocly's recommended rules with the repository's redocly.yaml, without a warning", async () => {
    const { body } = await fetchDocument().expect(200);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'openapi-')), 'served.json');
    writeFileSync(file, JSON.stringify(body));
    const cli = path.join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: unknown[] };
    expect(report.problems).toEqual([]);
  }, 60_000);

  it('lists, on every operation, every status of STATUS_BY_CODE with exactly its codes', async () => {
    const { body } = await fetchDocument().expect(200);
    const expected: Record<string, string[]> = {};
    for (const [code, status] of Object.entries(STATUS_BY_CODE)) (expected[status] ??= []).push(code);
    for (const [p, method] of OPERATIONS) {
      const listed: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(body.paths[p][method].responses as Record<string, { $ref?: string }>)) {
        if (status === '200') continue;
        const name = response.$ref!.split('/').pop()!;
        const schema = body.components.responses[name].content['application/json'].schema;
        const narrowed = schema.allOf.find((s: { properties?: { code?: unknown } }) => s.properties?.code);
        listed[status] = narrowed.properties.code.enum;
      }
      expect({ operation: `${method} ${p}`, codes: listed }).toEqual({ operation: `${method} ${p}`, codes: expected });
    }
  });
});

describe('the error responses, generated from a code→status table', () => {
  it('gain a status the file does not describe yet, and lose one no code uses', () => {
    // The real table without its 503s and 404, then two 503 codes added: the file describes neither status.
    const others = Object.entries(STATUS_BY_CODE).filter(([code, status]) => status !== 503 && code !== 'not_found');
    const table = { ...Object.fromEntries(others), shutting_down: 503, not_ready: 503 };
    const doc = openApiDocument(table);
    for (const [p, method] of OPERATIONS) {
      const responses = doc.paths[p][method].responses;
      expect(responses['503']).toEqual({ $ref: '#/components/responses/Error503' });
      expect(responses['404']).toBeUndefined();
    }
    const error503 = doc.components.responses.Error503;
    expect(error503.description).toBe('Service Unavailable.');
    expect(error503.headers['x-request-id']).toEqual({ $ref: '#/components/headers/RequestId' });
    expect(error503.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['shutting_down', 'not_ready']);
    expect(doc.components.responses.Error404).toBeUndefined();
  });
});

describe('the contract check of test answers', () => {
  it('reports an answer with a field the document does not have, naming the field and the request', async () => {
    const drifting = express();
    drifting.get('/v1/data/meta', (_req, res) => {
      res.setHeader('x-request-id', 'r-1');
      res.setHeader('RateLimit', '"600-in-1min"; r=599; t=60');
      res.setHeader('RateLimit-Policy', '"600-in-1min"; q=600; w=60');
      res.json({ schemas: [], extra: true });
    });
    await meta({ app: await withContractChecks(drifting) }, { key: null }).expect(200);
    expect(takeContractViolations()).toEqual(['GET /v1/data/meta → 200 (getMeta): body / must NOT have additional properties "extra"']);
  });

  it('reports a status the operation does not document, a missing required header and a missing field', async () => {
    const drifting = express();
    drifting.get('/v1/data/meta', (_req, res) => {
      res.status(418).json({ error: 'I am a teapot.', code: 'teapot', requestId: 'r-2' });
    });
    drifting.post('/v1/data/load', (_req, res) => {
      res.status(200).json({ schemas: [] });
    });
    const checked = { app: await withContractChecks(drifting) };
    await send(checked, 'get', '/v1/data/meta/', { key: null }).expect(418);
    await send(checked, 'post', '/v1/data/load', { key: null }).send({ query: {} }).expect(200);
    const violations = takeContractViolations();
    expect(violations).toContain('GET /v1/data/meta/ → 418 (getMeta): status 418 is not documented for this operation');
    expect(violations).toContain('POST /v1/data/load → 200 (load): header x-request-id is required but missing');
    expect(violations).toContain("POST /v1/data/load → 200 (load): body / must have required property 'query'");
  });
});
