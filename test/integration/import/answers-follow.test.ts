/**
 * An import into the running service (the command's hand-off through the
 * inbox, as with `npm start`) shows in both APIs as soon as the command
 * returns, with every cache on: the result cache in front of Cube, Cube's own
 * cache and its refresh keys, and the funnel's rollup. Answers before the
 * import are asked twice first, so each cache holds them. Expected figures
 * come from direct SQL over the same tables after the import.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { handOff } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { DATABASE } from '../support/constants';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
/** An account of its own, whose rows this test imports and removes. */
const PROBE = 'import-follow-probe';
const DAY_MS = 86_400_000;
/** Yesterday (UTC): inside the funnel's "last 7 days" and its rollup. */
const DAY = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
const FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'follow-')), 'follow.ndjson');

let service: TestService;
let oracle: Oracle;

beforeAll(async () => {
  // One GET a listener address, each at its own hour: one download each, by every rule and window.
  const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({
    time: `${DAY}T${String(i + 1).padStart(2, '0')}:15:00Z`,
    ip: `203.0.113.${i + 10}`,
    method: 'GET',
    url: `${TRACKING_PREFIX}follow01/media.example.com/show/ep-${i % 3}.mp3`,
    userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
  }));
  writeFileSync(FILE, `${lines.join('\n')}\n`);
  service = await startService({}, { accounts: [PROBE], importInbox: true });
  oracle = openOracle();
}, 120_000);

afterAll(async () => {
  await service.close();
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  for (const table of ['downloads', 'podcast_events']) {
    await oracle.command(`ALTER TABLE ${db}.${table} DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
  }
  await oracle.command(`ALTER TABLE ${db}.imports DELETE WHERE file = '${FILE}' SETTINGS mutations_sync = 2`);
  await oracle.close();
});

const byCountry = { measures: ['Downloads.count'], dimensions: ['Downloads.country'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [DAY, DAY] }] };
const funnel = {
  measures: ['WebEventsFromPodcastFunnel.conversions'],
  dimensions: ['WebEventsFromPodcastFunnel.step'],
  timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
};

type Rows = Record<string, string>[];
async function v1(query: Record<string, unknown>): Promise<Rows> {
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', service.accountKeys[PROBE]).send({ query });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Rows;
}
async function cubeApi(query: Record<string, unknown>): Promise<Rows> {
  const res = await request(service.app).post('/cubejs-api/v1/load').set('authorization', service.accountKeys[PROBE]).send({ query });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Rows;
}

const countries = (rows: Rows) => Object.fromEntries(rows.map((r) => [r['Downloads.country'], Number(r['Downloads.count'])]));
const steps = (rows: Rows) => Object.fromEntries(rows.filter((r) => Number(r['WebEventsFromPodcastFunnel.conversions']) > 0)
  .map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])]));

async function answers() {
  return {
    v1: { countries: countries(await v1(byCountry)), steps: steps(await v1(funnel)) },
    cubeApi: { countries: countries(await cubeApi(byCountry)), steps: steps(await cubeApi(funnel)) },
  };
}

async function direct() {
  const rows = await oracle.rows<{ country: string; n: string }>(
    `SELECT country, count() AS n FROM ${db}.downloads WHERE account_id = '${PROBE}' AND toDate(ts) = '${DAY}' GROUP BY country`);
  // The funnel's first step: listener addresses of the account that downloaded in the range (see funnel.test.ts).
  const listeners = await oracle.value(`SELECT uniqExact(ip4) FROM ${db}.downloads WHERE account_id = '${PROBE}' AND ts >= today() - 7 AND ts < today()`);
  const both = { countries: Object.fromEntries(rows.map((r) => [r.country, Number(r.n)])), steps: listeners > 0 ? { 'Podcast Download': listeners } : {} };
  return { v1: both, cubeApi: both };
}

it('an import through the running service is in both APIs’ answers when the command returns, caches and rollup included', async () => {
  const before = await direct();
  expect(before.v1).toEqual({ countries: {}, steps: {} });
  // Twice: the second answer comes from the caches, which now hold the answer from before.
  expect(await answers()).toEqual(before);
  expect(await answers()).toEqual(before);

  const summary = await handOff(testDataDir(), FILE, { format: 'ndjson', account: PROBE, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() }, () => {});
  expect(summary).toMatchObject({ outcome: 'imported', imported: 12, downloads: 12, accounts: [PROBE] });

  const after = await direct();
  expect(after.v1.steps).toEqual({ 'Podcast Download': 12 });
  expect(Object.values(after.v1.countries).reduce((a, b) => a + b, 0)).toBe(12);
  // No wait: the bound is the command's return.
  expect(await answers()).toEqual(after);
}, 180_000);
