import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, freePort, ROOT } from '../support/child';

/**
 * The demo build under faults, for real: the service's compiled start-up
 * (dist/index.js, what `npm start` runs) in child processes, because libchdb
 * binds one data directory per process. Expected rows come from a clean
 * build of the same seed, scale and end date in another directory, compared
 * per table by count and hash.
 */

const TABLES = ['channel_ranks', 'episode_ranks', 'podcast_events', 'downloads', 'link_views', 'web_events'];
// Large enough that the build runs for a few seconds after the first steps.
const DEMO = { DEMO_SCALE: '0.05', DEMO_DAYS: '30', DEMO_SEED: '11' };

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-demo-build-'));
const dir = (name: string) => path.join(scratch, name);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function serviceEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    CHDB_DATA_DIR: dataDir,
    API_KEYS_FILE: path.join(scratch, `keys-${path.basename(dataDir)}.json`),
    // A key of its own: with the demo key the start prints its banner on stderr, beside the failure line tested here.
    API_KEYS: 'demo-build-test-key-0123456789',
    ...DEMO,
    ...extra,
  });
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first stdout line matching, rejects when the process exits first. */
  line(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

async function startService(dataDir: string): Promise<Run> {
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env: serviceEnv(dataDir, { PORT: String(await freePort()) }) });
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`exited (${code}) before ${w.pattern}; stderr: ${err}`));
      resolve(code);
    }),
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of [...waiters]) {
      const found = out.split('\n').find((l) => w.pattern.test(l));
      if (found) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(found);
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    line: (pattern) => new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject })),
    exited,
  };
}

/**
 * Starts the service, waits for `until` in its log, then stops it with SIGTERM. By default that is the end of the
 * demo build, its last step ("demo data ready" comes after the marker is written), not "ready": the models' compile
 * after it (6 s a start, quiet) is no part of what these tests check, and before ready SIGTERM ends the process at once.
 */
async function startAndStop(dataDir: string, until = /"msg":"demo data ready"/): Promise<string> {
  const run = await startService(dataDir);
  await run.line(until);
  run.child.kill('SIGTERM');
  await run.exited;
  return run.stdout();
}

interface Fingerprint {
  databases: string[];
  marker: boolean;
  tables: Record<string, { n: string; h: string }>;
  movedAside: string[];
}

/** Per table count() and sum(cityHash64(*)), read by a child process of its own. */
async function fingerprint(dataDir: string): Promise<Fingerprint> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    (async () => {
      const c = createClient({ connection: createChdbConnection({ path: process.argv[1] }) });
      const rows = async (query) => (await c.query({ query, format: 'JSONEachRow' })).json();
      const names = (await rows("SELECT name FROM system.tables WHERE database = 'analytics'")).map((r) => r.name);
      const tables = {};
      for (const t of ${JSON.stringify(TABLES)}) {
        tables[t] = names.includes(t) ? (await rows('SELECT toString(count()) AS n, toString(sum(cityHash64(*))) AS h FROM analytics.' + t))[0] : null;
      }
      const databases = (await rows("SELECT name FROM system.databases WHERE name LIKE 'analytics%' ORDER BY name")).map((r) => r.name);
      process.stdout.write(JSON.stringify({ databases, marker: names.includes('demo_build'), tables, movedAside: names.filter((n) => n.includes('_before_')) }));
      process.exit(0);
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, dataDir], { cwd: ROOT });
  return JSON.parse(stdout) as Fingerprint;
}

/** SQL run on a data directory by a child process. */
async function runSql(dataDir: string, statements: string[]): Promise<void> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    (async () => {
      const c = createClient({ connection: createChdbConnection({ path: process.argv[1] }) });
      for (const query of JSON.parse(process.argv[2])) await c.command({ query });
      process.exit(0);
    })();`;
  await promisify(execFile)(process.execPath, ['-e', script, dataDir, JSON.stringify(statements)], { cwd: ROOT });
}

let clean: Fingerprint;
beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['dist/warehouse/cli.js', 'demo'], { cwd: ROOT, env: serviceEnv(dir('clean')) });
  clean = await fingerprint(dir('clean'));
}, 120_000);

describe('the demo build is all or nothing', () => {
  it('a clean build fills every table and marks itself complete', () => {
    expect(clean.marker).toBe(true);
    expect(clean.databases).toEqual(['analytics']);
    for (const table of TABLES) expect(Number(clean.tables[table].n)).toBeGreaterThan(0);
  });

  it('a start killed (-9) half way serves nothing, and the next start warns and ends with the clean rows', async () => {
    const killed = await startService(dir('killed'));
    await killed.line(/"msg":"demo data: podcast_events: /);
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(killed.stdout()).not.toContain('"msg":"demo data ready"');

    const halfWay = await fingerprint(dir('killed'));
    expect(halfWay.marker).toBe(false);
    expect(halfWay.databases).toContain('analytics_staging');
    for (const table of TABLES) expect(halfWay.tables[table]?.n).toBe('0');

    const log = await startAndStop(dir('killed'));
    expect(log).toMatch(/"level":"warn","msg":"incomplete demo data found; building it again".*analytics_staging/);
    const after = await fingerprint(dir('killed'));
    expect(after.tables).toEqual(clean.tables);
    expect(after.marker).toBe(true);
    // No staging left. Beside the warehouse only the service's own rollup database, there or not as the stop came
    // before or after its start made it.
    const serviceOwn = ['analytics_rollups'];
    expect(after.databases.filter((name) => !serviceOwn.includes(name))).toEqual(['analytics']);
  }, 180_000);

  it.each([
    ['without the marker (a half build in place, as before the staging build)', ['DROP TABLE analytics.demo_build SYNC']],
    ['with the marker', []],
  ])(
    'four of six tables empty, %s: the filled ones are moved aside and all built again',
    async (_, dropMarker) => {
      const dataDir = dir(`partial-${dropMarker.length}`);
      cpSync(dir('clean'), dataDir, { recursive: true });
      await runSql(dataDir, [...dropMarker, ...TABLES.slice(2).map((t) => `TRUNCATE TABLE analytics.${t}`)]);

      const log = await startAndStop(dataDir);
      expect(log).toMatch(
        /"level":"warn","msg":"incomplete demo data found; building it again".*tables with rows: channel_ranks, episode_ranks; empty or missing: podcast_events, downloads, link_views, web_events/,
      );
      const after = await fingerprint(dataDir);
      expect(after.tables).toEqual(clean.tables);
      expect(after.marker).toBe(true);
      expect(after.movedAside.sort()).toEqual([expect.stringMatching(/^channel_ranks_before_\d+$/), expect.stringMatching(/^episode_ranks_before_\d+$/)]);
    },
    180_000,
  );

  it('a finished build is served as it is on the next start', async () => {
    // Served: the whole start, to ready.
    const log = await startAndStop(dir('clean'), /"msg":"ready"/);
    expect(log).toContain('"msg":"demo data present"');
    expect(log).not.toContain('"msg":"demo data: ');
    expect((await fingerprint(dir('clean'))).tables).toEqual(clean.tables);
  }, 120_000);
});

/** One line on stderr, exit code 1, no stack frames. */
async function expectOneLineFailure(dataDir: string, message: RegExp): Promise<void> {
  const run = await startService(dataDir);
  expect(await run.exited).toBe(1);
  const lines = run.stderr().trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(run.stderr()).not.toMatch(/\n\s+at /);
}

/** A tmpfs mount, where the process may mount (root in a container with CAP_SYS_ADMIN); else undefined. */
function tmpfs(name: string, options: string): string | undefined {
  const mountPoint = dir(name);
  execFileSync('mkdir', ['-p', mountPoint]);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', mountPoint], { stdio: 'ignore' });
    return mountPoint;
  } catch {
    return undefined;
  }
}
const unmount = (mountPoint: string) => execFileSync('umount', [mountPoint]);

// Decided before the tests run, so a case that cannot run here is skipped with its reason, never passed.
const asRoot = process.getuid?.() === 0;
const tmpfsProbe = tmpfs('probe', 'size=1m');
if (tmpfsProbe) unmount(tmpfsProbe);
const tmpfsAvailable = tmpfsProbe !== undefined;
function itWhen(runs: boolean, reason: string): jest.It {
  if (runs) return it;
  process.stderr.write(`skipped: ${reason}\n`);
  return it.skip;
}

describe('an unusable data directory is one line naming it', () => {
  it('CHDB_DATA_DIR naming a file', async () => {
    const file = dir('a-file');
    writeFileSync(file, 'not a directory\n');
    await expectOneLineFailure(file, new RegExp(`^Failed to start: CHDB_DATA_DIR ${file} is not a directory`));
  }, 60_000);

  it('a data directory another process holds', async () => {
    const held = dir('held');
    const holder = spawn(
      process.execPath,
      ['-e', "require('chdb/connection').createChdbConnection({ path: process.argv[1] }); console.log('open'); setInterval(() => {}, 1000)", held],
      { cwd: ROOT },
    );
    try {
      await new Promise((resolve) => holder.stdout.once('data', resolve));
      const run = await startService(held);
      expect(await run.exited).toBe(1);
      // libchdb writes its own line about the lock before ours; nothing else follows.
      const lines = run.stderr().trimEnd().split('\n');
      expect(lines[lines.length - 1]).toMatch(
        new RegExp(`^Failed to start: CHDB_DATA_DIR ${held} could not be opened by chDB \\(is another process using it\\?\\)`),
      );
      expect(run.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 60_000);

  // Root writes through permission bits; a read-only file system stops it too.
  itWhen(!asRoot || tmpfsAvailable, 'a read-only data directory: running as root without permission to mount a read-only tmpfs')(
    'a read-only data directory',
    async () => {
      const readOnly = asRoot ? tmpfs('read-only', 'size=1m,ro') : dir('read-only');
      if (!readOnly) throw new Error('could not mount a read-only tmpfs, although a tmpfs mounted before the tests');
      if (!asRoot) {
        execFileSync('mkdir', ['-p', readOnly]);
        execFileSync('chmod', ['0555', readOnly]);
      }
      try {
        await expectOneLineFailure(readOnly, new RegExp(`^Failed to start: CHDB_DATA_DIR ${readOnly} is not writable: E(ROFS|ACCES)`));
      } finally {
        if (asRoot) unmount(readOnly);
      }
    },
    60_000,
  );

  itWhen(tmpfsAvailable, 'a disk that fills up: no permission to mount a 1 MB tmpfs')(
    'a disk that fills up during the build, then a start with room builds it all',
    async () => {
      const small = tmpfs('full-disk', 'size=1m');
      if (!small) throw new Error('could not mount a 1 MB tmpfs, although one mounted before the tests');
      const dataDir = path.join(small, 'chdb');
      try {
        await expectOneLineFailure(dataDir, new RegExp(`^Failed to start: CHDB_DATA_DIR ${dataDir} has no space left for the demo data .*not enough space`));
        cpSync(dataDir, dir('was-full'), { recursive: true });
      } finally {
        unmount(small);
      }
      const log = await startAndStop(dir('was-full'));
      expect(log).toContain('"msg":"incomplete demo data found; building it again"');
      const after = await fingerprint(dir('was-full'));
      expect(after.tables).toEqual(clean.tables);
      expect(after.marker).toBe(true);
    },
    180_000,
  );
});
