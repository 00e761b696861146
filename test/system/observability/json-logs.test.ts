/**
 * stdout is the log: one JSON object per line from the first line on, so a
 * log shipper needs no parsing rules. Cube's own console output is routed
 * into it, the demo-key banner goes to the terminal (stderr), and the
 * start-up's work is logged with its duration rather than as event-loop
 * delays before the service is ready.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnv, freePort, ROOT } from '../support/child';
import { probe } from '../../integration/support/api';

const notJson = (lines: string[]) =>
  lines.filter((line) => {
    try {
      return typeof JSON.parse(line) !== 'object';
    } catch {
      return true;
    }
  });

describe('`node dist/index.js` from start to ready, with the demo key and Cube in its dev mode', () => {
  let stdout: string[];
  let stderr: string;
  beforeAll(async () => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-json-logs-'));
    const child = spawn(process.execPath, ['dist/index.js'], {
      cwd: ROOT,
      // No API_KEYS (the demo key and its banner), no NODE_ENV (development: Cube prints its dev-mode advice), and
      // a threshold every start-up exceeds, so a delay logged before ready is certain to show.
      env: childEnv({
        PORT: String(port),
        HOST: '127.0.0.1',
        CHDB_DATA_DIR: path.join(dir, 'chdb'),
        API_KEYS_FILE: path.join(dir, 'api-keys.json'),
        DEMO_SCALE: '0.005',
        DEMO_DAYS: '7',
        EVENT_LOOP_WARN_MS: '10',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      for (;;) {
        const ready = await probe(`http://127.0.0.1:${port}`, 'readyz').then(
          (res) => res.status === 200,
          () => false,
        );
        if (ready) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      // A window or two of the loop monitor after ready.
      await new Promise((r) => setTimeout(r, 2_500));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    stdout = out.split('\n').filter((line) => line !== '');
  }, 180_000);

  const parsed = () => stdout.map((line) => JSON.parse(line) as { msg: string; level: string; durationMs?: unknown });

  it('writes nothing but JSON objects to stdout', () => {
    expect(stdout.length).toBeGreaterThan(3);
    expect(notJson(stdout)).toEqual([]);
  });

  it("keeps Cube's advice that does not apply out of the log at info", () => {
    expect(stdout.filter((line) => line.includes('external database'))).toEqual([]);
  });

  it('shows the demo key banner to the person at the terminal, on stderr', () => {
    expect(stderr).toContain('Analytics API on http://localhost:');
  });

  it("prints no warning of the ClickHouse client's about HTTP settings, which chDB has none of", () => {
    expect([...stdout, stderr].filter((text) => text.includes('send_progress_in_http_headers'))).toEqual([]);
  });

  it('logs the models compile with its duration, and no event-loop delay before ready', () => {
    const lines = parsed();
    const ready = lines.findIndex((line) => line.msg === 'ready');
    expect(ready).toBeGreaterThan(0);
    expect(lines.slice(0, ready).filter((line) => line.msg === 'event loop delayed')).toEqual([]);
    const compiled = lines.find((line) => line.msg === 'models compiled');
    expect(compiled?.durationMs).toEqual(expect.any(Number));
  });
});

describe('`npm run models -- validate`', () => {
  it('prints its report alone on stdout, with nothing from Cube', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-json-logs-models-'));
    writeFileSync(
      path.join(dir, 'Numbers.yml'),
      '# access: public\ncubes:\n  - name: Numbers\n    sql: SELECT number FROM system.numbers LIMIT 10\n    measures:\n      - name: count\n        description: Numbers counted.\n        type: count\n',
    );
    const data = mkdtempSync(path.join(os.tmpdir(), 'analytics-json-logs-chdb-'));
    const run = spawnSync(process.execPath, ['dist/cube/models/cli.js', 'validate', '--dir', dir], {
      cwd: ROOT,
      env: childEnv({ CHDB_DATA_DIR: data, DEMO_DATA: 'false' }),
      encoding: 'utf8',
    });
    expect(run.stdout).toBe(`${dir}: the models compile and pass every check.\n`);
    expect(notJson(run.stderr.split('\n').filter((line) => line !== ''))).toEqual([]);
    expect(run.status).toBe(0);
  });
});
