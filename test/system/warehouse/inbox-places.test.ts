import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/child';
import { startBuilt } from '../support/service';

/**
 * An import handed to a running service (`npm start` on a new directory, no demo data) gets places, with no command
 * but the start: the start loads the IP database (the run's small one, test/support/tiny-geo.ts) and builds its
 * dictionaries before it serves. Expected from the small database's networks: 128.232.0.0/16 is France (Testville,
 * "Tiny Net, Ltd."), 2001:630::/32 Japan (Testfurt, "Tiny Six"); 8.8.8.8 has an organisation ("Tiny Org") and no city.
 */

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
  const service = await startBuilt(dataDir, 'inbox-places-key-0123456789', { DEMO_DATA: 'false' });
  const sorted = (rows: Record<string, string>[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  try {
    const run = await promisify(execFile)(process.execPath, ['dist/warehouse/cli.js', 'import', '--account', 'acme', file], { cwd: ROOT, env: service.env });
    expect(run.stderr).toMatch(/handed to the running service/);
    expect(JSON.parse(run.stdout.trimEnd().split('\n').pop() ?? '')).toMatchObject({ outcome: 'imported', imported: REQUESTS.length });

    expect(sorted(await service.load({ measures: ['PodcastEvents.count'], dimensions: ['PodcastEvents.country', 'PodcastEvents.city'] }))).toEqual(
      sorted(REQUESTS.map(({ country, city }) => ({ 'PodcastEvents.country': country, 'PodcastEvents.city': city, 'PodcastEvents.count': '1' }))),
    );
    expect(sorted(await service.load({ measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.org'] }))).toEqual(
      sorted(REQUESTS.map(({ country, org }) => ({ 'Downloads.country': country, 'Downloads.org': org, 'Downloads.count': '1' }))),
    );
  } finally {
    await service.stop();
  }
  expect(service.log()).not.toContain('no IP database is loaded');
}, 300_000);
