import { startService, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { load, loadBody } from '../support/api';

/**
 * Issue 8: shapes whose cost inside Cube grows with a size the client picks
 * held the one event loop for seconds to minutes (2,000 compareDateRange
 * ranges: over 10 minutes). Each is refused before Cube sees it, with the
 * service's default limits, and a query at the limit is still answered.
 */

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const DAY_MS = 86_400_000;
const isoDay = (i: number) => new Date(Date.UTC(2020, 0, 1) + i * DAY_MS).toISOString().slice(0, 10);
/** Distinct one-day ranges, so Cube cannot answer any from its cache. */
const ranges = (n: number, from = 0) => Array.from({ length: n }, (_, i) => [isoDay(from + i), isoDay(from + i)]);
const compare = (n: number, from = 0) => ({
  measures: ['Downloads.count'],
  timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', compareDateRange: ranges(n, from) }],
});
const cityFilter = (operator: string, values: string[]) => ({ measures: ['Downloads.count'], filters: [{ member: 'Downloads.city', operator, values }] });

describe('defaults', () => {
  it('are the documented ones', () => {
    expect(service.config.query).toMatchObject({ maxQueries: 20, maxFilterValues: 1000, maxValueLength: 1000, maxTimeBuckets: 20_000, maxDepth: 64 });
  });
});

describe('QUERY_MAX_QUERIES', () => {
  it('400 query_too_large naming the limit for 2,000 compareDateRange ranges, multi or not', async () => {
    const query = compare(2000);
    expectEnvelope(await load(service, query, { multi: true }), 'query_too_large', /2000 queries.*maximum is 20 \(QUERY_MAX_QUERIES\)/);
    expectEnvelope(await load(service, query), 'query_too_large', /QUERY_MAX_QUERIES/);
  });

  it('400 for 21 ranges; 20 ranges are answered, one result each', async () => {
    expectEnvelope(await load(service, compare(21, 100), { multi: true }), 'query_too_large', /QUERY_MAX_QUERIES/);
    const res = await load(service, compare(20, 200), { multi: true });
    expect(res.body).not.toHaveProperty('error');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(20);
  });

  it('400 for an array of 21 queries, which stays within the member limit', async () => {
    const one = (i: number) => ({
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [isoDay(i), isoDay(i + 1)] }],
    });
    const queries = Array.from({ length: 21 }, (_, i) => one(i));
    expectEnvelope(await load(service, queries, { multi: true }), 'query_too_large', /21 queries.*QUERY_MAX_QUERIES/);
  });
});

describe('QUERY_MAX_FILTER_VALUES', () => {
  const values = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`);

  it('400 naming the limit for 10,000 values in one filter', async () => {
    expectEnvelope(await load(service, cityFilter('equals', values(10_000, 'a'))), 'query_too_large', /more than 1000 values.*QUERY_MAX_FILTER_VALUES/);
  });

  it('1,000 values are answered; 1,001 are refused', async () => {
    const res = await load(service, cityFilter('notEquals', values(1000, 'nowhere ')));
    expect(res.body).not.toHaveProperty('error');
    expect(Number(res.body.data[0]['Downloads.count'])).toBeGreaterThan(0);
    expectEnvelope(await load(service, cityFilter('notEquals', values(1001, 'nowhere '))), 'query_too_large', /QUERY_MAX_FILTER_VALUES/);
  });

  it('counts a filter once per compareDateRange range: 100 values × 11 ranges > 1,000', async () => {
    const query = { ...compare(11, 300), filters: [{ member: 'Downloads.city', operator: 'notEquals', values: values(100, 'c') }] };
    expectEnvelope(await load(service, query, { multi: true }), 'query_too_large', /QUERY_MAX_FILTER_VALUES/);
  });
});

describe('QUERY_MAX_VALUE_LENGTH', () => {
  it('a 90 KB contains value: 400 query_too_large with our message, not the database parser text', async () => {
    const res = await load(service, cityFilter('contains', ['%'.repeat(90_000)]));
    expectEnvelope(res, 'query_too_large', /^A filter value is 90000 characters long; the maximum is 1000 \(QUERY_MAX_VALUE_LENGTH\)\.$/);
    expect(res.body.error).not.toMatch(/max_query_size|Syntax error|database/i);
  });

  it('a value of 1,000 characters is answered (as no match); 1,001 is refused', async () => {
    const res = await load(service, cityFilter('contains', ['%'.repeat(1000)]));
    expect(res.body).not.toHaveProperty('error');
    expect(res.body.data).toEqual([{ 'Downloads.count': '0' }]);
    expectEnvelope(await load(service, cityFilter('contains', ['%'.repeat(1001)])), 'query_too_large', /QUERY_MAX_VALUE_LENGTH/);
  });

  it('a date range phrase of 90 KB: 400 naming the limit', async () => {
    const query = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: `from ${'7 days ago '.repeat(8000)} to now` }] };
    expectEnvelope(await load(service, query), 'query_too_large', /date range is \d+ characters.*QUERY_MAX_VALUE_LENGTH/);
  });

  it('values within the limit whose SQL is too long for the database: 400 query_too_large with our message', async () => {
    // Each % is escaped in the SQL, so 95 values of 1,000 make about 285 KB, over ClickHouse's max_query_size (256 KiB).
    const res = await load(
      service,
      cityFilter(
        'contains',
        Array.from({ length: 95 }, (_, i) => `${i}`.padEnd(1000, '%')),
      ),
    );
    expectEnvelope(res, 'query_too_large', /^The query is too large for the database once its filter values are written out/);
    expect(res.body.error).not.toMatch(/max_query_size|Syntax error/i);
  });
});

describe('QUERY_MAX_TIME_BUCKETS', () => {
  const td = (granularity: string, dateRange: unknown) => ({
    measures: ['Downloads.count'],
    timeDimensions: [{ dimension: 'Downloads.ts', granularity, dateRange }],
  });

  it.each([
    ['second over "last 365 days"', td('second', 'last 365 days')],
    ['second over a year of dates', td('second', ['2025-01-01', '2025-12-31'])],
    ['minute over "last 3 years"', td('minute', 'last 3 years')],
    ['hour over "from 3 years ago to now"', td('hour', 'from 3 years ago to now')],
    ['day over a thousand years', td('day', ['1026-01-01', '2026-01-01'])],
  ])('400 naming the limit for %s', async (_label, query) => {
    expectEnvelope(await load(service, query), 'query_too_large', /more than 20000 time buckets.*QUERY_MAX_TIME_BUCKETS/);
  });

  it('counts every range of a compareDateRange: hour over 20 ranges of 2 months', async () => {
    const query = {
      measures: ['Downloads.count'],
      timeDimensions: [
        { dimension: 'Downloads.ts', granularity: 'hour', compareDateRange: Array.from({ length: 20 }, (_, i) => [`${2000 + i}-01-01`, `${2000 + i}-02-28`]) },
      ],
    };
    expectEnvelope(await load(service, query, { multi: true }), 'query_too_large', /QUERY_MAX_TIME_BUCKETS/);
  });

  it('answers minute over "last 7 days" (10,080 buckets) and second over 5 hours (18,000)', async () => {
    for (const query of [td('minute', 'last 7 days'), td('second', ['2026-01-01T00:00:00.000', '2026-01-01T04:59:59.999'])]) {
      const res = await load(service, query);
      expect(res.body).not.toHaveProperty('error');
      expect(res.status).toBe(200);
    }
  });
});

describe('QUERY_MAX_DEPTH', () => {
  it('400 naming the limit for an unknown key holding objects 10,000 deep, which would overflow the stack of what walks the query', async () => {
    // Written as text: JSON.stringify itself overflows at this depth.
    const body = `{"query":{"measures":["Downloads.count"],"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}}`;
    const res = await loadBody(service, body);
    expectEnvelope(res, 'query_too_large', /more than 64 deep.*\(QUERY_MAX_DEPTH\)/);
  });

  it('answers and/or filters nested 10 deep, and refuses them nested 40 deep (80 levels of objects and arrays)', async () => {
    const filter = { member: 'Downloads.country', operator: 'set' };
    const deep = (levels: number) => Array.from({ length: levels }).reduce<object>((inner) => ({ and: [inner] }), filter);
    const res = await load(service, { measures: ['Downloads.count'], filters: [deep(10)] });
    expect(res.status).toBe(200);
    expectEnvelope(await load(service, { measures: ['Downloads.count'], filters: [deep(40)] }), 'query_too_large', /QUERY_MAX_DEPTH/);
  });
});

describe('order entries (QUERY_MAX_MEMBERS)', () => {
  it('400 for 3,000 order entries; 50 are answered', async () => {
    const order = (n: number) => Array.from({ length: n }, () => ['Downloads.count', 'desc']);
    expectEnvelope(await load(service, { measures: ['Downloads.count'], order: order(3000) }), 'query_too_large', /3000 order entries.*QUERY_MAX_MEMBERS/);
    const res = await load(service, { measures: ['Downloads.count'], order: order(50) });
    expect(res.body).not.toHaveProperty('error');
    expect(res.status).toBe(200);
  });
});
