import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, freePort, ROOT } from '../support/child';
import { dataOf, load } from '../../integration/support/api';

/**
 * Imports through the built commands. An import killed with SIGKILL half way, for real: `node
 * dist/warehouse/cli.js import` (what `npm run warehouse -- import` runs)
 * in a child process, killed once its rows are in podcast_events and it is
 * deriving their downloads. The next import of the file, or the next start
 * of the service, removes the killed import's rows; the data then equals a
 * clean import of the same file into another directory, read by direct SQL
 * (downloads by count and hash), and the file's own row count. And an
 * import while the service runs, handed to it through its inbox.
 */

const ROWS = 60_000;
const API_KEY = 'import-test-key-0123456789';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-import-'));
const dir = (name: string) => path.join(scratch, name);
const file = dir('requests.ndjson');

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function serviceEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    CHDB_DATA_DIR: dataDir,
    API_KEYS_FILE: path.join(scratch, `keys-${path.basename(dataDir)}.json`),
    API_KEYS: API_KEY,
    DEMO_DATA: 'false',
    ...extra,
  });
}

/** Requests over three days, many listeners, a few user agents: every row valid. */
function writeRequests(): void {
  const agents = [
    'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
    'Spotify/8.9.36 Android/34 (SM-S918B)',
    'Overcast/794 CFNetwork/1494.0.7 Darwin/23.4.0',
    'curl/8.4.0',
  ];
  const lines: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      JSON.stringify({
        time: new Date(Date.UTC(2026, 0, 5) + ((i * 7919) % (3 * 86_400)) * 1000).toISOString(),
        ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i % 97}`,
        method: 'GET',
        url: `https://pfx.example-analytics.net/e/show${i % 13}/media.example.com/ep-${i % 29}.mp3`,
        userAgent: agents[i % agents.length],
        range: i % 5 === 0 ? 'bytes=0-1' : '',
      }),
    );
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

interface Import {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The summary the command prints last on stdout (log lines come before it). */
function summary(run: Import): Record<string, unknown> {
  return JSON.parse(run.stdout.trimEnd().split('\n').pop() ?? '') as Record<string, unknown>;
}

/** The import command of `source`; with `killAt`, SIGKILLed when a stderr line matches it. */
function runImport(dataDir: string, killAt?: RegExp, source = file): Promise<Import> {
  const child = spawn(process.execPath, ['dist/warehouse/cli.js', 'import', '--account', 'acme', source], { cwd: ROOT, env: serviceEnv(dataDir) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (killAt?.test(stderr)) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

interface Fingerprint {
  events: number;
  /** Rows of imports without a 'done' record. */
  eventsOfUnfinished: number;
  downloads: { n: string; h: string };
  /** Imports recorded done, and imports with no done record. */
  imports: { done: string; unfinished: string };
}

/** Direct SQL on a data directory, by a child process of its own (libchdb binds one directory per process). */
async function fingerprint(dataDir: string): Promise<Fingerprint> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    (async () => {
      const c = createClient({ connection: createChdbConnection({ path: process.argv[1] }) });
      const rows = async (query) => (await c.query({ query, format: 'JSONEachRow' })).json();
      const done = "(SELECT id FROM analytics.imports WHERE state = 'done')";
      const [events] = await rows('SELECT toString(count()) AS n, toString(countIf(import_id NOT IN ' + done + ')) AS unfinished FROM analytics.podcast_events');
      const [downloads] = await rows('SELECT toString(count()) AS n, toString(sum(cityHash64(*))) AS h FROM analytics.downloads');
      const [imports] = await rows("SELECT toString(countIf(finished)) AS done, toString(countIf(NOT finished)) AS unfinished FROM (SELECT id, countIf(state = 'done') > 0 AS finished FROM analytics.imports GROUP BY id)");
      process.stdout.write(JSON.stringify({ events: Number(events.n), eventsOfUnfinished: Number(events.unfinished), downloads, imports }));
      process.exit(0);
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, dataDir], { cwd: ROOT });
  return JSON.parse(stdout) as Fingerprint;
}

interface Service {
  port: number;
  log: () => string;
  stop(): Promise<string>;
  /** SIGKILL, once its log says `pattern`. */
  killAt(pattern: RegExp): Promise<void>;
}

/** `node dist/index.js`, once its log says `pattern`. */
async function start(dataDir: string, pattern: RegExp, env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env: serviceEnv(dataDir, { PORT: String(port), HOST: '127.0.0.1', ...env }) });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (pattern.test(out)) resolve();
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before ${pattern}: ${out}`)));
  });
  return {
    port,
    log: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return out;
    },
    killAt: async (pattern) => {
      while (!pattern.test(out)) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts the service, waits for `pattern` in its log, stops it with SIGTERM; resolves with its log. */
async function startUntil(dataDir: string, pattern: RegExp, env: Record<string, string> = {}): Promise<string> {
  return (await start(dataDir, pattern, env)).stop();
}

let clean: Fingerprint;
let killed: Fingerprint;
beforeAll(async () => {
  writeRequests();
  const cleanRun = await runImport(dir('clean'));
  expect(cleanRun.code).toBe(0);
  clean = await fingerprint(dir('clean'));

  const run = await runImport(dir('killed'), /deriving downloads/);
  expect(run.code).toBeNull();
  killed = await fingerprint(dir('killed'));
  cpSync(dir('killed'), dir('killed-then-started'), { recursive: true });
}, 300_000);

describe('an import killed with SIGKILL half way', () => {
  it('a clean import holds every row of the file and derives downloads', () => {
    expect(clean.events).toBe(ROWS);
    expect(clean.eventsOfUnfinished).toBe(0);
    expect(Number(clean.downloads.n)).toBeGreaterThan(0);
    expect(clean.imports).toEqual({ done: '1', unfinished: '0' });
  });

  it('was killed with its rows in podcast_events and no done record', () => {
    expect(killed.eventsOfUnfinished).toBe(ROWS);
    expect(killed.imports).toEqual({ done: '0', unfinished: '1' });
  });

  it('the next import of the file removes them, imports the file whole, and equals the clean import; a third adds nothing', async () => {
    const next = await runImport(dir('killed'));
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(/removing the rows of interrupted import .*requests\.ndjson/);
    expect(summary(next)).toMatchObject({ outcome: 'imported', rowsRead: ROWS, imported: ROWS, rejected: 0 });
    expect(await fingerprint(dir('killed'))).toEqual(clean);

    const again = await runImport(dir('killed'));
    expect(summary(again)).toMatchObject({ outcome: 'already imported', imported: 0 });
    expect(await fingerprint(dir('killed'))).toEqual(clean);
  }, 180_000);

  it('a start of the service removes them too, and the file can then be imported', async () => {
    const log = await startUntil(dir('killed-then-started'), /removed the rows of interrupted import/);
    expect(log).toMatch(/removing the rows of interrupted import .*requests\.ndjson/);
    expect(await fingerprint(dir('killed-then-started'))).toEqual({
      events: 0,
      eventsOfUnfinished: 0,
      downloads: { n: '0', h: '0' },
      imports: { done: '0', unfinished: '0' },
    });

    const next = await runImport(dir('killed-then-started'));
    expect(summary(next)).toMatchObject({ outcome: 'imported', imported: ROWS });
    expect(await fingerprint(dir('killed-then-started'))).toEqual(clean);
  }, 180_000);

  it('npm start on a directory holding only imported logs serves them, with demo data on (the default), and builds no demo', async () => {
    const log = await startUntil(dir('clean'), /"msg":"ready"/, { DEMO_DATA: 'true' });
    expect(log).toContain('"msg":"tables hold imported request logs; demo data not loaded"');
    expect(log).not.toContain('incomplete demo data found');
    expect(await fingerprint(dir('clean'))).toEqual(clean);
  }, 180_000);
});

describe('an import while npm start runs', () => {
  it('is handed to the running service, which imports it with its engine and answers it at once', async () => {
    const service = await start(dir('live'), /"msg":"ready"/);
    try {
      const run = await runImport(dir('live'));
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/handed to the running service/);
      expect(summary(run)).toMatchObject({ outcome: 'imported', rowsRead: ROWS, imported: ROWS, rejected: 0, downloads: Number(clean.downloads.n) });
      const rows = await dataOf(load(`http://127.0.0.1:${service.port}`, { measures: ['Downloads.count'] }, { key: API_KEY }));
      expect(rows).toEqual([{ 'Downloads.count': clean.downloads.n }]);
    } finally {
      await service.stop();
    }
    expect(await fingerprint(dir('live'))).toEqual(clean);
  }, 180_000);

  it('in statements of at most 7,000 rows: killed while reading or deriving, none of it stays; then it imports whole, as in one statement', async () => {
    const env = { IMPORT_STATEMENT_ROWS: '7000' };
    const none = { events: 0, eventsOfUnfinished: 0, downloads: { n: '0', h: '0' }, imports: { done: '0', unfinished: '0' } };
    // Killed after the second run of lines (nothing in podcast_events yet), then after its rows went in (undone by the next start).
    for (const [at, left] of [
      [/validated lines 7001–14000/, none],
      [/deriving downloads/, { ...none, events: ROWS, eventsOfUnfinished: ROWS, imports: { done: '0', unfinished: '1' } }],
    ] as const) {
      const service = await start(dir('cut'), /"msg":"ready"/, env);
      const run = runImport(dir('cut'));
      await service.killAt(at);
      expect((await run).stderr).toMatch(/the service stopped before importing/);
      expect(await fingerprint(dir('cut'))).toMatchObject(left);
    }
    // The jobs the killed services left in the inbox are imported at the next start; the command run again then adds nothing.
    const service = await start(dir('cut'), /"msg":"import finished"/, env);
    try {
      expect(service.log()).toMatch(/validated lines 56001–60000/);
      const finished = JSON.parse(
        service
          .log()
          .split('\n')
          .find((l) => l.includes('"msg":"import finished"')) ?? '',
      ) as Record<string, unknown>;
      expect(finished).toMatchObject({ outcome: 'imported', rowsRead: ROWS, imported: ROWS, rejected: 0, downloads: Number(clean.downloads.n) });
      // Nine runs of lines, three days of 20,000 requests each cut by show, and the statements around them.
      expect(finished.statements).toBeGreaterThan(9 + 3 * 2);
      const run = await runImport(dir('cut'));
      expect(summary(run)).toMatchObject({ outcome: 'already imported' });
    } finally {
      await service.stop();
    }
    expect(await fingerprint(dir('cut'))).toEqual(clean);
  }, 300_000);
});

describe('a second delivery', () => {
  // Requests that carry their ids: lines 1–1,500 as a .gz, the same lines plain, then lines 1,001–2,000.
  const REDELIVERED = 2_000;
  const lines = Array.from({ length: REDELIVERED }, (_, i) =>
    JSON.stringify({
      time: new Date(Date.UTC(2026, 0, 5) + i * 37_000).toISOString(),
      ip: `10.1.${(i >> 8) & 255}.${i & 255}`,
      method: 'GET',
      url: `https://pfx.example-analytics.net/e/show${i % 5}/media.example.com/ep-${i % 7}.mp3`,
      userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
      requestId: `delivery-${i}`,
    }),
  );
  const text = (from: number, to: number) => `${lines.slice(from - 1, to).join('\n')}\n`;
  const files = { gz: dir('first.ndjson.gz'), plain: dir('first.ndjson'), cut: dir('second.ndjson'), whole: dir('whole.ndjson') };
  beforeAll(() => {
    writeFileSync(files.gz, gzipSync(text(1, 1_500)));
    writeFileSync(files.plain, text(1, 1_500));
    writeFileSync(files.cut, text(1_001, 2_000));
    writeFileSync(files.whole, text(1, REDELIVERED));
  });

  async function deliver(dataDir: string): Promise<Record<string, unknown>[]> {
    const summaries: Record<string, unknown>[] = [];
    for (const source of [files.gz, files.plain, files.cut]) {
      const run = await runImport(dataDir, undefined, source);
      expect(run.code).toBe(0);
      summaries.push(summary(run));
    }
    return summaries;
  }
  const expected = [
    { outcome: 'imported', rowsRead: 1_500, imported: 1_500, duplicates: 0 },
    { outcome: 'already imported', imported: 0 },
    { outcome: 'imported', rowsRead: 1_000, imported: 500, duplicates: 500 },
  ];

  it('adds nothing twice, into a stopped service and through a running one’s inbox: as one import of every request', async () => {
    const whole = await runImport(dir('delivered-whole'), undefined, files.whole);
    expect(summary(whole)).toMatchObject({ outcome: 'imported', imported: REDELIVERED });
    const once = await fingerprint(dir('delivered-whole'));

    expect(await deliver(dir('delivered-stopped'))).toMatchObject(expected);
    const service = await start(dir('delivered-live'), /"msg":"ready"/);
    try {
      expect(await deliver(dir('delivered-live'))).toMatchObject(expected);
      expect(service.log()).toMatch(/500 of its 1000 requests with an id already imported/);
    } finally {
      await service.stop();
    }
    for (const delivered of ['delivered-stopped', 'delivered-live']) {
      expect(await fingerprint(dir(delivered))).toEqual({ ...once, imports: { done: '2', unfinished: '0' } });
    }
  }, 300_000);
});
