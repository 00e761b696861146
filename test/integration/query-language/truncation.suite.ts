/**
 * Never a silent cut: every load answer says, in Result-Truncated (both
 * routes) and in `truncated` (Cube's route only), whether its limit left rows
 * out. How many rows a query matches comes from direct SQL over the same data.
 */
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load } from '../support/api';

const DEFAULT_LIMIT = 7;
let service: TestService;
let oracle: Oracle;
let countries: number;
beforeAll(async () => {
  service = await startService({ QUERY_DEFAULT_LIMIT: String(DEFAULT_LIMIT), QUERY_MAX_LIMIT: '1000' });
  oracle = openOracle();
  countries = await oracle.value(`SELECT count(DISTINCT country) FROM ${DATABASE}.downloads`);
  // The cases below need a query matching more rows than the default limit.
  expect(countries).toBeGreaterThan(DEFAULT_LIMIT + 2);
});
afterAll(async () => {
  await oracle.close();
  await service.close();
});

const byCountry = (paging: Record<string, unknown> = {}) => ({
  measures: ['Downloads.count'],
  dimensions: ['Downloads.country'],
  order: { 'Downloads.country': 'asc' },
  ...paging,
});
const SPEC_KEYS = ['annotation', 'data', 'lastRefreshTime', 'query', 'slowQuery', 'total'];

describe('/v1/data/load/', () => {
  it.each([
    ['one below the rows matched', (n: number) => n - 1, true],
    ['exactly the rows matched', (n: number) => n, false],
    ['above the rows matched', (n: number) => n + 5, false],
  ])('limit %s: Result-Truncated, the rows up to the limit, the limit echoed as sent, the spec shape', async (_name, limitOf, truncated) => {
    const limit = limitOf(countries);
    const res = await load(service, byCountry({ limit }));
    expect(res.status).toBe(200);
    expect(res.headers['result-truncated']).toBe(String(truncated));
    expect(res.body.data).toHaveLength(Math.min(limit, countries));
    expect(res.body.query.limit).toBe(limit);
    expect(Object.keys(res.body).sort()).toEqual(SPEC_KEYS);
  });

  it('no limit: the default limit cuts, and says so', async () => {
    const res = await load(service, byCountry());
    expect(res.headers['result-truncated']).toBe('true');
    expect(res.body.data).toHaveLength(DEFAULT_LIMIT);
    // The echo is the query as sent, without the limit it did not give.
    expect(res.body.query.limit).toBeUndefined();
  });

  it('paging: the last page is complete exactly when nothing lies past it', async () => {
    const last = await load(service, byCountry({ limit: 3, offset: countries - 3 }));
    expect(last.headers['result-truncated']).toBe('false');
    expect(last.body.data).toHaveLength(3);
    const before = await load(service, byCountry({ limit: 3, offset: countries - 4 }));
    expect(before.headers['result-truncated']).toBe('true');
    expect(before.body.data).toHaveLength(3);
    // The rows themselves are the oracle's, in its order: the extra row never shows.
    const names = await oracle.rows<{ country: string }>(`SELECT DISTINCT country FROM ${DATABASE}.downloads ORDER BY country`);
    expect(before.body.data.map((r: Record<string, string>) => r['Downloads.country'])).toEqual(
      names.slice(countries - 4, countries - 1).map((r) => r.country),
    );
  });

  it('an answer from the result cache keeps its flag', async () => {
    const query = byCountry({ limit: 2, timezone: 'UTC' });
    const first = await load(service, query);
    const second = await load(service, query);
    expect([first.headers['result-truncated'], second.headers['result-truncated']]).toEqual(['true', 'true']);
    expect(second.body).toEqual(first.body);
  });

  it('queryType multi: the header is true when the limit cut any of the queries', async () => {
    const td = { dimension: 'Downloads.ts', granularity: 'month' };
    const res = await load(service, [byCountry({ limit: 2, timeDimensions: [td] }), byCountry({ limit: 1000, timeDimensions: [td] })], { multi: true });
    expect(res.status).toBe(200);
    expect(res.headers['result-truncated']).toBe('true');
    expect(res.body.results[0].data).toHaveLength(2);
    expect(res.body.results[0].query.limit).toBe(2);
  });

  it('the maximum limit is still the maximum', async () => {
    expect((await load(service, byCountry({ limit: 1000 }))).status).toBe(200);
    const over = await load(service, byCountry({ limit: 1001 }));
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('invalid_query');
  });
});

describe('/cubejs-api/v1/load', () => {
  it('a cut answer: header and `truncated: true`; a complete one: false', async () => {
    const cut = await load(service, byCountry({ limit: 2 }), { api: 'cubejs' });
    expect(cut.headers['result-truncated']).toBe('true');
    expect(cut.body.truncated).toBe(true);
    expect(cut.body.data).toHaveLength(2);
    expect(cut.body.query.limit).toBe(2);
    expect(cut.body.query.rowLimit).toBe(2);
    const whole = await load(service, byCountry({ limit: countries }), { api: 'cubejs' });
    expect(whole.headers['result-truncated']).toBe('false');
    expect(whole.body.truncated).toBe(false);
    expect(whole.body.data).toHaveLength(countries);
  });

  it('queryType multi: `truncated` on each result and at the top', async () => {
    const td = { dimension: 'Downloads.ts', granularity: 'month' };
    const res = await load(service, [byCountry({ limit: 1, timeDimensions: [td] }), byCountry({ limit: 1000, timeDimensions: [td] })], {
      api: 'cubejs',
      multi: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { truncated: boolean }) => r.truncated)).toEqual([true, false]);
    expect(res.body.truncated).toBe(true);
    expect(res.headers['result-truncated']).toBe('true');
  });
});
