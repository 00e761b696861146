import path from 'node:path';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { loadBody, meta, send } from '../support/api';

const ORIGIN = 'https://app.example.com';
/** One tiny cube: compiles in a blink, and headers do not depend on the model. */
const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');

describe('request body limit (HTTP_BODY_LIMIT_KB=1)', () => {
  const LIMIT_BYTES = 1 * 1024;
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ HTTP_BODY_LIMIT_KB: '1' }, { schemaPath: SLOW_SCHEMA });
  });
  afterAll(() => service.close());

  /**
   * One valid query padded with JSON whitespace to exactly `bytes` bytes: the
   * same query whatever the size, so Cube runs it (about 4 s) once and then
   * answers from its cache.
   */
  const sized = (bytes: number) => {
    const query = JSON.stringify({ query: { measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'lt', values: ['1000'] }] } });
    const body = query.slice(0, -1) + ' '.repeat(bytes - query.length) + '}';
    expect(Buffer.byteLength(body)).toBe(bytes);
    return body;
  };
  const post = (body: string) => loadBody(service, body);

  it('answers 413 payload_too_large to a body one byte over 1 KB', async () => {
    expectEnvelope(await post(sized(LIMIT_BYTES + 1)), 'payload_too_large');
  });

  it('answers 413 to a body well over 1 KB', async () => {
    expectEnvelope(await post(sized(LIMIT_BYTES * 4)), 'payload_too_large');
  });

  it('answers a body of exactly 1 KB, and one just under', async () => {
    const exact = await post(sized(LIMIT_BYTES));
    expect(exact.status).toBe(200);
    expect(exact.body.data).toEqual([{ 'Slow.count': '8' }]);
    expect((await post(sized(LIMIT_BYTES - 1))).status).toBe(200);
  });
});

describe('security headers and CORS off by default', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({}, { schemaPath: SLOW_SCHEMA });
  });
  afterAll(() => service.close());

  it.each([
    ['200', () => meta(service), 200],
    ['401', () => meta(service, { key: null }), 401],
    ['404', () => send(service, 'get', '/nowhere'), 404],
    ['405', () => send(service, 'delete', '/v1/data/load'), 405],
  ] as const)('a %s answer carries no-store, helmet headers and no x-powered-by', async (_label, ask, status) => {
    const res = await ask();
    expect(res.status).toBe(status);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it('gives a cross-origin request no access-control-allow-origin', async () => {
    const res = await meta(service).set('origin', ORIGIN).expect(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('does not answer a preflight with CORS headers', async () => {
    const res = await send(service, 'options', '/v1/data/load', { key: null })
      .set('origin', ORIGIN)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'x-api-key,content-type');
    expect(res.status).not.toBe(204);
    for (const header of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers']) {
      expect(res.headers[header]).toBeUndefined();
    }
  });
});

describe(`CORS_ORIGINS=${ORIGIN}`, () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ CORS_ORIGINS: ORIGIN }, { schemaPath: SLOW_SCHEMA });
  });
  afterAll(() => service.close());

  it('allows that origin on a request, and still sends the security headers', async () => {
    const res = await meta(service).set('origin', ORIGIN).expect(200);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers.vary).toMatch(/origin/i);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers its preflight 204, allowing POST and the x-api-key and content-type headers', async () => {
    const res = await send(service, 'options', '/v1/data/load', { key: null })
      .set('origin', ORIGIN)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'x-api-key,content-type')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-methods']?.split(',').map((m: string) => m.trim())).toContain('POST');
    const allowed = res.headers['access-control-allow-headers']
      ?.toLowerCase()
      .split(',')
      .map((h: string) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'content-type']));
  });

  it('gives another origin no access-control-allow-origin, on a request or a preflight', async () => {
    const other = 'https://evil.example.net';
    const res = await meta(service).set('origin', other);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await send(service, 'options', '/v1/data/load', { key: null })
      .set('origin', other)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'x-api-key,content-type');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('does not treat a look-alike of the origin as the origin', async () => {
    for (const lookalike of [`${ORIGIN}.evil.net`, 'http://app.example.com', 'https://app.example.com:8443']) {
      const res = await meta(service).set('origin', lookalike);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});
