import { loadBody, send } from '../support/api';
import { startService, type TestService } from '../support/service';

let service: TestService;
beforeAll(async () => {
  service = await startService({ QUERY_MAX_LIMIT: '1000', QUERY_DEFAULT_LIMIT: '1000', HTTP_BODY_LIMIT_KB: '4' });
});
afterAll(() => service.close());

const post = (body: string | object) => loadBody(service, body);

/** Every error answers the one envelope, never a stack trace or a file path. */
function expectEnvelope(body: Record<string, unknown>, code: string, message?: RegExp) {
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'requestId']);
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  if (message) expect(body.error).toMatch(message);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\(|node_modules|\.js:\d+|\.ts:\d+/);
}

describe('malformed requests', () => {
  it('400 invalid_json for a body that is not JSON', async () => {
    const res = await post('{"query": {"measures": [').expect(400);
    expectEnvelope(res.body, 'invalid_json');
  });

  it.each([
    ['an empty object', {}],
    ['an array', [{ query: {} }]],
    ['a query that is a string', { query: 'Downloads.count' }],
    ['a query that is null', { query: null }],
    ['a query that is an array', { query: [] }],
  ])('400 invalid_request for %s', async (_label, body) => {
    const res = await post(body).expect(400);
    expectEnvelope(res.body, 'invalid_request', /query/);
  });

  it('413 payload_too_large above the body limit', async () => {
    const res = await post({
      query: { measures: ['Downloads.count'], filters: [{ member: 'Downloads.city', operator: 'equals', values: ['x'.repeat(8000)] }] },
    }).expect(413);
    expectEnvelope(res.body, 'payload_too_large');
  });
});

describe('queries Cube rejects', () => {
  it.each([
    ['an unknown member', { measures: ['Downloads.nope'] }, /nope/],
    ['an unknown cube', { measures: ['Nope.count'] }, /Nope/],
    ['a dimension given as a measure', { measures: ['Downloads.country'] }, /Downloads\.country/],
    [
      'an unknown filter operator',
      { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'like', values: ['x'] }] },
      /filters\[0\]/,
    ],
    ['measures that are not an array', { measures: 'Downloads.count' }, /measures/],
    [
      'filter values that are not an array',
      { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'equals', values: 'US' }] },
      /filters\[0\]/,
    ],
    ['a negative limit', { measures: ['Downloads.count'], limit: -1 }, /limit/],
    ['a limit that is a string', { measures: ['Downloads.count'], limit: 'ten' }, /limit/],
    ['a limit above the maximum', { measures: ['Downloads.count'], limit: 1001 }, /limit/],
    ['an unknown query key', { measures: ['Downloads.count'], foo: 1 }, /foo/],
    ['an unparsable date range', { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'sometime soon' }] }, /date|range/i],
    [
      'an unknown granularity',
      { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'fortnight' }] },
      /granularity|fortnight/,
    ],
    [
      'a number filter value that is not a number',
      { measures: ['ChannelRanks.count'], filters: [{ member: 'ChannelRanks.rank', operator: 'equals', values: ['abc'] }] },
      /abc/,
    ],
    ['an empty query', {}, /measures|dimensions/],
    [
      'an unknown time zone',
      {
        measures: ['Downloads.count'],
        timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 7 days' }],
        timezone: 'Mars/Olympus',
      },
      /Mars\/Olympus/,
    ],
    ['cubes that do not join', { measures: ['Downloads.count', 'ChannelRanks.count'] }, /join/],
  ])('400 invalid_query for %s', async (_label, query, message) => {
    const res = await post({ query }).expect(400);
    expectEnvelope(res.body, 'invalid_query', message);
  });
});

describe('GET /v1/data/load (as Cube clients send it)', () => {
  const get = (params: Record<string, string>) => send(service, 'get', '/v1/data/load').query(params);

  it('400 invalid_request without a query parameter', async () => {
    expectEnvelope((await get({}).expect(400)).body, 'invalid_request', /query/);
  });

  it('400 invalid_json when the query parameter is not JSON', async () => {
    expectEnvelope((await get({ query: '{measures:' }).expect(400)).body, 'invalid_json');
  });

  it('400 invalid_request for an unknown queryType', async () => {
    expectEnvelope((await get({ query: '{"measures":["Downloads.count"]}', queryType: 'blend' }).expect(400)).body, 'invalid_request', /queryType/);
  });

  it('400 invalid_query for a compareDateRange query without queryType multi', async () => {
    const query = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last week', 'this week'] }] };
    expectEnvelope((await get({ query: JSON.stringify(query) }).expect(400)).body, 'invalid_query', /compareDateRange/);
  });
});

describe('routes', () => {
  it('404 JSON for an unknown route', async () => {
    const res = await send(service, 'get', '/v1/data/nothing').expect(404);
    expectEnvelope(res.body, 'not_found');
    const outside = await send(service, 'get', '/', { key: null }).expect(404);
    expectEnvelope(outside.body, 'not_found');
  });

  it('405 JSON with an Allow header for a wrong method', async () => {
    const putLoad = await send(service, 'put', '/v1/data/load/').expect(405);
    expectEnvelope(putLoad.body, 'method_not_allowed');
    expect(putLoad.headers.allow).toBe('GET, POST');
    const postMeta = await send(service, 'post', '/v1/data/meta/').expect(405);
    expect(postMeta.headers.allow).toBe('GET');
  });

  it('answers a valid query after all of the above', async () => {
    const res = await post({ query: { measures: ['Downloads.count'] } }).expect(200);
    expect(res.body.data[0]['Downloads.count']).toMatch(/^\d+$/);
  });
});

describe('shapes Cube 0.33 accepts and then crashes on (found by the abuse fuzzer)', () => {
  const td = (extra: object) => [{ dimension: 'Downloads.ts', ...extra }];
  it.each([
    ['timeDimensions not an array', { measures: ['Downloads.count'], timeDimensions: 'x' }, /timeDimensions/],
    ['a null time dimension', { measures: ['Downloads.count'], timeDimensions: [null] }, /timeDimensions\[0\]/],
    ['compareDateRange not an array', { measures: ['Downloads.count'], timeDimensions: td({ compareDateRange: 'last week' }) }, /compareDateRange/],
    ['an empty compareDateRange', { measures: ['Downloads.count'], timeDimensions: td({ compareDateRange: [] }) }, /compareDateRange/],
    ['measureFilter on a dimension', { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'measureFilter' }] }, /measure/],
    [
      'a date operator on a measure',
      { measures: ['Downloads.count'], filters: [{ member: 'Downloads.count', operator: 'beforeDate', values: ['2026-01-01'] }] },
      /time dimension/,
    ],
    [
      'a date operator on a string dimension, inside an or',
      { measures: ['Downloads.count'], filters: [{ or: [{ member: 'Downloads.city', operator: 'inDateRange', values: ['2026-01-01', '2026-01-02'] }] }] },
      /time dimension/,
    ],
    ['gt with a null value', { measures: ['Downloads.count'], filters: [{ member: 'Downloads.count', operator: 'gt', values: [null] }] }, /null/],
  ])('400 invalid_query for %s', async (_name, query, message) => {
    expectEnvelope((await post({ query }).expect(400)).body, 'invalid_query', message);
    expectEnvelope((await post({ query, queryType: 'multi' }).expect(400)).body, 'invalid_query', message);
  });

  it('400 invalid_query for an array of queries where one has no time dimension to blend on', async () => {
    const query = [{ measures: ['Downloads.count'], timeDimensions: td({ granularity: 'day', dateRange: 'last 7 days' }) }, { measures: ['Downloads.count'] }];
    expectEnvelope((await post({ query, queryType: 'multi' }).expect(400)).body, 'invalid_query', /query\[1\].*granularity/);
  });
});
