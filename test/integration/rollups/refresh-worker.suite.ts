/**
 * Cube's refresh worker (CUBE_ROLLUP_REFRESH_SECONDS) builds the funnel's
 * rollup in the background for the operator and for every account in the
 * data, so that dashboards never wait for a build; the service is ready
 * before any build.
 */
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const ACCOUNT = 'bright-signal';
let oracle: Oracle;
let service: TestService | undefined;

const funnelTables = async () =>
  (
    await oracle.rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = '${ROLLUP_DATABASE}' AND name LIKE 'web_events_from_podcast_funnel%' ORDER BY name`,
    )
  ).map((t) => t.name);

beforeAll(async () => {
  oracle = openOracle();
  // Whatever other files built: this one watches the worker build from nothing.
  await oracle.command(`DROP DATABASE IF EXISTS ${ROLLUP_DATABASE} SYNC`);
});
afterAll(async () => {
  await oracle.close();
});

it('builds a rollup per account and one for the operator, in the background, then queries read them without building', async () => {
  const accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${DATABASE}.downloads`)).map((r) => r.a);
  service = await startService({ CUBE_ROLLUP_REFRESH_SECONDS: '1', RESULT_CACHE_MB: '0' }, { accounts: [ACCOUNT] });
  // Ready before anything is built: start-up never waits for the worker.
  await request(service.app).get('/readyz').expect(200);

  const deadline = Date.now() + 120_000;
  let tables = await funnelTables();
  while (tables.length < accounts.length + 1 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    tables = await funnelTables();
  }
  expect(tables).toHaveLength(accounts.length + 1);

  const query = {
    measures: ['WebEventsFromPodcastFunnel.conversions'],
    dimensions: ['WebEventsFromPodcastFunnel.step'],
    timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
  };
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', service.accountKeys[ACCOUNT]).send({ query }).expect(200);
  const got = Object.fromEntries(
    (res.body.data as Record<string, string>[])
      .map((r): [string, number] => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])])
      .filter(([, n]) => n > 0),
  );
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const rows = await oracle.rows<{ k: string; v: string }>(
    funnelStepsSql(
      DATABASE,
      `account_id = '${ACCOUNT}'`,
      `t >= toDateTime64('${day(7)} 00:00:00', 3, 'UTC') AND t < toDateTime64('${day(0)} 00:00:00', 3, 'UTC')`,
    ),
  );
  expect(got).toEqual(Object.fromEntries(rows.map((r): [string, number] => [r.k, Number(r.v)]).filter(([, n]) => n > 0)));
  // The query found its table built: it built nothing.
  expect(await funnelTables()).toEqual(tables);
}, 180_000);

it('stops when the service closes (Cube 0.33 leaves its timer running)', async () => {
  await service!.close();
  await oracle.command(`DROP DATABASE IF EXISTS ${ROLLUP_DATABASE} SYNC`);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  expect(await funnelTables()).toEqual([]);
}, 30_000);
