import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, ROOT } from '../support/child';

/**
 * A corrected chart's import killed with SIGKILL, for real, at each of its steps: `node dist/warehouse/cli.js import
 * --source charts` in a child process, killed once it says it validates, moves its positions in, or has replaced the
 * stored ones. After the next import (whose start finishes or undoes the killed one), the snapshot holds either the
 * positions stored before or the corrected ones, whole, never both and never none, and no import is left unfinished.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-import-charts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SAMPLES = path.join(ROOT, 'samples');
/** charts.apple.json's five US shows, and the same chart corrected: its last two and first one, in that order. */
const STORED = ['1500000001', '1500000002', '1500000003', '1500000004', '1500000005'];
const CORRECTED = ['1500000004', '1500000005', '1500000001'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runImport(dataDir: string, args: string[], killAt?: RegExp): Promise<Run> {
  const env = childEnv({ NODE_ENV: 'development', LOG_LEVEL: 'info', CHDB_DATA_DIR: dataDir, DEMO_DATA: 'false' });
  const child = spawn(process.execPath, ['dist/warehouse/cli.js', 'import', '--source', 'charts', ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (killAt?.test(stderr)) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The US snapshot's podcast ids by rank, and the imports with no done record, by direct SQL in a child of its own (libchdb binds one directory per process). */
async function snapshot(dataDir: string): Promise<{ ids: string[]; unfinished: number }> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    (async () => {
      const c = createClient({ connection: createChdbConnection({ path: process.argv[1] }) });
      const rows = async (query) => (await c.query({ query, format: 'JSONEachRow' })).json();
      const ids = await rows("SELECT podcast_id AS id FROM analytics.channel_ranks WHERE country_code = 'us' ORDER BY rank");
      const [imports] = await rows("SELECT toString(countIf(NOT finished)) AS n FROM (SELECT countIf(state = 'done') > 0 AS finished FROM analytics.imports GROUP BY id)");
      process.stdout.write(JSON.stringify({ ids: ids.map((r) => r.id), unfinished: Number(imports.n) }));
      process.exit(0);
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, dataDir], { cwd: ROOT });
  return JSON.parse(stdout) as { ids: string[]; unfinished: number };
}

const corrected = path.join(scratch, 'corrected.json');
beforeAll(() => {
  const feed = JSON.parse(readFileSync(path.join(SAMPLES, 'charts.apple.json'), 'utf8')) as { feed: { results: { id: string }[] } };
  const results = CORRECTED.map((id) => feed.feed.results.find((r) => r.id === id));
  writeFileSync(corrected, JSON.stringify({ feed: { ...feed.feed, results } }));
});

it.each([
  ['while it validates', /reading and validating/],
  ['once it moves its positions in', /moving 3 valid rows into channel_ranks/],
  ['once it has replaced the stored ones', /rows stored before replaced by its own/],
])(
  'killed %s: after the next import, the snapshot is the stored or the corrected one, whole',
  async (_, killAt) => {
    const dataDir = path.join(scratch, `data-${killAt.source.replace(/\W+/g, '-')}`);
    expect((await runImport(dataDir, ['--format', 'apple-charts', path.join(SAMPLES, 'charts.apple.json')])).code).toBe(0);
    const killed = await runImport(dataDir, ['--format', 'apple-charts', corrected], killAt);
    // The last step may end before the signal lands: then the import is done, and so is the test's question.
    expect([null, 0]).toContain(killed.code);
    const next = await runImport(dataDir, ['--format', 'ndjson', path.join(SAMPLES, 'charts.ndjson')]);
    expect(next.code).toBe(0);
    const after = await snapshot(dataDir);
    expect([STORED, CORRECTED]).toContainEqual(after.ids);
    expect(after.unfinished).toBe(0);
    // The corrected chart again: done whatever the kill left, it is the snapshot.
    expect((await runImport(dataDir, ['--format', 'apple-charts', corrected])).code).toBe(0);
    expect((await snapshot(dataDir)).ids).toEqual(CORRECTED);
  },
  180_000,
);

it('what a Spotify chart does not say, the command does; a source that takes none of it refuses it as a usage error', async () => {
  const dataDir = path.join(scratch, 'data-given');
  const spotify = path.join(SAMPLES, 'charts.spotify.json');
  const run = await runImport(dataDir, ['--format', 'spotify-charts', '--country', 'de', '--category', 'Comedy', '--date', '2026-01-05', spotify]);
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout.trimEnd().split('\n').pop() ?? '')).toMatchObject({ source: 'charts', outcome: 'imported', imported: 4, accounts: [] });
  const env = childEnv({ NODE_ENV: 'development', CHDB_DATA_DIR: dataDir, DEMO_DATA: 'false' });
  const requests = spawnSync(process.execPath, ['dist/warehouse/cli.js', 'import', '--country', 'de', spotify], { cwd: ROOT, env, encoding: 'utf8' });
  expect(requests.status).toBe(2);
  expect(requests.stderr).toContain('--category, --country, --date');
}, 120_000);
