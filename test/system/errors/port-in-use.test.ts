import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { childEnv, freePort, ROOT } from '../support/child';

/**
 * The real start-up (`node dist/index.js`, built once by the system tier's
 * global setup, as `npm start` builds it) on a port another process holds, with a key file it cannot read, or with
 * a GEO_DB_DIR that lacks the IP database's files:
 * one clear line on stderr naming the variable, exit code 1, no stack trace,
 * and no "listening" (nor the banner) before it. The same start on a free
 * port does log "listening", so these tests cannot pass by never logging.
 */

let dataDir: string;
let holder: Server;
let heldPort: number;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-listen-'));
  holder = createServer();
  heldPort = await listen(holder);
}, 300_000);

afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the service; `until` may end it early once its output says enough. */
function start(port: number, name: string, until?: (stdout: string) => boolean, env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'index.js')], {
    cwd: ROOT,
    env: childEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      CHDB_DATA_DIR: path.join(dataDir, name),
      API_KEYS_FILE: path.join(dataDir, `${name}-keys.json`),
      API_KEYS: 'listen-test-key-0123456789',
      DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
      ...env,
    }),
  });
  const run: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    run.stdout += chunk.toString();
    if (until?.(run.stdout)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ ...run, code })));
}

const listeningLines = (stdout: string) => stdout.split('\n').filter((line) => line.includes('"msg":"listening"'));

it('a port in use: one line naming the port, host and variable, exit code 1, no "listening"', async () => {
  const run = await start(heldPort, 'held');
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toEqual([`Port ${heldPort} on 127.0.0.1 is already in use (PORT)`]);
  expect(run.stderr).not.toMatch(/\bat .+:\d+/);
  expect(listeningLines(run.stdout)).toEqual([]);
}, 120_000);

it('a free port: "listening" once it listens', async () => {
  const port = await freePort();
  const run = await start(port, 'free', (stdout) => listeningLines(stdout).length > 0);
  expect(listeningLines(run.stdout)).toHaveLength(1);
  expect(JSON.parse(listeningLines(run.stdout)[0])).toMatchObject({ level: 'info', url: `http://localhost:${port}` });
}, 120_000);

function expectRefusedBeforeListening(run: Run, line: string | RegExp): void {
  expect(run.code).toBe(1);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(run.stderr).not.toMatch(/\bat .+:\d+/);
  expect(listeningLines(run.stdout)).toEqual([]);
  expect(run.stdout).not.toMatch(/Analytics API on/);
}

it('a metrics port in use: one line naming the port and METRICS_PORT, before listening on PORT', async () => {
  const run = await start(await freePort(), 'metrics-held', undefined, { METRICS_PORT: String(heldPort), METRICS_HOST: '127.0.0.1' });
  expectRefusedBeforeListening(run, `Port ${heldPort} on 127.0.0.1 is already in use (METRICS_PORT)`);
}, 120_000);

it('a GEO_DB_DIR without the IP database files: one line naming it and the file missing, before listening', async () => {
  const dir = path.join(dataDir, 'empty-geo');
  mkdirSync(dir);
  const run = await start(await freePort(), 'geo-empty', undefined, { GEO_DB_DIR: dir });
  expectRefusedBeforeListening(run, `Failed to start: GEO_DB_DIR=${dir}: expected exactly one *city-ipv4.mmdb file, found none`);
}, 120_000);

describe('a key file that does not read: one line naming API_KEYS_FILE and the problem, before listening', () => {
  const cases: [string, (file: string) => void, RegExp][] = [
    ['a directory', (file) => mkdirSync(file), /EISDIR/],
    ['not JSON', (file) => writeFileSync(file, '{"version": 1, "keys": ['), /is not valid JSON/],
    ['another version', (file) => writeFileSync(file, '{"version": 2, "keys": []}'), /unknown version 2/],
  ];
  it.each(cases)(
    '%s',
    async (name, make, problem) => {
      const file = path.join(dataDir, `${name.replace(/\W/g, '-')}-keys.json`);
      make(file);
      const run = await start(await freePort(), `keys-${name.replace(/\W/g, '-')}`, undefined, { API_KEYS_FILE: file });
      expectRefusedBeforeListening(run, new RegExp(`^Failed to start: API_KEYS_FILE ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*${problem.source}`));
    },
    120_000,
  );
});
