/**
 * Errors say what to do instead, where Cube's own words did not: a
 * compareDateRange or an array of queries without queryType "multi", a limit
 * over QUERY_MAX_LIMIT, an operator that does not exist; and a 405 names the
 * path the client sent, its mount prefix included. On both APIs.
 */
import { expectEnvelope } from '../limits/envelope';
import { startService, type TestService } from '../support/service';
import { load, send } from '../support/api';

let service: TestService;
beforeAll(async () => {
  service = await startService({ QUERY_MAX_LIMIT: '1000', QUERY_DEFAULT_LIMIT: '100' });
});
afterAll(async () => {
  await service.close();
});

type Query = Record<string, unknown>;
const APIS = [
  { api: 'data', path: '/v1/data/load/' },
  { api: 'cubejs', path: '/cubejs-api/v1/load' },
] as const;

describe.each(APIS)('$path', ({ api, path }) => {
  const post = (query: unknown, multi = false) => load(service, query, { api, multi });
  const get = (query: unknown) => load(service, query, { api, get: true });
  const compare: Query = {
    measures: ['Downloads.count'],
    timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', compareDateRange: ['last 7 days', 'last 14 days'] }],
  };

  it('compareDateRange without queryType multi: says to add queryType "multi", POST and GET', async () => {
    for (const res of [await post(compare), await get(compare)]) {
      expectEnvelope(res, 'invalid_query', /^timeDimensions\[0\]\.compareDateRange .*add "queryType": "multi"/);
      expect(res.body.error).not.toMatch(/update the client/i);
    }
    expect((await post(compare, true)).status).toBe(200);
  });

  it('an array of queries without queryType multi: says to add queryType "multi"', async () => {
    const blended = [0, 1].map(() => ({
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 7 days' }],
    }));
    const res = await post(blended);
    // /v1 without multi takes one query object only.
    if (path.startsWith('/v1')) expectEnvelope(res, 'invalid_request', /JSON object/);
    else expectEnvelope(res, 'invalid_query', /add "queryType": "multi"/);
    expect((await post(blended, true)).status).toBe(200);
  });

  it('a limit over the maximum: names the maximum and QUERY_MAX_LIMIT, as a number, a digit string, and in an array', async () => {
    for (const limit of [1001, '5000']) {
      expectEnvelope(
        await post({ measures: ['Downloads.count'], dimensions: ['Downloads.city'], limit }),
        'invalid_query',
        /"limit" is \d+; the maximum is 1000 \(QUERY_MAX_LIMIT\)/,
      );
    }
    const both = [1000, 1001].map((limit) => ({ measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day' }], limit }));
    expectEnvelope(await post(both, true), 'invalid_query', /^query\[1\]: "limit" is 1001; the maximum is 1000 \(QUERY_MAX_LIMIT\)/);
    expect((await post({ measures: ['Downloads.count'], dimensions: ['Downloads.city'], limit: 1000 })).status).toBe(200);
  });

  it('an unknown operator, at any depth: names it and lists the operators there are', async () => {
    const res = await post({ measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'between', values: ['a', 'b'] }] });
    expectEnvelope(
      res,
      'invalid_query',
      /^filters\[0\]\.operator: "between" is not a filter operator; use one of equals, notEquals, .*inDateRange.*measureFilter\.$/,
    );
    const nested = await post({
      measures: ['Downloads.count'],
      filters: [
        {
          or: [
            { member: 'Downloads.country', operator: 'set' },
            { member: 'Downloads.country', operator: 'like', values: ['x'] },
          ],
        },
      ],
    });
    expectEnvelope(nested, 'invalid_query', /^filters\[0\]\.or\[1\]\.operator: "like" is not a filter operator/);
  });

  it('a method the route does not take: 405 naming the whole path sent', async () => {
    const res = await send(service, 'put', path).send({});
    expectEnvelope(res, 'method_not_allowed', new RegExp(`^PUT is not allowed on ${path.replace(/\/$/, '')}/?; use GET, POST\\.$`));
  });
});

it('/v1/data/meta/: a 405 names /v1/data/meta', async () => {
  const res = await send(service, 'delete', '/v1/data/meta/');
  expectEnvelope(res, 'method_not_allowed', /^DELETE is not allowed on \/v1\/data\/meta\/?; use GET\.$/);
});
