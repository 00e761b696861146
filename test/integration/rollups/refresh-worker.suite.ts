/**
 * Cube's refresh worker (CUBE_ROLLUP_REFRESH_SECONDS) builds the funnel's
 * rollup in the background for the operator and for every account in the
 * data, and again when an account's rows change, so that dashboards never
 * wait for a build.
 */
import request from 'supertest';
import { funnelStepsSql } from '../support/catalog';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const ACCOUNT = 'bright-signal';
/** 10.0.0.9: an address of the account's that the demo never draws (its addresses are public ones). */
const PROBE_IP = 167772169;
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
  await oracle.command(`ALTER TABLE ${DATABASE}.downloads DELETE WHERE ip4 = ${PROBE_IP} SETTINGS mutations_sync = 2`);
  await oracle.command(`ALTER TABLE ${DATABASE}.web_events DELETE WHERE ip4 = ${PROBE_IP} SETTINGS mutations_sync = 2`);
  await oracle.close();
});

it('builds a rollup per account and one for the operator, and rebuilds one whose rows changed, in the background; queries then read them without building', async () => {
  const accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${DATABASE}.downloads`)).map((r) => r.a);
  service = await startService({ CUBE_ROLLUP_REFRESH_SECONDS: '1', RESULT_CACHE_MB: '0' }, { accounts: [ACCOUNT] });
  await request(service.app).get('/readyz').expect(200);
  // The start's catch-up built the missing tables (what the worker would have); the worker's own work is what follows.
  const before = await funnelTables();
  expect(before).toHaveLength(accounts.length + 1);

  // Rows added by other means than an import: no one tells the service; the funnel's hours follow them, and the
  // worker, seeing the account's refresh key turn, builds its table again (and the operator's).
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  expect(await oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE ip4 = ${PROBE_IP}`)).toBe(0);
  await oracle.command(`INSERT INTO ${DATABASE}.downloads (account_id, ip4, ts) VALUES ('${ACCOUNT}', ${PROBE_IP}, '${day(2)} 08:00:00')`);
  await oracle.command(
    `INSERT INTO ${DATABASE}.web_events (account_id, ip4, track_ts, se_category) VALUES ('${ACCOUNT}', ${PROBE_IP}, '${day(2)} 09:00:00', '')`,
  );
  // The hours made from both new rows (funnel_built records the counts each making read), then the account's and
  // the operator's tables built after them: a look between the two inserts makes hours from one row, and a table
  // built from those is not the answer this test waits for.
  const counted = async (table: string) => oracle.value(`SELECT count() FROM ${DATABASE}.${table} WHERE account_id = '${ACCOUNT}'`);
  const [downloads, webEvents] = [await counted('downloads'), await counted('web_events')];
  const deadline = Date.now() + 120_000;
  const poll = async (ready: () => Promise<boolean>) => {
    while (!(await ready()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
    return ready();
  };
  let madeAt = '';
  const made = async () => {
    const [row] = await oracle.rows<{ at: string }>(
      `SELECT toString(min(built)) AS at FROM ${ROLLUP_DATABASE}_sources.funnel_built WHERE account_id = '${ACCOUNT}' AND downloads = ${downloads} AND web_events = ${webEvents} HAVING count() > 0`,
    );
    madeAt = row?.at ?? '';
    return madeAt !== '';
  };
  expect(await poll(made)).toBe(true);
  const rebuilt = async () =>
    (await oracle.value(
      `SELECT count() FROM system.tables WHERE database = '${ROLLUP_DATABASE}' AND name LIKE 'web_events_from_podcast_funnel%' AND name NOT IN (${before.map((t) => `'${t}'`).join(', ')}) AND metadata_modification_time >= toDateTime(toDateTime64('${madeAt}', 6, 'UTC'))`,
    )) >= 2;
  expect(await poll(rebuilt)).toBe(true);

  const query = {
    measures: ['WebEventsFromPodcastFunnel.conversions'],
    dimensions: ['WebEventsFromPodcastFunnel.step'],
    timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
  };
  const built = await funnelTables();
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', service.accountKeys[ACCOUNT]).send({ query }).expect(200);
  const got = Object.fromEntries(
    (res.body.data as Record<string, string>[])
      .map((r): [string, number] => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])])
      .filter(([, n]) => n > 0),
  );
  const rows = await oracle.rows<{ k: string; v: string }>(
    funnelStepsSql(
      DATABASE,
      `account_id = '${ACCOUNT}'`,
      `t >= toDateTime64('${day(7)} 00:00:00', 3, 'UTC') AND t < toDateTime64('${day(0)} 00:00:00', 3, 'UTC')`,
    ),
  );
  const want = Object.fromEntries(rows.map((r): [string, number] => [r.k, Number(r.v)]).filter(([, n]) => n > 0));
  expect(want['Website Visit']).toBeGreaterThan(0);
  expect(got).toEqual(want);
  // The query found its table built: it built nothing.
  expect(await funnelTables()).toEqual(built);
}, 180_000);

it('stops when the service closes (Cube 0.33 leaves its timer running)', async () => {
  await service!.close();
  await oracle.command(`DROP DATABASE IF EXISTS ${ROLLUP_DATABASE} SYNC`);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  expect(await funnelTables()).toEqual([]);
}, 30_000);
