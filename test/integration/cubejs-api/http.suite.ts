import path from 'node:path';
import { createKey } from '../../../src/keys/store';
import { expectEnvelope } from '../limits/envelope';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';
import { load, meta, send, type Test } from '../support/api';

/**
 * Cube's REST API at /cubejs-api/v1 over raw HTTP: where the key may come
 * from, scopes, the GET and POST forms Cube's routes take, and errors in the
 * one envelope. What the answers hold is checked with Cube's own client in
 * client.suite.ts.
 */
const ACCOUNT = 'harbor-lane-media';
const BASE = '/cubejs-api/v1';
const QUERY = { measures: ['Downloads.count'], dimensions: ['Downloads.continent'] };
const COMPARE = {
  measures: ['Downloads.count'],
  timeDimensions: [
    {
      dimension: 'Downloads.ts',
      compareDateRange: [
        ['2026-01-01', '2026-01-07'],
        ['2026-02-01', '2026-02-07'],
      ],
    },
  ],
};

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startService({}, { accounts: [ACCOUNT] });
  key = service.accountKeys[ACCOUNT];
});
afterAll(() => service.close());

// Without a key: each test sends its own, in the header it is about.
const get = (route: string, query?: Record<string, unknown>, params: Record<string, string> = {}) =>
  send(service, 'get', `${BASE}${route}`, { key: null }).query(query === undefined ? params : { query: JSON.stringify(query), ...params });
const post = (route: string, body: unknown) => send(service, 'post', `${BASE}${route}`, { key: null }).send(body as object);

/** A key with only the given scope, once the key ring has read it. */
async function keyWithScope(scope: 'data:meta' | 'data:load'): Promise<string> {
  const created = await createKey(service.config.keys.file, { account: ACCOUNT, name: `${scope} only`, scopes: [scope] });
  const deadline = Date.now() + 5000;
  while ((await get('/meta').set('authorization', created.key)).status === 401 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return created.key;
}

describe('the key', () => {
  it.each([
    ['Authorization: <key>', (k: string) => ['authorization', k]],
    ['Authorization: Bearer <key>', (k: string) => ['authorization', `Bearer ${k}`]],
    ['Authorization: bearer <key>', (k: string) => ['authorization', `bearer ${k}`]],
    ['x-api-key: <key>', (k: string) => ['x-api-key', k]],
  ] as const)('is read from %s, as that key (its account reaches the SQL)', async (_label, header) => {
    const [name, value] = header(key);
    const res = await get('/sql', QUERY).set(name, value).expect(200);
    expect(res.body.sql.sql[1]).toEqual([ACCOUNT]);
  });

  it.each([
    ['no key', {}],
    ['a wrong raw key', { authorization: 'wrong-key-0123456789' }],
    ['a wrong Bearer key', { authorization: 'Bearer wrong-key-0123456789' }],
    ['an empty Bearer', { authorization: 'Bearer ' }],
    ['the key under another scheme', { authorization: `Basic ${API_KEY}` }],
    ['a wrong x-api-key beside a right Authorization', { 'x-api-key': 'wrong-key-0123456789', authorization: API_KEY }],
  ])('answers 401 in the envelope for %s', async (_label, headers) => {
    for (const res of [await get('/meta').set(headers), await get('/load', QUERY).set(headers), await post('/sql', { query: QUERY }).set(headers)]) {
      expectEnvelope(res, 'unauthorized');
    }
  });

  it('needs data:meta for /meta and data:load for /load, /sql and /dry-run', async () => {
    const metaOnly = await keyWithScope('data:meta');
    const loadOnly = await keyWithScope('data:load');
    await get('/meta').set('authorization', metaOnly).expect(200);
    expectEnvelope(await get('/meta').set('authorization', loadOnly), 'forbidden', /data:meta/);
    for (const route of ['/load', '/sql', '/dry-run']) {
      await get(route, QUERY).set('authorization', loadOnly).expect(200);
      expectEnvelope(await get(route, QUERY).set('authorization', metaOnly), 'forbidden', /data:load/);
      expectEnvelope(await post(route, { query: QUERY }).set('authorization', metaOnly), 'forbidden', /data:load/);
    }
  });
});

describe('GET and POST', () => {
  it.each(['/sql', '/dry-run'])('%s answers the same to GET ?query= and to a POST body', async (route) => {
    const byGet = await get(route, COMPARE).set('authorization', key).expect(200);
    const byPost = await post(route, { query: COMPARE }).set('authorization', key).expect(200);
    expect(byPost.body).toEqual(byGet.body);
  });

  it('/load answers the same to GET and POST, single and multi', async () => {
    const single = await get('/load', QUERY).set('authorization', key).expect(200);
    expect(single.body).toMatchObject({ query: { measures: QUERY.measures }, data: expect.any(Array) });
    expect(single.body.results).toBeUndefined();
    const singleByPost = await post('/load', { query: QUERY }).set('authorization', key).expect(200);
    expect(singleByPost.body.data).toEqual(single.body.data);

    const multi = await get('/load', COMPARE, { queryType: 'multi' }).set('authorization', key).expect(200);
    expect(multi.body).toMatchObject({ queryType: 'compareDateRangeQuery', pivotQuery: expect.any(Object) });
    expect(multi.body.results).toHaveLength(2);
    const multiByPost = await post('/load', { query: COMPARE, queryType: 'multi' }).set('authorization', key).expect(200);
    expect(multiByPost.body.results.map((r: { data: unknown }) => r.data)).toEqual(multi.body.results.map((r: { data: unknown }) => r.data));
  });

  it('/sql of an array of queries answers one SQL per query', async () => {
    const td = (dimension: string) => [{ dimension, granularity: 'day', dateRange: ['2026-01-01', '2026-01-07'] }];
    const res = await post('/sql', {
      query: [
        { measures: ['Downloads.count'], timeDimensions: td('Downloads.ts') },
        { measures: ['LinksBasicAnalytics.linkViewCount'], timeDimensions: td('LinksBasicAnalytics.timestamp') },
      ],
    })
      .set('authorization', key)
      .expect(200);
    expect(res.body).toHaveLength(2);
    for (const { sql } of res.body as { sql: { sql: [string, unknown[]] } }[]) expect(sql.sql[1]).toContain(ACCOUNT);
  });
});

describe("Cube's shapes", () => {
  it('/meta answers { cubes } without the descriptions the model files hold', async () => {
    const res = await get('/meta').set('authorization', key).expect(200);
    expect(Object.keys(res.body)).toEqual(['cubes']);
    const links = res.body.cubes.find((c: { name: string }) => c.name === 'LinksBasicAnalytics');
    // schema/LinksBasicAnalytics.yml describes this measure.
    expect(links.measures.find((m: { name: string }) => m.name === 'LinksBasicAnalytics.linkViewCount')).toMatchObject({ type: 'number', aggType: 'count' });
    expect(JSON.stringify(res.body)).not.toMatch(/"description"/);
  });

  it('/load annotations carry no descriptions', async () => {
    const res = await get('/load', { measures: ['LinksBasicAnalytics.linkViewCount'], dimensions: ['LinksBasicAnalytics.link'] }, { queryType: 'multi' })
      .set('authorization', key)
      .expect(200);
    expect(res.body.results[0].annotation.measures['LinksBasicAnalytics.linkViewCount']).toMatchObject({ title: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/"description"/);
  });

  it('answers carry the same headers as /v1: request id, no-store, helmet', async () => {
    const res = await get('/meta').set('authorization', key).expect(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
  });
});

describe('errors, in the envelope', () => {
  const as = (req: Test) => req.set('authorization', key);

  it.each(['/load', '/sql', '/dry-run'])('%s: a missing or unreadable query answers 400', async (route) => {
    expectEnvelope(await as(get(route)), 'invalid_request', /query/);
    expectEnvelope(await as(send(service, 'get', `${BASE}${route}?query=%7Bnot-json`, { key: null })), 'invalid_json');
    expectEnvelope(await as(post(route, '{"query": ').type('json')), 'invalid_json');
    expectEnvelope(await as(post(route, { query: 'measures' })), 'invalid_request');
    expectEnvelope(await as(post(route, { query: [] })), 'invalid_request');
    expectEnvelope(await as(post(route, { nothing: QUERY })), 'invalid_request');
  });

  it.each(['/load', '/sql', '/dry-run'])('%s: an unknown member, a date filter on a non-time member, too many members answer 400', async (route) => {
    expectEnvelope(await as(get(route, { measures: ['Downloads.nope'] })), 'invalid_query', /nope/);
    const dateFilterOnString = { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'beforeDate', values: ['2026-01-01'] }] };
    expectEnvelope(await as(get(route, dateFilterOnString)), 'invalid_query', /time dimension/);
    const tooMany = { measures: Array.from({ length: service.config.query.maxMembers + 1 }, () => 'Downloads.count') };
    expectEnvelope(await as(post(route, { query: tooMany })), 'query_too_large');
  });

  it('/load without queryType=multi refuses compareDateRange and arrays of queries', async () => {
    expectEnvelope(await as(get('/load', COMPARE)), 'invalid_query', /multi/);
    expectEnvelope(await as(post('/load', { query: [QUERY, QUERY] })), 'invalid_query', /multi/);
    expectEnvelope(await as(get('/load', QUERY, { queryType: 'other' })), 'invalid_request', /queryType/);
  });

  it('an array of queries without a granularity answers 400, not a crash', async () => {
    expectEnvelope(await as(post('/dry-run', { query: [QUERY, QUERY] })), 'invalid_query', /granularity/);
  });

  it('other methods answer 405 with Allow, unknown paths 404', async () => {
    const put = await as(send(service, 'put', `${BASE}/load`, { key: null }));
    expectEnvelope(put, 'method_not_allowed');
    expect(put.headers.allow).toBe('GET, POST');
    expect((await as(send(service, 'post', `${BASE}/meta`, { key: null }))).headers.allow).toBe('GET');
    expectEnvelope(await as(get('/subscribe', QUERY)), 'not_found');
  });
});

describe('limits shared with /v1, and CORS', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startService({ RATE_LIMIT_REQUESTS: '2', CORS_ORIGINS: 'https://app.example.com' });
  });
  afterAll(() => limited.close());

  it("counts a key's requests to both APIs against one limit", async () => {
    // Refused before Cube runs, yet counted: the limit sits in front of the routes.
    await send(limited, 'get', '/v1/data/load').expect(400);
    await send(limited, 'get', `${BASE}/load`, { key: null }).set('authorization', API_KEY).expect(400);
    expectEnvelope(await meta(limited, { api: 'cubejs', key: null }).set('authorization', API_KEY), 'rate_limited');
    expectEnvelope(await meta(limited), 'rate_limited');
  });

  it("lets a browser send Cube's client headers: authorization and x-request-id", async () => {
    const res = await send(limited, 'options', `${BASE}/load`, { key: null })
      .set('origin', 'https://app.example.com')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'authorization,x-request-id')
      .expect(204);
    const allowed = res.headers['access-control-allow-headers']
      ?.toLowerCase()
      .split(',')
      .map((h: string) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-request-id']));
  });
});

describe('a query that outlives one "Continue wait" round', () => {
  let slow: TestService;
  beforeAll(async () => {
    // Cube answers "Continue wait" after 1 s; the query takes about 4 s.
    slow = await startService({ QUERY_TIMEOUT_SECONDS: '30' }, { continueWaitSeconds: 1, schemaPath: path.join(__dirname, '..', 'fixtures', 'slow-schema') });
  });
  afterAll(() => slow.close());

  it('is waited for by the service: the client gets the result, never "Continue wait"', async () => {
    const query = { measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'gte', values: ['0'] }] };
    const res = await load(slow, query, { api: 'cubejs', get: true, key: null }).set('authorization', API_KEY).expect(200);
    expect(res.body.data).toEqual([{ 'Slow.count': '8' }]);
  });
});
