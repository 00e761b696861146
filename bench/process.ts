import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { outcomeOf, runConcurrently, send, type Run } from './http-load';
import { log, ms, perSecond, stats, table } from './report';
import { SIMPLE_COUNT } from './scenarios';
import { API_KEY } from './service';

/**
 * The service as it is deployed: `node dist/index.js` in a process of its
 * own, its memory read from /proc, the load sent from this process.
 * `npm run bench:process -- --data-dir DIR [--scale 1] [--idle-seconds 60]
 * [--cached-requests 10000] [--cached-concurrency 64] [--node-args '…']`.
 *
 * `npm run bench` serves the service in its own process beside the client,
 * the bare endpoint and the direct SQL, so its RSS counts all of them (its
 * bare endpoint's run peaked as high as the service's). Here the figures
 * are the service's alone, and the bare Express endpoint answering the same
 * bytes runs in a process of its own too, so neither shares an event loop
 * with the client. The data directory is the service's own: an empty one
 * gets the demo build at `--scale` (the first-run build of `npm start`),
 * a finished one is served as it is.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const LOAD_PATH = '/v1/data/load/';
const MB = 1024 * 1024;

interface Memory {
  rss: number;
  anon: number;
  file: number;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') };
}

const mbOf = (bytes: number) => (bytes / MB).toFixed(0);

/** The CPU time a process has used (all its threads, user and system), in ms: steadier than req/s on a shared machine. */
function cpuMsOf(pid: number): number {
  // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line, in ticks of USER_HZ (100 on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Samples a process's RSS every 100 ms until stopped; the peak and the sample at the peak. */
function peakWatch(pid: number): { stop(): Memory } {
  let peak = memoryOf(pid);
  const timer = setInterval(() => {
    const now = memoryOf(pid);
    if (now.rss > peak.rss) peak = now;
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      const now = memoryOf(pid);
      return now.rss > peak.rss ? now : peak;
    },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

async function untilReady(baseUrl: string, agent: http.Agent, child: ChildProcess, seconds: number): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before it was ready`);
    if ((await send(baseUrl, agent, { method: 'GET', path: '/readyz' })).status === 200) return;
    await sleep(250);
  }
  throw new Error(`the service was not ready within ${seconds} s`);
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      scale: { type: 'string', default: '1' },
      'idle-seconds': { type: 'string', default: '60' },
      'cached-requests': { type: 'string', default: '10000' },
      'cached-concurrency': { type: 'string', default: '64' },
      'node-args': { type: 'string', default: '' },
      'ready-seconds': { type: 'string', default: '1800' },
    },
    strict: true,
  });
  if (values['data-dir'] === undefined) throw new Error('--data-dir is required: the service keeps its data there, and a later run reuses it');
  const count = (name: string) => {
    const value = Number(values[name as keyof typeof values]);
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(values[name as keyof typeof values])}`);
    return value;
  };
  const idleSeconds = count('idle-seconds');
  const requests = count('cached-requests');
  const concurrency = count('cached-concurrency');
  const nodeArgs = values['node-args'].split(' ').filter(Boolean);

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency + 1 });
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    ALLOW_OPERATOR_KEYS: 'true',
    API_KEYS: API_KEY,
    CHDB_DATA_DIR: path.resolve(values['data-dir']),
    DEMO_SCALE: values.scale,
    PORT: String(port),
    METRICS_PORT: '0',
    LOG_LEVEL: 'error',
    // Rate limits would answer 429 to the load and measure the limiter instead of the query path.
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_UNAUTHENTICATED: '1000000',
    RATE_LIMIT_CONCURRENT: '1000',
  };
  log(`service: node ${[...nodeArgs, 'dist/index.js'].join(' ')} on ${env.CHDB_DATA_DIR} (demo scale ${values.scale} if empty)`);
  const service = spawn(process.execPath, [...nodeArgs, 'dist/index.js'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  let bare: ChildProcess | undefined;
  try {
    const started = Date.now();
    await untilReady(baseUrl, agent, service, count('ready-seconds'));
    const ready = { seconds: (Date.now() - started) / 1000, memory: memoryOf(service.pid!) };
    log(`  ready after ${ready.seconds.toFixed(1)} s, RSS ${mbOf(ready.memory.rss)} MB`);
    const meta = await send(baseUrl, agent, { method: 'GET', path: '/v1/data/meta/', key: API_KEY });
    if (meta.status !== 200) throw new Error(`/v1/data/meta/ answered ${meta.status}: ${meta.body.slice(0, 300)}`);
    await sleep(3000);
    const compiled = memoryOf(service.pid!);
    log(`  models compiled, 3 s later: RSS ${mbOf(compiled.rss)} MB; idle for ${idleSeconds} s`);
    await sleep(idleSeconds * 1000);
    const idle = memoryOf(service.pid!);

    const body = { query: SIMPLE_COUNT.query };
    const first = await send(baseUrl, agent, { method: 'POST', path: LOAD_PATH, key: API_KEY, body });
    if (first.status !== 200) throw new Error(`the cached query's first request answered ${first.status}: ${first.body.slice(0, 300)}`);
    const barePort = await freePort();
    bare = spawn(process.execPath, [path.join(__dirname, 'ceiling.js')], {
      env: { PATH: process.env.PATH, CEILING_PORT: String(barePort), CEILING_PATH: LOAD_PATH, CEILING_BODY: first.body },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const bareUrl = `http://127.0.0.1:${barePort}`;
    await untilListening(bareUrl, agent, bare);

    const timed = (url: string) => () => send(url, agent, { method: 'POST', path: LOAD_PATH, key: API_KEY, body }).then(outcomeOf);
    const measured = async (url: string, pid: number): Promise<{ run: Run; peak: Memory; cpuMs: number }> => {
      // Untimed first, so that V8 has compiled both servers' paths before either is measured.
      await runConcurrently(Math.min(2000, requests), concurrency, timed(url));
      const watch = peakWatch(pid);
      const cpuBefore = cpuMsOf(pid);
      const run = await runConcurrently(requests, concurrency, timed(url));
      return { run, peak: watch.stop(), cpuMs: (cpuMsOf(pid) - cpuBefore) / requests };
    };
    log(`  cached: ${requests} requests at ${concurrency} connections, service then bare Express, each after 2,000 untimed`);
    const onService = await measured(baseUrl, service.pid!);
    const onBare = await measured(bareUrl, bare.pid!);
    const s = stats(onService.run);
    const b = stats(onBare.run);

    const memoryRow = (when: string, m: Memory) => [when, mbOf(m.rss), mbOf(m.anon), mbOf(m.file)];
    log('');
    log(
      `Service process: ${[...nodeArgs, 'dist/index.js'].join(' ')}, ready after ${ready.seconds.toFixed(1)} s; Node ${process.version}, ` +
        `${os.cpus().length} CPUs, load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} at the end. RSS from /proc: anonymous (the process's own) and file-backed (pages of libchdb.so ` +
        'and the node binary, shared with every process mapping them and reclaimable without a write).',
    );
    log('');
    log(
      table(
        ['Service process', 'RSS MB', 'Anonymous MB', 'File-backed MB'],
        ['l', 'r', 'r', 'r'],
        [
          memoryRow('ready', ready.memory),
          memoryRow('models compiled (3 s after the first /meta)', compiled),
          memoryRow(`idle ${idleSeconds} s after that`, idle),
          memoryRow(`peak under ${concurrency} connections, cached query (every 100 ms)`, onService.peak),
          memoryRow(`bare Express process: peak under the same load`, onBare.peak),
        ],
      ),
    );
    log('');
    log(
      table(
        ['Endpoint', 'Req/s', 'p50 ms', 'p99 ms', 'CPU ms/req (its process)', 'Errors'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          ['service', perSecond(s.perSecond), ms(s.p50), ms(s.p99), onService.cpuMs.toFixed(2), String(onService.run.errors)],
          ['bare Express 5, same bytes', perSecond(b.perSecond), ms(b.p50), ms(b.p99), onBare.cpuMs.toFixed(2), String(onBare.run.errors)],
        ],
      ),
    );
    if (onService.run.firstError) log(`first error: ${onService.run.firstError}`);
    const verdict = (met: boolean) => (met ? 'yes' : 'no');
    log('');
    log(
      table(
        ['Figure', 'Target', 'Measured', 'Met'],
        ['l', 'l', 'l', 'l'],
        [
          [
            // Idle means no request for a while: the service collects its start-up's garbage once it has had a quiet moment (src/startup-garbage.ts).
            `RSS idle, ${idleSeconds} s after the models compiled`,
            '≤ 400 MB',
            `${mbOf(idle.rss)} MB (${mbOf(compiled.rss)} MB 3 s after the first /meta)`,
            verdict(idle.rss <= 400 * MB),
          ],
          [`RSS under ${concurrency} connections`, '≤ 600 MB', `${mbOf(onService.peak.rss)} MB`, verdict(onService.peak.rss <= 600 * MB)],
          ['Cached query, req/s', '≥ 60% of bare', `${((s.perSecond / b.perSecond) * 100).toFixed(0)}%`, verdict(s.perSecond >= 0.6 * b.perSecond)],
          ['Cached query, p99', '≤ 2 × bare p99', `${(s.p99 / b.p99).toFixed(2)} ×`, verdict(s.p99 <= 2 * b.p99)],
        ],
      ),
    );
    return 0;
  } finally {
    agent.destroy();
    if (bare) await stopped(bare);
    await stopped(service);
  }
}

async function untilListening(url: string, agent: http.Agent, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the bare endpoint exited (${child.exitCode})`);
    if ((await send(url, agent, { method: 'GET', path: '/' })).status !== 0) return;
    await sleep(50);
  }
  throw new Error('the bare endpoint did not listen within 10 s');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
