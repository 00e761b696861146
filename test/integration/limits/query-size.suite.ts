import { startService, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { load, loadBody } from '../support/api';

const MAX_MEMBERS = 3;
const MAX_FILTERS = 5;
const MAX_LIMIT = 100;

let service: TestService;
beforeAll(async () => {
  service = await startService({
    QUERY_MAX_MEMBERS: String(MAX_MEMBERS),
    QUERY_MAX_FILTERS: String(MAX_FILTERS),
    QUERY_MAX_LIMIT: String(MAX_LIMIT),
    QUERY_DEFAULT_LIMIT: String(MAX_LIMIT),
  });
});
afterAll(() => service.close());

const ts = (granularity?: string) => ({ dimension: 'Downloads.ts', dateRange: 'last 7 days', ...(granularity ? { granularity } : {}) });
/** A filter condition that keeps every row, distinct per `n` so no two queries share Cube's cache. */
const leaf = (n: number) => ({ member: 'Downloads.country', operator: 'notEquals', values: [`Atlantis ${n}`] });
const leaves = (count: number, from = 0) => Array.from({ length: count }, (_, i) => leaf(from + i));

const membersMessage = new RegExp(`maximum is ${MAX_MEMBERS}\\b`);
const filtersMessage = new RegExp(`more than ${MAX_FILTERS} filter`);

describe(`QUERY_MAX_MEMBERS=${MAX_MEMBERS}`, () => {
  const over = [
    [
      '1 measure + 2 dimensions + 1 time dimension',
      { measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.city'], timeDimensions: [ts('day')] },
    ],
    ['1 measure + 3 dimensions', { measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.city', 'Downloads.continent'] }],
    ['2 dimensions + 2 time dimensions', { dimensions: ['Downloads.country', 'Downloads.city'], timeDimensions: [ts('day'), ts('week')] }],
    [
      '3 members + a date-range-only time dimension',
      { measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.city'], timeDimensions: [ts()] },
    ],
    ['the same member 4 times', { measures: ['Downloads.count', 'Downloads.count', 'Downloads.count', 'Downloads.count'] }],
  ] as const;

  it.each(over)('POST: 400 query_too_large for %s', async (_label, query) => {
    expectEnvelope(await load(service, query), 'query_too_large', membersMessage);
  });

  it('POST: 200 for exactly 3 members (measure, dimension, time dimension)', async () => {
    const res = await load(service, { measures: ['Downloads.count'], dimensions: ['Downloads.country'], timeDimensions: [ts('day')] });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
  });

  it('GET ?query=…: 400 query_too_large for 4 members, 200 for 3', async () => {
    expectEnvelope(await load(service, over[0][1], { get: true }), 'query_too_large', membersMessage);
    const res = await load(service, { measures: ['Downloads.count'], dimensions: ['Downloads.continent', 'Downloads.device_type'] }, { get: true });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
  });

  it('queryType multi: the queries of an array count together (2 + 2 > 3), over POST and GET', async () => {
    const two = { measures: ['Downloads.count'], dimensions: ['Downloads.continent'] };
    const twoMore = { measures: ['Downloads.count'], dimensions: ['Downloads.os_name'] };
    expectEnvelope(await load(service, [two, twoMore], { multi: true }), 'query_too_large', membersMessage);
    expectEnvelope(await load(service, [two, twoMore], { get: true, multi: true }), 'query_too_large', membersMessage);
    // Each alone is within the limit, so it is the sum that is refused.
    expect((await load(service, twoMore)).status).toBe(200);
  });

  it('queryType multi: an array holding one query of 3 members is answered', async () => {
    // (Cube answers an array of several queries only as a data blend, which needs a time
    // dimension with a granularity in each: two such queries need 4 members at least.)
    const res = await load(service, [{ measures: ['Downloads.count'], dimensions: ['Downloads.device_type'], timeDimensions: [ts('day')] }], { multi: true });
    expect(res.body).not.toHaveProperty('error');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
  });

  it('queryType multi with a single query object counts its members', async () => {
    expectEnvelope(await load(service, over[1][1], { multi: true }), 'query_too_large', membersMessage);
  });
});

describe(`QUERY_MAX_FILTERS=${MAX_FILTERS}`, () => {
  const query = (filters: unknown[]) => ({ measures: ['Downloads.count'], filters });

  it('200 for 5 flat filter conditions, which keep every row', async () => {
    const res = await load(service, query(leaves(5, 100)));
    expect(res.status).toBe(200);
    expect(Number(res.body.data[0]['Downloads.count'])).toBeGreaterThan(0);
  });

  it('200 for 4 conditions, 2 of them inside an "or"', async () => {
    const res = await load(service, query([{ or: leaves(2, 200) }, ...leaves(2, 210)]));
    expect(res.status).toBe(200);
  });

  it('400 query_too_large for 6 flat conditions', async () => {
    expectEnvelope(await load(service, query(leaves(6, 300))), 'query_too_large', filtersMessage);
  });

  it('400 query_too_large for 6 conditions when 4 of them hide inside "or" and "and"', async () => {
    const filters = [{ or: [leaf(400), { and: [leaf(401), leaf(402)] }] }, leaf(403), { and: [leaf(404), leaf(405)] }];
    expectEnvelope(await load(service, query(filters)), 'query_too_large', filtersMessage);
  });

  it('400 query_too_large (not 500) for one condition nested 5000 "or"s deep', async () => {
    const depth = 5000;
    const body = `{"query":{"measures":["Downloads.count"],"filters":[${'{"or":['.repeat(depth)}${JSON.stringify(leaf(500))}${']}'.repeat(depth)}]}}`;
    const res = await loadBody(service, body);
    expectEnvelope(res, 'query_too_large', filtersMessage);
  });

  it('400 query_too_large for alternating "and"/"or" nested 5000 deep', async () => {
    // Built as text: JSON.stringify itself recurses too deep for this.
    let filter = JSON.stringify(leaf(501));
    for (let i = 0; i < 5000; i++) filter = `{"${i % 2 ? 'and' : 'or'}":[${filter}]}`;
    const body = `{"query":{"measures":["Downloads.count"],"filters":[${filter}]}}`;
    const res = await loadBody(service, body);
    expectEnvelope(res, 'query_too_large', filtersMessage);
  });

  it('GET ?query=…: 400 query_too_large for 6 conditions', async () => {
    expectEnvelope(await load(service, query([{ or: leaves(3, 600) }, ...leaves(3, 610)]), { get: true }), 'query_too_large', filtersMessage);
  });

  it('queryType multi: the queries of an array count together (3 + 3 > 5), over POST and GET', async () => {
    const queries = [query(leaves(3, 700)), query(leaves(3, 710))];
    expectEnvelope(await load(service, queries, { multi: true }), 'query_too_large', filtersMessage);
    expectEnvelope(await load(service, queries, { get: true, multi: true }), 'query_too_large', filtersMessage);
  });
});

describe(`QUERY_MAX_LIMIT=${MAX_LIMIT}`, () => {
  it('answers a limit of exactly the maximum', async () => {
    const res = await load(service, { dimensions: ['Downloads.city'], limit: MAX_LIMIT });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(MAX_LIMIT);
  });

  it('400 invalid_query naming the limit for one above it (POST and GET)', async () => {
    const query = { dimensions: ['Downloads.city'], limit: MAX_LIMIT + 1 };
    expectEnvelope(await load(service, query), 'invalid_query', /limit/i);
    expectEnvelope(await load(service, query, { get: true }), 'invalid_query', /limit/i);
  });
});
