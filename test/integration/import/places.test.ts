/**
 * Imported requests get their places from the IP database: a file handed to
 * the running service (as the import command does while `npm start` runs)
 * answers "downloads by country, city and org" and "requests by country"
 * with the places the database's own files give each address, read here by
 * an independent oracle: mmdb-lib over the same city MMDB files, the AS
 * ranges scanned from the same CSV, and countries-list's JSON for names and
 * continents (the load reads its CSV). An address no database knows stays
 * empty. Loading the database takes minutes on a busy machine: once, and
 * not again if another test of the run loaded it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { continents, countries } from 'countries-list';
import { Reader } from 'mmdb-lib';
import request from 'supertest';
import { openWarehouse } from '../../../src/warehouse/connection';
import { ensureGeo } from '../../../src/warehouse/geo/load';
import { geoFiles } from '../../../src/warehouse/geo/sources';
import { handOff } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';

const db = DATABASE;
/** An account of its own, whose rows this test imports and removes. */
const PROBE = 'import-places-probe';
const DAY = '2001-03-05';

/**
 * National universities' and research networks' blocks (see geo.test.ts),
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
const FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'places-')), 'places.ndjson');
const LOAD_TIMEOUT_MS = 1_800_000;

let service: TestService;
let oracle: Oracle;

beforeAll(async () => {
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  try {
    await ensureGeo(warehouse, undefined);
  } finally {
    await warehouse.close();
  }
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
  service = await startService({}, { accounts: [PROBE], importInbox: true });
  oracle = openOracle();
}, LOAD_TIMEOUT_MS);

afterAll(async () => {
  await service.close();
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites both.
  for (const table of ['downloads', 'podcast_events']) {
    await oracle.command(`ALTER TABLE ${db}.${table} DELETE WHERE account_id = '${PROBE}' SETTINGS mutations_sync = 2`);
  }
  await oracle.command(`ALTER TABLE ${db}.imports DELETE WHERE file = '${FILE}' SETTINGS mutations_sync = 2`);
  await oracle.close();
});

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

type Rows = Record<string, string>[];
async function load(query: Record<string, unknown>): Promise<Rows> {
  const res = await request(service.app).post('/v1/data/load/').set('x-api-key', service.accountKeys[PROBE]).send({ query });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Rows;
}

function tally<T>(items: T[], keyOf: (item: T) => string, countOf: (item: T) => number = () => 1): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[keyOf(item)] = (out[keyOf(item)] ?? 0) + countOf(item);
  return out;
}

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
  const downloads = await load({
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

  const requests = await load({
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
