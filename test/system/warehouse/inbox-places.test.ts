import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, freePort, ROOT } from '../support/child';

/**
 * An import handed to a running service (`npm start` on a new directory, no demo data) gets places, with no command
 * but the start: the start loads the IP database (the run's small one, test/support/tiny-geo.ts) and builds its
 * dictionaries before it serves. Expected from the small database's networks: 128.232.0.0/16 is France (Testville,
 * "Tiny Net, Ltd."), 2001:630::/32 Japan (Testfurt, "Tiny Six"); 8.8.8.8 has an organisation ("Tiny Org") and no city.
 */

const KEY = 'inbox-places-key-0123456789';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-inbox-places-'));
const dataDir = path.join(scratch, 'chdb');
const file = path.join(scratch, 'requests.ndjson');
const REQUESTS = [
  { ip: '128.232.132.8', country: 'France', city: 'Testville', org: 'Tiny Net, Ltd.' },
  { ip: '2001:630:212::1', country: 'Japan', city: 'Testfurt', org: 'Tiny Six' },
  { ip: '8.8.8.8', country: '', city: '', org: 'Tiny Org' },
];

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('an import through the inbox of a service started on a new directory gives each request and download its places', async () => {
  writeFileSync(
    file,
    REQUESTS.map(({ ip }, i) =>
      JSON.stringify({
        time: `2026-01-05T0${i}:00:00Z`,
        ip,
        method: 'GET',
        url: 'https://pfx.example-analytics.net/e/abc123/media.example.com/show/ep-001.mp3',
        userAgent: 'Spotify/8.9.36 iOS/17.4 (iPhone15,2)',
      }),
    ).join('\n'),
  );
  const port = await freePort();
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    CHDB_DATA_DIR: dataDir,
    API_KEYS_FILE: path.join(scratch, 'api-keys.json'),
    API_KEYS: KEY,
    DEMO_DATA: 'false',
  });
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const load = async (query: Record<string, unknown>) => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/data/load/`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Record<string, string>[] }).data;
  };
  const sorted = (rows: Record<string, string>[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  try {
    while (!log.includes('"msg":"ready"')) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before ready:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const run = await promisify(execFile)(process.execPath, ['dist/warehouse/cli.js', 'import', '--account', 'acme', file], { cwd: ROOT, env });
    expect(run.stderr).toMatch(/handed to the running service/);
    expect(JSON.parse(run.stdout.trimEnd().split('\n').pop() ?? '')).toMatchObject({ outcome: 'imported', imported: REQUESTS.length });

    expect(sorted(await load({ measures: ['PodcastEvents.count'], dimensions: ['PodcastEvents.country', 'PodcastEvents.city'] }))).toEqual(
      sorted(REQUESTS.map(({ country, city }) => ({ 'PodcastEvents.country': country, 'PodcastEvents.city': city, 'PodcastEvents.count': '1' }))),
    );
    expect(sorted(await load({ measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.org'] }))).toEqual(
      sorted(REQUESTS.map(({ country, org }) => ({ 'Downloads.country': country, 'Downloads.org': org, 'Downloads.count': '1' }))),
    );
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  expect(log).not.toContain('no IP database is loaded');
}, 300_000);
