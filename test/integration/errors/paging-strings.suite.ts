import { expectEnvelope } from '../limits/envelope';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load } from '../support/api';

/**
 * Cube's validator accepts `limit` and `offset` written as strings, but Cube
 * 0.33 then answered the default number of rows (and no offset) as if the
 * client had sent none. A whole number in a string is that number; any other
 * string is a 400. Expected rows come from SQL over the same data.
 */

let service: TestService;
let oracle: Oracle;
beforeAll(async () => {
  service = await startService({ QUERY_MAX_LIMIT: '1000', QUERY_DEFAULT_LIMIT: '100' });
  oracle = openOracle();
});
afterAll(async () => {
  await oracle.close();
  await service.close();
});

const BY_CITY = { dimensions: ['Downloads.city'], order: { 'Downloads.city': 'asc' } };
const cities = async (limit: number, offset = 0) =>
  (await oracle.rows<{ city: string }>(`SELECT city FROM analytics.downloads GROUP BY city ORDER BY city LIMIT ${limit} OFFSET ${offset}`)).map(
    (row) => row.city,
  );

it('the data has more cities than the limits below ask for', async () => {
  expect(await oracle.value('SELECT uniqExact(city) FROM analytics.downloads')).toBeGreaterThan(5);
});

it('"limit": "2" answers 2 rows, the first two by SQL, and echoes the number', async () => {
  const res = await load(service, { ...BY_CITY, limit: '2' }).expect(200);
  expect(res.body.data.map((row: Record<string, string>) => row['Downloads.city'])).toEqual(await cities(2));
  expect(res.body.query.limit).toBe(2);
});

it('"offset": "3" skips 3 rows, as SQL does', async () => {
  const res = await load(service, { ...BY_CITY, limit: '2', offset: '3' }).expect(200);
  expect(res.body.data.map((row: Record<string, string>) => row['Downloads.city'])).toEqual(await cities(2, 3));
  expect(res.body.query.offset).toBe(3);
});

it('a limit string above QUERY_MAX_LIMIT is refused like the number', async () => {
  expectEnvelope(await load(service, { ...BY_CITY, limit: '1001' }), 'invalid_query', /limit/);
});

it.each(['2.0', '1e3', ' 2', '+2', '-1', '0x10', '', 'ten'])('"limit": %j answers 400 naming limit', async (limit) => {
  expectEnvelope(await load(service, { ...BY_CITY, limit }), 'invalid_query', /limit/);
});

it.each(['1.5', '-1', 'three'])('"offset": %j answers 400 naming offset', async (offset) => {
  expectEnvelope(await load(service, { ...BY_CITY, offset }), 'invalid_query', /offset/);
});
