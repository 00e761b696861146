/**
 * Cube's refresh worker (CUBE_ROLLUP_REFRESH_SECONDS) builds a model's rollup
 * (fixtures/rollup-schema) in the background for the operator and for every
 * account in the data, and again when an account's rows change, so that
 * dashboards never wait for a build.
 */
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { answer, byCountry, direct, ROLLUP_SCHEMA, rollupTables } from './support';
import { probe } from '../support/api';

const ACCOUNT = 'bright-signal';
/** 10.0.0.9: an address of the account's that the demo never draws (its addresses are public ones). */
const PROBE_IP = 167772169;
let oracle: Oracle;
let service: TestService | undefined;

beforeAll(async () => {
  oracle = openOracle();
  // Whatever other files built: this one watches the worker build from nothing.
  await oracle.command(`DROP DATABASE IF EXISTS ${ROLLUP_DATABASE} SYNC`);
});
afterAll(async () => {
  await oracle.command(`ALTER TABLE ${DATABASE}.downloads DELETE WHERE ip4 = ${PROBE_IP} SETTINGS mutations_sync = 2`);
  await oracle.close();
});

it('builds a rollup per account and one for the operator, and rebuilds one whose rows changed, in the background; queries then read them without building', async () => {
  const accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${DATABASE}.downloads`)).map((r) => r.a);
  service = await startService({ CUBE_ROLLUP_REFRESH_SECONDS: '1', RESULT_CACHE_MB: '0' }, { schemaPath: ROLLUP_SCHEMA, accounts: [ACCOUNT] });
  await probe(service, 'readyz').expect(200);
  // The start's catch-up built the missing tables (what the worker would have); the worker's own work is what follows.
  const before = await rollupTables(oracle);
  expect(before).toHaveLength(accounts.length + 1);

  // Rows added by other means than an import: no one tells the service; the worker, seeing the account's refresh
  // key turn (checked every 10 s), builds its table again, and the operator's.
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  expect(await oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE ip4 = ${PROBE_IP}`)).toBe(0);
  await oracle.command(`INSERT INTO ${DATABASE}.downloads (account_id, ip4, ts, country) VALUES ('${ACCOUNT}', ${PROBE_IP}, '${day(2)} 08:00:00', 'Iceland')`);
  const deadline = Date.now() + 120_000;
  const rebuilt = async () => (await rollupTables(oracle)).filter((t) => !before.includes(t)).length >= 2;
  while (!(await rebuilt()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await rebuilt()).toBe(true);

  const query = byCountry('last 7 days');
  const built = await rollupTables(oracle);
  const range = `ts >= toDateTime('${day(7)} 00:00:00', 'UTC') AND ts < toDateTime('${day(0)} 00:00:00', 'UTC')`;
  const want = await direct(oracle, `account_id = '${ACCOUNT}' AND ${range}`);
  expect(want.Iceland).toBe(1);
  expect(await answer(service, service.accountKeys[ACCOUNT], query)).toEqual(want);
  // The query found its table built: it built nothing.
  expect(await rollupTables(oracle)).toEqual(built);
}, 180_000);

it('stops when the service closes (Cube 0.33 leaves its timer running)', async () => {
  await service!.close();
  await oracle.command(`DROP DATABASE IF EXISTS ${ROLLUP_DATABASE} SYNC`);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  expect(await rollupTables(oracle)).toEqual([]);
}, 30_000);
