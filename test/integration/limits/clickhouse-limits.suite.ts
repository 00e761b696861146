import path from 'node:path';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { load } from '../support/api';

/**
 * Limits ClickHouse enforces on each statement (max_result_rows,
 * max_memory_usage, max_execution_time), seen through the HTTP API.
 */

const MAX_RESULT_ROWS = 5;
const ACCOUNT = 'northwind-audio';

describe(`QUERY_MAX_RESULT_ROWS=${MAX_RESULT_ROWS}, QUERY_MAX_MEMORY_MB=1`, () => {
  let service: TestService;
  let oracle: Oracle;
  beforeAll(async () => {
    service = await startService({ QUERY_MAX_RESULT_ROWS: String(MAX_RESULT_ROWS), QUERY_MAX_MEMORY_MB: '1' }, { accounts: [ACCOUNT] });
    oracle = openOracle();
  });
  afterAll(async () => {
    await oracle.close();
    await service.close();
  });

  /**
   * A query of another client after a refused one: it must get its own
   * answer, untouched by what the refused statement left behind.
   */
  async function expectNextQueryAnswers(country: string) {
    const expected = await oracle.value(`SELECT count() FROM analytics.downloads WHERE account_id = '${ACCOUNT}' AND country = '${country}'`);
    const res = await load(
      service,
      { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'equals', values: [country] }] },
      { key: service.accountKeys[ACCOUNT] },
    );
    expect(res.body).toEqual(expect.objectContaining({ data: [{ 'Downloads.count': String(expected) }] }));
    expect(res.status).toBe(200);
  }

  describe('max_result_rows', () => {
    it('answers a query of exactly 5 rows', async () => {
      const countries = (await oracle.rows<{ country: string }>('SELECT DISTINCT country FROM analytics.downloads')).map((row) => row.country);
      const res = await load(service, { dimensions: ['Downloads.country'], limit: MAX_RESULT_ROWS });
      expect(res.status).toBe(200);
      const answered = res.body.data.map((row: Record<string, string>) => row['Downloads.country']);
      expect(answered).toHaveLength(MAX_RESULT_ROWS);
      expect(new Set(answered).size).toBe(MAX_RESULT_ROWS);
      for (const country of answered) expect(countries).toContain(country);
    });

    it('answers 400 result_too_large when the answer would have more than 5 rows', async () => {
      const countries = await oracle.value('SELECT uniqExact(country) FROM analytics.downloads');
      expect(countries).toBeGreaterThan(MAX_RESULT_ROWS);
      expectEnvelope(await load(service, { dimensions: ['Downloads.country'], limit: 100 }), 'result_too_large');
    });

    it("answers the next query (another account's) correctly after the refused one", async () => {
      await expectNextQueryAnswers('Germany');
    });
  });

  describe('max_memory_usage', () => {
    it('answers a light query within 1 MB', async () => {
      const expected = await oracle.value('SELECT count() FROM analytics.podcast_events');
      const res = await load(service, { measures: ['PodcastEvents.count'] });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ 'PodcastEvents.count': String(expected) }]);
    });

    it('answers 400 query_too_expensive for a GROUP BY over every user agent and second (few rows out, much memory)', async () => {
      const groups = await oracle.value('SELECT uniqExact(raw_ua, ts) FROM analytics.podcast_events');
      expect(groups).toBeGreaterThan(10_000); // a hash table of these is well over 1 MB
      const query = { measures: ['PodcastEvents.count'], dimensions: ['PodcastEvents.rawUa', 'PodcastEvents.ts.second'], limit: 3 };
      expectEnvelope(await load(service, query), 'query_too_expensive');
    });

    it("answers the next query (another account's) correctly after the refused one", async () => {
      await expectNextQueryAnswers('France');
    });
  });
});

describe('QUERY_TIMEOUT_SECONDS=1 with a query that takes about 4 s', () => {
  const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
  let service: TestService;
  beforeAll(async () => {
    // Cube waits up to 5 s before it answers "Continue wait", longer than the
    // query takes: only ClickHouse's max_execution_time can end it at 1 s.
    service = await startService({ QUERY_TIMEOUT_SECONDS: '1' }, { schemaPath: SLOW_SCHEMA, continueWaitSeconds: 5 });
  });
  afterAll(() => service.close());

  it('answers 504 query_timeout after about 1 s, not after the 4 s the query needs', async () => {
    const started = Date.now();
    const res = await load(service, { measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'gte', values: ['0'] }] });
    const elapsed = Date.now() - started;
    expectEnvelope(res, 'query_timeout');
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(3000);
  });
});
