/**
 * Erasure (`npm run warehouse -- forget`) handed to a running service, as
 * on chDB with `npm start`: two accounts of their own, imported from files
 * this suite writes, one listener address in both, an IPv6 listener of two
 * addresses in one /64. What an erasure must remove is counted first by
 * hand-written SQL (the oracle), and the answers of both APIs must move by
 * exactly those rows.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ACCOUNT_TABLES, addressTables } from '../../../src/warehouse/ddl';
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { ErasureRefused, forget, type Erasure, type ErasureSummary } from '../../../src/warehouse/forget';
import { handOff, handOffErasure } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { dataOf, load } from '../support/api';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { daysAgo } from '../support/days';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
const DAY = daysAgo(1);
const PROBE = 'forget-probe';
const OTHER = 'forget-other';
/** In both accounts' files. */
const LISTENER = '198.51.100.7';
/** Two addresses of one IPv6 listener (one /64), in PROBE's file; and a neighbour /64 that stays. */
const LISTENER6 = ['2001:db8:42:7::1', '2001:db8:42:7:abcd::9'];
const NEIGHBOUR6 = '2001:db8:42:8::1';
const UA = 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'forget-'));

/** A request per address and episode, each at its own minute of DAY. */
function requestsFile(name: string, listens: { ip: string; episode: number }[]): string {
  const file = path.join(scratch, `${name}.ndjson`);
  const lines = listens.map(({ ip, episode }, i) =>
    JSON.stringify({
      time: `${DAY}T02:${String(i).padStart(2, '0')}:00Z`,
      ip,
      method: 'GET',
      url: `${TRACKING_PREFIX}forget01/media.example.com/show/ep-${episode}.mp3`,
      userAgent: UA,
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Page views after the downloads (the funnel's visits), from the Snowplow sample's first event with the address and time changed. */
function webEventsFile(name: string, ips: string[]): string {
  const template = JSON.parse(readFileSync(path.join(__dirname, '../../../samples/web-events.snowplow.ndjson'), 'utf8').split('\n')[0]) as Record<
    string,
    unknown
  >;
  const file = path.join(scratch, `${name}.ndjson`);
  const lines = ips.map((ip, i) => {
    const at = `${DAY}T05:${String(i).padStart(2, '0')}:00.000Z`;
    return JSON.stringify({
      ...template,
      event_id: `3a1f6e52-7c1d-4e8a-9b3f-${String(900_000_000_000 + i)}`,
      user_ipaddress: ip,
      collector_tstamp: at,
      derived_tstamp: at,
      dvce_created_tstamp: at,
      dvce_sent_tstamp: at,
      etl_tstamp: at,
    });
  });
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const others = Array.from({ length: 6 }, (_, i) => `198.51.100.${20 + i}`);
const probeRequests = requestsFile(PROBE, [
  ...[0, 1, 2].map((episode) => ({ ip: LISTENER, episode })),
  ...LISTENER6.map((ip) => ({ ip, episode: 0 })),
  { ip: NEIGHBOUR6, episode: 0 },
  ...others.map((ip, i) => ({ ip, episode: i % 3 })),
]);
const otherRequests = requestsFile(OTHER, [
  { ip: LISTENER, episode: 0 },
  { ip: LISTENER, episode: 1 },
  ...others.slice(0, 3).map((ip) => ({ ip, episode: 2 })),
]);
const probeVisits = webEventsFile(`${PROBE}-web`, [LISTENER, LISTENER, ...others.slice(0, 2)]);

let oracle: Oracle;
let service: TestService;

const job = (account: string, source = 'requests', format = 'ndjson') => ({
  source,
  format,
  account,
  maxBadRows: 0,
  ignoreUnknown: false,
  rejectsDir: scratch,
});
const erase = (erasure: Erasure): Promise<ErasureSummary> => handOffErasure(testDataDir(), erasure, () => {});

/** Rows per table where `where` holds: every table of an account's rows, or those with an address (an `ip` column). */
async function counts(where: string, tables: readonly string[] = ACCOUNT_TABLES): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) out[table] = await oracle.value(`SELECT count() FROM ${db}.${table} WHERE ${where}`);
  return out;
}

/** The tables of an account's rows that hold an address, as the warehouse has them (not as ddl.ts declares them). */
let addressed: string[] = [];
const none = (tables: readonly string[]) => Object.fromEntries(tables.map((t) => [t, 0]));

/**
 * Rows of an IPv4 address in every column of an address type of every table of the warehouse's database and the
 * rollups' (whatever declares them), by table and column.
 */
async function everywhere(ip: string): Promise<Record<string, number>> {
  const columns = await oracle.rows<{ database: string; table: string; name: string; type: string }>(
    `SELECT database, table, name, type FROM system.columns WHERE database IN ('${db}', '${ROLLUP_DATABASE}') AND type IN ('IPv4', 'IPv6') ORDER BY database, table, name`,
  );
  const out: Record<string, number> = {};
  for (const c of columns) {
    const value = c.type === 'IPv4' ? `toIPv4('${ip}')` : `toIPv6('::ffff:${ip}')`;
    out[`${c.database}.${c.table}.${c.name}`] = await oracle.value(`SELECT count() FROM ${c.database}.${c.table} WHERE ${c.name} = ${value}`);
  }
  return out;
}

/** The oracle's address match, written apart from the service's: an IPv4 address itself, an IPv6 address's first 64 bits. */
const ipv4 = (ip: string) => `ip = toIPv6('::ffff:${ip}')`;
const slash64 = (ip: string) => `cutIPv6(ip, 8, 0) = cutIPv6(toIPv6('${ip}'), 8, 0) AND NOT startsWith(toString(ip), '::ffff:')`;

type Rows = Record<string, string>[];
async function answers(account: string) {
  const key = service.accountKeys[account];
  const one = async (measure: string, time: string) =>
    Number(
      (await dataOf<Rows[number]>(load(service, { measures: [measure], timeDimensions: [{ dimension: time, dateRange: [DAY, DAY] }] }, { key })))[0]?.[
        measure
      ] ?? 0,
    );
  const funnel = await dataOf<Rows[number]>(
    load(
      service,
      {
        measures: ['WebEventsFromPodcastFunnel.conversions'],
        dimensions: ['WebEventsFromPodcastFunnel.step'],
        timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
      },
      { key },
    ),
  );
  return {
    downloads: await one('Downloads.count', 'Downloads.ts'),
    requests: await one('PodcastEvents.count', 'PodcastEvents.ts'),
    steps: Object.fromEntries(funnel.map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])])),
  };
}

beforeAll(async () => {
  oracle = openOracle();
  addressed = (
    await oracle.rows<{ table: string }>(
      `SELECT table FROM system.columns WHERE database = '${db}' AND name = 'ip' AND table IN (${ACCOUNT_TABLES.map((t) => `'${t}'`).join(', ')}) ORDER BY table`,
    )
  ).map((row) => row.table);
  service = await startService({}, { accounts: [PROBE, OTHER], importInbox: true });
  for (const [file, account, source, format] of [
    [probeRequests, PROBE, 'requests', 'ndjson'],
    [otherRequests, OTHER, 'requests', 'ndjson'],
    [probeVisits, PROBE, 'web-events', 'snowplow-json'],
  ]) {
    const summary = await handOff(testDataDir(), file, job(account, source, format), () => {});
    // The reject file says why, when the file is refused.
    if (summary.outcome !== 'imported') throw new Error(`${file}: ${summary.rejectFile ? readFileSync(summary.rejectFile, 'utf8') : summary.outcome}`);
  }
}, 180_000);

afterAll(async () => {
  for (const account of [PROBE, OTHER]) await erase({ kind: 'account', account });
  await service.close();
  oracle.close();
  rmSync(scratch, { recursive: true, force: true });
}, 180_000);

describe('forget --address', () => {
  it('removes an IPv4 listener’s rows of every account, and the answers move by exactly them', async () => {
    const before = { probe: await answers(PROBE), other: await answers(OTHER) };
    const theirs = await counts(ipv4(LISTENER), addressed);
    const probeTheirs = await counts(`${ipv4(LISTENER)} AND account_id = '${PROBE}'`, addressed);
    const otherTheirs = await counts(`${ipv4(LISTENER)} AND account_id = '${OTHER}'`, addressed);
    const rest = await counts(`NOT (${ipv4(LISTENER)})`, addressed);
    // The files put the listener in both accounts and every addressed table.
    expect(theirs).toMatchObject({ podcast_events: 5, web_events: 2 });
    expect(theirs.downloads).toBeGreaterThan(0);
    expect(otherTheirs.downloads).toBeGreaterThan(0);
    const columns = await everywhere(LISTENER);
    expect(Object.values(columns).some((n) => n > 0)).toBe(true);

    const summary = await erase({ kind: 'address', address: LISTENER });
    expect(summary).toMatchObject({ kind: 'address', removed: theirs, accounts: [OTHER, PROBE].sort() });
    expect(await counts(ipv4(LISTENER), addressed)).toEqual(none(addressed));
    expect(await counts(`NOT (${ipv4(LISTENER)})`, addressed)).toEqual(rest);
    // Nor in any other column of an address type, in any table of the warehouse or the rollups.
    expect(await everywhere(LISTENER)).toEqual(Object.fromEntries(Object.keys(columns).map((column) => [column, 0])));

    // When the command returns, both accounts' answers are down by exactly the listener's rows (one listener fewer in the funnel).
    const after = { probe: await answers(PROBE), other: await answers(OTHER) };
    expect(after.probe.downloads).toBe(before.probe.downloads - probeTheirs.downloads);
    expect(after.probe.requests).toBe(before.probe.requests - probeTheirs.podcast_events);
    expect(after.other.downloads).toBe(before.other.downloads - otherTheirs.downloads);
    expect(after.other.requests).toBe(before.other.requests - otherTheirs.podcast_events);
    expect(after.probe.steps['Podcast Download']).toBe(before.probe.steps['Podcast Download'] - 1);
    expect(after.probe.steps['Website Visit']).toBe(before.probe.steps['Website Visit'] - 1);
  }, 180_000);

  it('removes an IPv6 listener by its /64, of the account named only', async () => {
    const listener = `${slash64(LISTENER6[0])} AND account_id = '${PROBE}'`;
    const theirs = await counts(listener, addressed);
    expect(theirs).toMatchObject({ podcast_events: 2, downloads: 1 });
    const rest = await counts(`NOT (${listener})`, addressed);
    // Any address of the /64 names it.
    const summary = await erase({ kind: 'address', address: '2001:db8:42:7:ffff::1', account: PROBE });
    expect(summary.removed).toEqual(theirs);
    expect(await counts(listener, addressed)).toEqual(none(addressed));
    // The neighbouring /64 stays, and every other row.
    expect(await counts(`NOT (${listener})`, addressed)).toEqual(rest);
    expect((await counts(`ip = toIPv6('${NEIGHBOUR6}')`, addressed)).podcast_events).toBe(1);
  }, 180_000);

  it('reads an IPv4 address written as IPv6 (::ffff:a.b.c.d) as the IPv4 address, not as its /64 (every IPv4 address)', async () => {
    const listener = `${ipv4(others[0])} AND account_id = '${PROBE}'`;
    const theirs = await counts(listener, addressed);
    expect(theirs.podcast_events).toBe(1);
    const rest = await counts(`NOT (${listener})`, addressed);
    expect(rest.podcast_events).toBeGreaterThan(1);
    const summary = await erase({ kind: 'address', address: `::ffff:${others[0]}`, account: PROBE });
    expect(summary.removed).toEqual(theirs);
    expect(await counts(`NOT (${listener})`, addressed)).toEqual(rest);
  }, 180_000);

  it('records each erasure with what it removed, and nothing of whom', async () => {
    const records = await oracle.rows<Record<string, unknown>>(`SELECT * FROM ${db}.erasures WHERE kind = 'address' ORDER BY at, id`);
    expect(records.length).toBeGreaterThanOrEqual(2);
    const text = JSON.stringify(records);
    for (const trace of [LISTENER, ...LISTENER6, '2001:db8:42:7', String(3325256711) /* 198.51.100.7 as a number */, PROBE, OTHER]) {
      expect(text).not.toContain(trace);
    }
  });

  it('refuses what is not an address, erasing nothing', async () => {
    const before = await counts('true');
    await expect(erase({ kind: 'address', address: '198.51.100' })).rejects.toThrow(ErasureRefused);
    await expect(erase({ kind: 'address', address: '198.51.100' })).rejects.toThrow(/--address: expected an IPv4 or IPv6 address/);
    expect(await counts('true')).toEqual(before);
  }, 60_000);
});

describe('forget --account', () => {
  it('removes every row and import record of the account, refuses its keys, and takes its files again', async () => {
    const otherBefore = await counts(`account_id = '${OTHER}'`);
    expect((await counts(`account_id = '${PROBE}'`)).podcast_events).toBeGreaterThan(0);
    const summary = await erase({ kind: 'account', account: PROBE });
    expect(summary).toMatchObject({ kind: 'account', accounts: [PROBE], imports: { removed: 2, kept: 0 }, keysRevoked: 1 });
    expect(await counts(`account_id = '${PROBE}'`)).toEqual(none(ACCOUNT_TABLES));
    expect(await oracle.value(`SELECT count() FROM ${db}.imports WHERE has(accounts, '${PROBE}')`)).toBe(0);
    expect(await counts(`account_id = '${OTHER}'`)).toEqual(otherBefore);

    // Its key is refused as a revoked key is; the other account's is not.
    const query = { measures: ['Downloads.count'] };
    await load(service, query, { key: service.accountKeys[PROBE] }).expect(401);
    await load(service, query, { key: service.accountKeys[OTHER] }).expect(200);

    // The same file is imported again, whole.
    const again = await handOff(testDataDir(), probeRequests, job(PROBE), () => {});
    expect(again).toMatchObject({ outcome: 'imported', imported: readFileSync(probeRequests, 'utf8').trim().split('\n').length });
  }, 180_000);
});

describe('forget made by another process (the command against a ClickHouse server)', () => {
  const ELSEWHERE = 'forget-elsewhere';
  let follower: TestService;
  const followed: string[] = [];
  beforeAll(async () => {
    follower = await startService(
      { DATA_REFRESH_SECONDS: '1' },
      { accounts: [ELSEWHERE], log: (line) => line.includes('answers follow the erasures made elsewhere') && followed.push(line) },
    );
  }, 120_000);
  afterAll(() => follower.close(), 60_000);

  it('revokes the account’s keys once the service has looked for erasures', async () => {
    const query = { measures: ['Downloads.count'] };
    await load(follower, query, { key: follower.accountKeys[ELSEWHERE] }).expect(200);
    // The command erases on its own, apart from the service.
    const connection = createChdbConnection({ path: testDataDir() });
    const summary = await forget(createClient({ connection: connection as never }), db, { kind: 'account', account: ELSEWHERE }).finally(() =>
      connection.close(),
    );
    expect(summary).toMatchObject({ kind: 'account', accounts: [] });
    const erased = Date.now();
    while (followed.length === 0 && Date.now() - erased < 30_000) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(followed).toHaveLength(1);
    await load(follower, query, { key: follower.accountKeys[ELSEWHERE] }).expect(401);
  }, 120_000);
});

// A table of an account's rows with an address that ddl.ts does not declare would keep a listener's rows after an erasure.
it('erases by address in every table of an account’s rows that holds one', () => {
  expect(
    addressTables()
      .map((t) => t.table)
      .sort(),
  ).toEqual(addressed);
  expect(addressed.length).toBeGreaterThan(0);
});
