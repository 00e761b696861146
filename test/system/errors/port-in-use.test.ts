import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * The real start-up (`node dist/index.js`, built once by the system tier's
 * global setup, as `npm start` builds it) on a port another process holds:
 * one clear line on stderr, exit code
 * 1, no stack trace, and no "listening" before it. The same start on a free
 * port does log "listening", so the first test cannot pass by never logging.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
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
function start(port: number, name: string, until?: (stdout: string) => boolean): Promise<Run> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'index.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      CHDB_DATA_DIR: path.join(dataDir, name),
      API_KEYS_FILE: path.join(dataDir, `${name}-keys.json`),
      API_KEYS: 'listen-test-key-0123456789',
      DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
    },
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
  const probe = createServer();
  const freePort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  const run = await start(freePort, 'free', (stdout) => listeningLines(stdout).length > 0);
  expect(listeningLines(run.stdout)).toHaveLength(1);
  expect(JSON.parse(listeningLines(run.stdout)[0])).toMatchObject({ level: 'info', url: `http://localhost:${freePort}` });
}, 120_000);
