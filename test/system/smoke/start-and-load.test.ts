import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, freePort, ROOT } from '../support/child';

/**
 * The smallest whole run of the built service: `node dist/index.js` (the node this test runs on) builds a tiny demo
 * dataset, loads the run's small IP database, says ready, and answers a load; stopped, its data directory is read
 * with direct SQL for the expected answer. .ci/run runs this file under each Node line it tests beside the machine's
 * (docs/testing.md, "Node versions").
 */

const KEY = 'smoke-test-key-0123456789';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-smoke-'));
const dataDir = path.join(scratch, 'chdb');

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Downloads per device type, by direct SQL in a process of its own (libchdb binds one directory per process). */
async function downloadsByDevice(): Promise<Record<string, string>> {
  const script = `
    const { createClient } = require('@clickhouse/client');
    const { createChdbConnection } = require('chdb/connection');
    (async () => {
      const c = createClient({ connection: createChdbConnection({ path: process.argv[1] }) });
      const rows = await (await c.query({ query: 'SELECT device_type, toString(count()) AS n FROM analytics.downloads GROUP BY device_type', format: 'JSONEachRow' })).json();
      process.stdout.write(JSON.stringify(Object.fromEntries(rows.map((r) => [r.device_type, r.n]))));
      process.exit(0);
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, dataDir], { cwd: ROOT });
  return JSON.parse(stdout) as Record<string, string>;
}

it(`starts, says ready and answers a load on Node ${process.versions.node}`, async () => {
  const port = await freePort();
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    CHDB_DATA_DIR: dataDir,
    API_KEYS_FILE: path.join(scratch, 'api-keys.json'),
    API_KEYS: KEY,
    DEMO_SCALE: '0.005',
    DEMO_DAYS: '7',
  });
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  let answer: Record<string, string>;
  try {
    const url = `http://127.0.0.1:${port}`;
    while (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before ready:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const response = await fetch(`${url}/v1/data/load/`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { measures: ['Downloads.count'], dimensions: ['Downloads.device_type'] } }),
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Record<string, string>[] };
    answer = Object.fromEntries(data.map((row) => [row['Downloads.device_type'], row['Downloads.count']]));
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  expect(log).toContain('"msg":"IP database loaded"');
  const expected = await downloadsByDevice();
  expect(Object.keys(expected).length).toBeGreaterThan(1);
  expect(answer).toEqual(expected);
}, 300_000);
