/**
 * Imports show in both APIs with every cache on: the result cache in front
 * of Cube, Cube's own cache and its refresh keys.
 * An import handed to the running service (the command's inbox, as with
 * `npm start` on chDB) shows as soon as the command returns; an import made
 * by another process (the command against a ClickHouse server) shows once
 * the service has looked for imports (DATA_REFRESH_SECONDS) and rebuilt.
 * Answers before the import are asked twice first, so each cache holds
 * them. Expected figures come from direct SQL over the same tables after
 * the import.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { importFile } from '../../../src/warehouse/import/import';
import { handOff } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { DATABASE } from '../support/constants';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';
import { daysAgo } from '../support/days';
import { dataOf, load } from '../support/api';

const db = DATABASE;
/** Yesterday (UTC): inside the funnel's "last 7 days". */
const DAY = daysAgo(1);
const REQUESTS = 12;

let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

/** A file of its own for an account of its own: one GET a listener address, each at its own hour, so one download each by every rule. */
function requestsFile(account: string, firstAddress: number): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'follow-')), `${account}.ndjson`);
  const lines = Array.from({ length: REQUESTS }, (_, i) =>
    JSON.stringify({
      time: `${DAY}T${String(i + 1).padStart(2, '0')}:15:00Z`,
      ip: `203.0.113.${firstAddress + i}`,
      method: 'GET',
      url: `${TRACKING_PREFIX}follow01/media.example.com/show/ep-${i % 3}.mp3`,
      userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Takes the import's rows out again and has the service follow that as it follows an import. */
async function removeImport(service: TestService, account: string, file: string): Promise<void> {
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  for (const table of ['downloads', 'podcast_events']) {
    await oracle.command(`ALTER TABLE ${db}.${table} DELETE WHERE account_id = '${account}' SETTINGS mutations_sync = 2`);
  }
  await oracle.command(`ALTER TABLE ${db}.imports DELETE WHERE file = '${file}' SETTINGS mutations_sync = 2`);
  await service.cube.dataChanged([{ account }]);
}

const byCountry = { measures: ['Downloads.count'], dimensions: ['Downloads.country'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [DAY, DAY] }] };
const funnel = {
  measures: ['WebEventsFromPodcastFunnel.conversions'],
  dimensions: ['WebEventsFromPodcastFunnel.step'],
  timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
};

type Rows = Record<string, string>[];
const countries = (rows: Rows) => Object.fromEntries(rows.map((r) => [r['Downloads.country'], Number(r['Downloads.count'])]));
const steps = (rows: Rows) =>
  Object.fromEntries(
    rows
      .filter((r) => Number(r['WebEventsFromPodcastFunnel.conversions']) > 0)
      .map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])]),
  );

/** The account's downloads by country on DAY and its funnel, through both APIs. */
async function answers(service: TestService, account: string) {
  const key = service.accountKeys[account];
  const v1 = (query: Record<string, unknown>) => dataOf<Rows[number]>(load(service, query, { key }));
  const cubeApi = (query: Record<string, unknown>) => dataOf<Rows[number]>(load(service, query, { key, api: 'cubejs' }));
  return {
    v1: { countries: countries(await v1(byCountry)), steps: steps(await v1(funnel)) },
    cubeApi: { countries: countries(await cubeApi(byCountry)), steps: steps(await cubeApi(funnel)) },
  };
}

async function direct(account: string) {
  const rows = await oracle.rows<{ country: string; n: string }>(
    `SELECT country, count() AS n FROM ${db}.downloads WHERE account_id = '${account}' AND toDate(ts) = '${DAY}' GROUP BY country`,
  );
  // The funnel's first step: listeners of the account that downloaded in the range (IPv4 addresses here; see query-language/funnel.suite.ts).
  const listeners = await oracle.value(
    `SELECT uniqExact(ip4) FROM ${db}.downloads WHERE account_id = '${account}' AND toDate(ts) BETWEEN '${daysAgo(7)}' AND '${daysAgo(1)}'`,
  );
  const both = { countries: Object.fromEntries(rows.map((r) => [r.country, Number(r.n)])), steps: listeners > 0 ? { 'Podcast Download': listeners } : {} };
  return { v1: both, cubeApi: both };
}

/** Asks until the caches hold the answers from before the import, which show the account without rows. */
async function cachedBefore(service: TestService, account: string): Promise<void> {
  const before = await direct(account);
  expect(before.v1).toEqual({ countries: {}, steps: {} });
  // Twice: the second answer comes from the caches.
  expect(await answers(service, account)).toEqual(before);
  expect(await answers(service, account)).toEqual(before);
}

async function expectImported(account: string) {
  const after = await direct(account);
  expect(after.v1.steps).toEqual({ 'Podcast Download': REQUESTS });
  expect(Object.values(after.v1.countries).reduce((a, b) => a + b, 0)).toBe(REQUESTS);
  return after;
}

describe('an import handed to the running service', () => {
  const PROBE = 'import-follow-probe';
  /** An account the import does not touch. */
  const OTHER = 'northwind-audio';
  const file = requestsFile(PROBE, 10);
  let service: TestService;
  beforeAll(async () => {
    service = await startService({}, { accounts: [PROBE, OTHER], importInbox: true });
  }, 120_000);
  afterAll(async () => {
    await removeImport(service, PROBE, file);
    await service.close();
  }, 120_000);

  it('is in both APIs’ answers when the command returns, caches included', async () => {
    await cachedBefore(service, PROBE);
    const summary = await handOff(
      testDataDir(),
      file,
      { format: 'ndjson', account: PROBE, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() },
      () => {},
    );
    // The start of its first request's day: no download before it changed.
    expect(summary).toMatchObject({
      outcome: 'imported',
      imported: REQUESTS,
      downloads: REQUESTS,
      accounts: [PROBE],
      since: Date.parse(`${DAY}T00:00:00Z`) / 1000,
    });
    const after = await expectImported(PROBE);
    // No wait: the bound is the command's return.
    expect(await answers(service, PROBE)).toEqual(after);
  }, 180_000);

  it('a second import into the account: its answers include both, and another account’s stay', async () => {
    const other = await answers(service, OTHER);
    const second = requestsFile(PROBE, 100);
    try {
      const summary = await handOff(
        testDataDir(),
        second,
        { format: 'ndjson', account: PROBE, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() },
        () => {},
      );
      expect(summary).toMatchObject({ outcome: 'imported', accounts: [PROBE] });
      const after = await direct(PROBE);
      expect(after.v1.steps).toEqual({ 'Podcast Download': 2 * REQUESTS });
      expect(await answers(service, PROBE)).toEqual(after);
      expect(await answers(service, OTHER)).toEqual(other);
    } finally {
      await oracle.command(`ALTER TABLE ${db}.imports DELETE WHERE file = '${second}' SETTINGS mutations_sync = 2`);
    }
  }, 180_000);
});

describe('an import made by another process', () => {
  const PROBE = 'import-follow-elsewhere';
  const DATA_REFRESH_SECONDS = 2;
  const file = requestsFile(PROBE, 40);
  let service: TestService;
  const followed: string[] = [];
  beforeAll(async () => {
    service = await startService(
      { DATA_REFRESH_SECONDS: String(DATA_REFRESH_SECONDS) },
      {
        accounts: [PROBE],
        log: (line) => {
          if (line.includes('answers follow the imports made elsewhere')) followed.push(line);
        },
      },
    );
  }, 120_000);
  afterAll(async () => {
    await removeImport(service, PROBE, file);
    await service.close();
  }, 120_000);

  it('is in both APIs’ answers once the service has looked for imports and rebuilt', async () => {
    await cachedBefore(service, PROBE);
    // What `npm run warehouse -- import` does against a server: the import runs in its own process, not the service's.
    const connection = createChdbConnection({ path: testDataDir() });
    const summary = await importFile(createClient({ connection: connection as never }), file, {
      database: db,
      format: 'ndjson',
      account: PROBE,
      maxBadRows: 0,
      ignoreUnknown: false,
      trackingPrefix: TRACKING_PREFIX,
      rejectsDir: os.tmpdir(),
      engineReadsFiles: false,
      derivation: { settings: service.config.downloads, userAgents: loadUserAgents(service.config.downloads.userAgentsDir) },
    }).finally(() => connection.close());
    expect(summary).toMatchObject({ outcome: 'imported', imported: REQUESTS, downloads: REQUESTS });
    const after = await expectImported(PROBE);
    // The service says when it has followed the import: its next look, DATA_REFRESH_SECONDS at most, then the rebuild.
    const imported = Date.now();
    while (followed.length === 0 && Date.now() - imported < 60_000) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(followed).toEqual([expect.stringContaining(PROBE)]);
    // From then on, no wait.
    expect(await answers(service, PROBE)).toEqual(after);
  }, 180_000);
});
