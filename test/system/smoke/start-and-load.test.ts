import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/child';
import { startBuilt } from '../support/service';

/**
 * The smallest whole run of the built service: `node dist/index.js` (the node this test runs on) builds a tiny demo
 * dataset, loads the run's small IP database, says ready, and answers a load; stopped, its data directory is read
 * with direct SQL for the expected answer. .ci/run runs this file under each Node line it tests beside the machine's
 * (docs/guides/testing.md, "Node versions").
 */

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
  const service = await startBuilt(dataDir, 'smoke-test-key-0123456789', { DEMO_SCALE: '0.005', DEMO_DAYS: '7' });
  let answer: Record<string, string>;
  try {
    const rows = await service.load({ measures: ['Downloads.count'], dimensions: ['Downloads.device_type'] });
    answer = Object.fromEntries(rows.map((row) => [row['Downloads.device_type'], row['Downloads.count']]));
  } finally {
    await service.stop();
  }
  expect(service.log()).toContain('"msg":"IP database loaded"');
  const expected = await downloadsByDevice();
  expect(Object.keys(expected).length).toBeGreaterThan(1);
  expect(answer).toEqual(expected);
}, 300_000);
