/**
 * Cube 0.33 reads its row limits from process.env, so two services in one
 * process that wrote their QUERY_MAX_LIMIT and QUERY_DEFAULT_LIMIT there would
 * each use whichever values the later one wrote. Each keeps its own
 * (src/cube/engine/row-limits.ts), and none writes CUBEJS_* at all. The wide
 * service starts first, so the narrow one's values would be the ones left
 * behind.
 */
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { dryRun, load } from '../support/api';

let wide: TestService;
let narrow: TestService;
let oracle: Oracle;
const cubeEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CUBEJS_')));
const envBefore = cubeEnv();

beforeAll(async () => {
  wide = await startService({ QUERY_MAX_LIMIT: '60', QUERY_DEFAULT_LIMIT: '40', RESULT_CACHE_MB: '0' });
  narrow = await startService({ QUERY_MAX_LIMIT: '5', QUERY_DEFAULT_LIMIT: '3', RESULT_CACHE_MB: '0' });
  oracle = openOracle();
}, 120_000);
afterAll(async () => {
  await wide?.close();
  await narrow?.close();
  await oracle?.close();
});

const BY_CITY = { measures: ['Downloads.count'], dimensions: ['Downloads.city'], order: { 'Downloads.city': 'asc' } };
const dryRunLimit = async (service: TestService, query: Record<string, unknown>) => {
  const res = await dryRun(service, query).expect(200);
  return res.body.normalizedQueries[0].limit as number;
};

it('has cities enough for every limit below', async () => {
  expect(await oracle.value('SELECT count(DISTINCT city) FROM analytics.downloads')).toBeGreaterThan(50);
});

it('answers each service up to its own QUERY_MAX_LIMIT', async () => {
  const wideAnswer = await load(wide, { ...BY_CITY, limit: 50 });
  expect(wideAnswer.status).toBe(200);
  expect(wideAnswer.body.data).toHaveLength(50);

  const narrowAnswer = await load(narrow, { ...BY_CITY, limit: 6 });
  expect(narrowAnswer.status).toBe(400);
  expect(narrowAnswer.body.code).toBe('invalid_query');
  expect(narrowAnswer.body.error).toContain('the maximum is 5 (QUERY_MAX_LIMIT)');
});

it("gives a query without a limit its own service's QUERY_DEFAULT_LIMIT, on both APIs", async () => {
  expect((await load(wide, BY_CITY)).body.data).toHaveLength(40);
  expect((await load(narrow, BY_CITY)).body.data).toHaveLength(3);
  expect(await dryRunLimit(wide, BY_CITY)).toBe(40);
  expect(await dryRunLimit(narrow, BY_CITY)).toBe(3);
});

it('writes no CUBEJS_* variable into the process environment', () => {
  expect(cubeEnv()).toEqual(envBefore);
});
