import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EXIT_CLEAN, EXIT_REQUESTS_CUT_OFF } from '../../../src/shutdown';
import { childEnv, freePort, ROOT } from '../support/child';
import { load, meta, probe, type Response } from '../../integration/support/api';

const KEY = 'sigterm-test-key-0123456789';

interface Child {
  process: ChildProcess;
  url: string;
  port: number;
  lines: Record<string, any>[];
  /** The exit code, or the signal that killed the process. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** A service on `port` with a tiny demo dataset of its own in `dir`. */
function tinyService(port: number, dir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    CHDB_DATA_DIR: path.join(dir, 'chdb'),
    API_KEYS_FILE: path.join(dir, 'api-keys.json'),
    API_KEYS: KEY,
    DEMO_SCALE: '0.005',
    DEMO_DAYS: '7',
    ...env,
  });
}

/**
 * `node dist/index.js` on an empty data directory of its own, without demo data, once it answers /readyz. What these
 * tests send at SIGTERM reads no rows (the models' meta, a load whose body never arrives), and the tiny demo build
 * they waited for took half of each test's time (the first test above still starts with one).
 */
async function startChild(env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-sigterm-'));
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: tinyService(port, dir, { DEMO_DATA: 'false', ...env }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, any>[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part));
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    const ready = await probe(url, 'readyz').then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { process: child, url, port, lines, exited };
}

// chDB cannot stop a statement: one whose request has ended (a query timeout here; an export whose client left is the
// same) runs on in the engine, and a process that exits under it is killed by SIGSEGV.
// The statement ends within its max_execution_time (the 1 s query timeout, checked between Slow's 1 s blocks), so the
// SIGTERM must follow the timeout at once, with no drain. The SIGTERM tests below keep their child a second or more
// longer (a 2 s drain; a 1 s wait and a 1 s shutdown timeout), so in their children the statement has ended by the
// exit and they would pass without the wait. So the start-up test's child, once ready, takes the slow load and the
// SIGTERM: one start fewer for this file.
describe('`node dist/index.js` starting on an empty data directory', () => {
  it('listens at once: /healthz 200, /readyz and the API 503 not_ready saying what it waits for, then ready; at SIGTERM waits for a statement the engine still runs after its request timed out, then exits 0', async () => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-starting-'));
    const child = spawn(process.execPath, ['dist/index.js'], {
      cwd: ROOT,
      env: tinyService(port, dir, {
        SHUTDOWN_DRAIN_SECONDS: '0',
        QUERY_TIMEOUT_SECONDS: '1',
        SHUTDOWN_TIMEOUT_SECONDS: '1',
        CUBE_MODELS_DIR: path.join(ROOT, 'test', 'integration', 'fixtures', 'slow-schema'),
      }),
      stdio: 'ignore',
    });
    const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
    try {
      const url = `http://127.0.0.1:${port}`;
      // The first answer comes while the service still builds the demo data or checks the models.
      let first: Response | undefined;
      while (!first) {
        first = await probe(url, 'readyz').catch(() => undefined);
        if (!first) await new Promise((r) => setTimeout(r, 20));
      }
      expect(first.status).toBe(503);
      expect(first.body).toMatchObject({
        code: 'not_ready',
        error: expect.stringMatching(
          /^Not ready: the (tables are being checked|demo data is being built|IP database is being loaded|IP database's dictionaries are being built|models are being compiled and checked)\.$/,
        ),
      });
      await probe(url, 'healthz').expect(200);
      let ready = first;
      while (ready.status !== 200) {
        expect(ready.status).toBe(503);
        await new Promise((r) => setTimeout(r, 100));
        ready = await probe(url, 'readyz');
      }
      await meta(url, { key: KEY }).expect(200);

      const slow = await load(url, { measures: ['Slow.count'] }, { key: KEY });
      expect(slow.status).toBe(504);
      child.kill('SIGTERM');
      expect(await exited).toBe(EXIT_CLEAN);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('SIGTERM to `node dist/index.js`', () => {
  it('turns /readyz 503 at once, answers a request sent during the drain, then stops and exits 0', async () => {
    const child = await startChild({ SHUTDOWN_DRAIN_SECONDS: '2' });
    child.process.kill('SIGTERM');
    // Until the drain ends, the server still listens and answers.
    let readyz = await probe(child.url, 'readyz');
    while (readyz.status === 200) readyz = await probe(child.url, 'readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.body).toMatchObject({ code: 'not_ready', error: expect.stringMatching(/shutting down/) });
    const described = await meta(child.url, { key: KEY });
    expect(described.status).toBe(200);
    expect(await child.exited).toBe(EXIT_CLEAN);
    const msgs = child.lines.map((l) => (l.msg === 'request' ? `${l.method} ${l.path} ${l.status}` : l.msg));
    expect(msgs.indexOf('GET /v1/data/meta 200')).toBeLessThan(msgs.indexOf('shutting down: no longer accepting; waiting for running requests'));
    expect(child.lines).toContainEqual(expect.objectContaining({ msg: 'shut down', exitCode: EXIT_CLEAN }));
  });

  it(`exits ${EXIT_REQUESTS_CUT_OFF} and logs the request id of a request still open at SHUTDOWN_TIMEOUT_SECONDS`, async () => {
    const child = await startChild({ SHUTDOWN_DRAIN_SECONDS: '0', QUERY_TIMEOUT_SECONDS: '1', SHUTDOWN_TIMEOUT_SECONDS: '1' });
    // A body that never arrives keeps the request open.
    const socket = connect(child.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`POST /v1/data/load HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nContent-Length: 1000\r\n\r\n{"query":`);
    // Time for the headers to reach the server (an unparsed connection counts as idle and is closed).
    await new Promise((r) => setTimeout(r, 1000));
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(EXIT_REQUESTS_CUT_OFF);
    socket.destroy();
    const cut = child.lines.filter((l) => l.msg === 'request cut off at shutdown timeout');
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({ level: 'error', method: 'POST', path: '/v1/data/load', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});
