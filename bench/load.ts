import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { drainPending } from 'chdb';
import { parseConfig, type DemoConfig } from '../src/config';
import { createLogger } from '../src/log';
import { openWarehouse } from '../src/warehouse/connection';
import { quoteIdentifier, SCHEMA_VERSION, TABLES } from '../src/warehouse/ddl';
import { DEMO_ACCOUNTS } from '../src/warehouse/reference-data';
import { applyDdl, demoState, ensureDemo, outdatedTables } from '../src/warehouse/setup';
import { API_KEY, DATABASE } from '../test/support/constants';
import { startService } from '../test/support/service';

/**
 * Load benchmark: `npm run bench -- [--scale 0.2] [--days 90] [--requests 200]
 * [--concurrency 4] [--data-dir DIR]`. Builds (or reuses) the demo dataset,
 * serves the real service on a free port and sends each scenario over real
 * HTTP: one cold request, then --requests at --concurrency. Prints latency,
 * throughput and process memory (chDB runs in this process, so RSS includes
 * ClickHouse's own memory), then a markdown table. Figures only: it exits 1
 * when setup fails, never because of the figures. With --data-dir the data
 * is kept, and a later run at the same scale and days reuses it.
 */

interface Options {
  demo: DemoConfig;
  requests: number;
  concurrency: number;
  /** Undefined: a fresh temporary directory, removed at the end. */
  dataDir: string | undefined;
}

/** Written next to the chDB data so a later run can tell which demo the directory holds. */
const MARKER_FILE = 'bench-demo.json';
const MEMORY_SAMPLE_MS = 100;

async function main(): Promise<number> {
  const options = parseOptions();
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'analytics-api-bench-'));
  try {
    const dataset = await prepareDataset(dataDir, options.demo);
    // startService reads the data directory from here, as under jest.
    process.env.TEST_CHDB_DATA_DIR = dataDir;

    const [account, otherAccount] = DEMO_ACCOUNTS;
    const service = await startService(
      // Rate limits would answer 429 to the load and measure the limiter instead of the query path.
      { RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_UNAUTHENTICATED: '1000000', RATE_LIMIT_CONCURRENT: '1000', QUERY_TIMEOUT_SECONDS: '120' },
      {
        accounts: [account, otherAccount],
        // Compiled to build/bench/, so the service's default (relative to build/src/cube/) misses the models.
        schemaPath: path.resolve(__dirname, '..', '..', 'schema'),
      },
    );
    const server = service.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });

    const keys: Record<KeyName, { label: string; key: string }> = {
      account: { label: account, key: service.accountKeys[account] },
      otherAccount: { label: otherAccount, key: service.accountKeys[otherAccount] },
      operator: { label: 'operator', key: API_KEY },
    };
    log(`\nserving ${baseUrl}; ${options.requests} requests per scenario at concurrency ${options.concurrency}\n`);

    const memory = new MemoryWatch();
    const results: ScenarioResult[] = [];
    for (const scenario of scenarios()) {
      const result = await runScenario(scenario, { baseUrl, agent, key: keys[scenario.key].key, ...options });
      results.push(result);
      log(scenarioLine(result, keys[scenario.key].label));
      if (result.firstError) log(`    first error: ${result.firstError}`);
    }
    memory.stop();

    agent.destroy();
    server.closeAllConnections();
    server.close();
    await service.close();

    log('');
    log(memoryLines(memory).join('\n'));
    log('');
    log(markdown(options, dataset, results, memory, keys));
    return 0;
  } finally {
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: '0.2' },
      days: { type: 'string', default: '90' },
      requests: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '4' },
      'data-dir': { type: 'string' },
    },
    strict: true,
  });
  // parseConfig checks scale and days against the service's own bounds and supplies its demo seed.
  const { demo } = parseConfig({ DEMO_SCALE: values.scale, DEMO_DAYS: values.days });
  return {
    demo,
    requests: positiveInteger(values.requests, 'requests'),
    concurrency: positiveInteger(values.concurrency, 'concurrency'),
    dataDir: values['data-dir'] === undefined ? undefined : path.resolve(values['data-dir']),
  };
}

function positiveInteger(raw: string, name: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

// ---------------------------------------------------------------- dataset

interface Marker {
  scale: number;
  days: number;
  seed: number;
  schemaVersion: string;
  endDate: string;
}

interface Dataset {
  dir: string;
  /** Seconds spent building, or undefined when an earlier run's data was reused. */
  buildSeconds: number | undefined;
  endDate: string;
  rows: Record<string, number>;
}

/**
 * Reuses the directory when an earlier run left the same demo in it; builds
 * the demo in an empty one. Anything else is refused rather than dropped:
 * the directory may be someone's data (e.g. npm start's data/chdb).
 */
async function prepareDataset(dir: string, demo: DemoConfig): Promise<Dataset> {
  const markerPath = path.join(dir, MARKER_FILE);
  const wanted: Omit<Marker, 'endDate'> = { scale: demo.scale, days: demo.days, seed: demo.seed, schemaVersion: SCHEMA_VERSION };
  const found = existsSync(markerPath) ? (JSON.parse(readFileSync(markerPath, 'utf8')) as Marker) : undefined;

  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: dir, database: DATABASE });
  try {
    let buildSeconds: number | undefined;
    let endDate: string;
    const state = await demoState(warehouse);
    const empty = state.kind === 'empty' || (state.kind === 'incomplete' && state.tablesWithRows.length === 0);
    if (found && !empty && sameDemo(found, wanted)) {
      endDate = found.endDate;
      log(`reusing demo data in ${dir} (scale ${demo.scale}, ${demo.days} days ending ${endDate})`);
      if (endDate !== today()) log(`  note: built on ${endDate}; relative ranges ("last 7 days") now see fewer days of data`);
    } else if (empty) {
      const outdated = await outdatedTables(warehouse);
      if (outdated.length > 0) throw new Error(`${dir} holds tables from an older schema (${outdated.join(', ')}); use another --data-dir`);
      log(`building demo data in ${dir} (scale ${demo.scale}, ${demo.days} days)`);
      const started = performance.now();
      await applyDdl(warehouse);
      // The loader reports each step as a log line; show just its message.
      const progress = createLogger('info', (line) => log(`  ${(JSON.parse(line) as { msg: string }).msg}`));
      const end = new Date();
      endDate = end.toISOString().slice(0, 10);
      await ensureDemo(warehouse, demo, progress, { endDate: end, unprovenRows: 'keep' });
      buildSeconds = (performance.now() - started) / 1000;
      writeFileSync(markerPath, `${JSON.stringify({ ...wanted, endDate } satisfies Marker, null, 2)}\n`);
    } else {
      throw new Error(
        `${dir} already holds data that is not this benchmark's demo at scale ${demo.scale}, ${demo.days} days (see ${MARKER_FILE}); ` +
          'use an empty or new --data-dir, or omit it for a temporary one',
      );
    }

    const client = warehouse.client();
    const rows: Record<string, number> = {};
    for (const table of TABLES) {
      const result = await client.query({ query: `SELECT count() AS n FROM ${quoteIdentifier(DATABASE)}.${quoteIdentifier(table)}`, format: 'JSONEachRow' });
      rows[table] = Number((await result.json<{ n: string | number }>())[0]?.n ?? 0);
    }
    const width = Math.max(...TABLES.map((t) => t.length));
    for (const table of TABLES) log(`  ${table.padEnd(width)}  ${rows[table].toLocaleString('en-US').padStart(12)} rows`);
    if (buildSeconds !== undefined) log(`  built in ${buildSeconds.toFixed(1)} s`);
    return { dir, buildSeconds, endDate, rows };
  } finally {
    await warehouse.close();
    // libchdb binds one data directory per process: the service reopens it only once this connection is gone.
    await drainPending();
  }
}

function sameDemo(found: Marker, wanted: Omit<Marker, 'endDate'>): boolean {
  return found.scale === wanted.scale && found.days === wanted.days && found.seed === wanted.seed && found.schemaVersion === wanted.schemaVersion;
}

const today = () => new Date().toISOString().slice(0, 10);

// ---------------------------------------------------------------- scenarios

type KeyName = 'account' | 'otherAccount' | 'operator';

/**
 * How a load query meets Cube's result cache. `renewQuery` alone does not
 * bypass it in Cube 0.33: Cube re-checks the refresh key (a 10 s bucket of
 * now()) and answers from the cache until that changes. `uncached` also adds
 * a filter that excludes nothing but differs per request, so every request
 * compiles and runs its own SQL in ClickHouse.
 */
type CacheMode = 'cached' | 'renewQuery' | 'uncached';

interface Scenario {
  name: string;
  key: KeyName;
  /** Undefined for meta, which Cube answers from the compiled model. */
  cache: CacheMode | undefined;
  method: 'GET' | 'POST';
  path: string;
  /** The body of the n-th request sent by this process; none for GET. */
  body?: (n: number) => unknown;
  /** Rows in an answer: cubes for meta, data rows for load. */
  rows(body: any): number;
}

const LOAD_PATH = '/v1/data/load/';

/** A load scenario; `member` is a string dimension of the query's cube, for the uncached variant's filter. */
interface LoadSpec {
  name: string;
  member: string;
  query: Record<string, unknown>;
}

function scenarios(): Scenario[] {
  const load = ({ name, member, query }: LoadSpec, key: KeyName, cache: CacheMode): Scenario => ({
    name,
    key,
    cache,
    method: 'POST',
    path: LOAD_PATH,
    body: (n) => {
      if (cache === 'cached') return { query };
      if (cache === 'renewQuery') return { query: { ...query, renewQuery: true } };
      const never = { member, operator: 'notEquals', values: [`bench-no-such-value-${n}`] };
      return { query: { ...query, renewQuery: true, filters: [...((query.filters as unknown[]) ?? []), never] } };
    },
    rows: (body) => (Array.isArray(body?.data) ? body.data.length : 0),
  });
  const last = (dimension: string, dateRange: string, granularity?: string) => [{ dimension, dateRange, ...(granularity ? { granularity } : {}) }];

  const simpleCount: LoadSpec = {
    name: 'simple count',
    member: 'Downloads.country',
    query: { measures: ['Downloads.count'], timeDimensions: last('Downloads.ts', 'last 7 days') },
  };
  const others: LoadSpec[] = [
    {
      name: 'grouped',
      member: 'Downloads.country',
      query: {
        measures: ['Downloads.count'],
        dimensions: ['Downloads.country', 'Downloads.parsed_ua'],
        timeDimensions: last('Downloads.ts', 'last 30 days', 'day'),
        limit: 1000,
      },
    },
    {
      name: 'raw requests',
      member: 'PodcastEvents.token',
      query: {
        measures: ['PodcastEvents.count'],
        dimensions: ['PodcastEvents.token', 'PodcastEvents.ipBlacklisted'],
        timeDimensions: last('PodcastEvents.ts', 'last 30 days'),
      },
    },
    {
      name: 'funnel',
      member: 'WebEventsFromPodcastFunnel.step',
      query: { measures: ['WebEventsFromPodcastFunnel.conversions'], dimensions: ['WebEventsFromPodcastFunnel.step'] },
    },
    {
      name: 'links',
      member: 'LinksDashboard.utmSource',
      query: {
        measures: ['LinksDashboard.linkViewCount', 'LinksDashboard.uniqueLinkViewCount'],
        dimensions: ['LinksDashboard.utmSource'],
        timeDimensions: last('LinksDashboard.timestamp', 'last 30 days'),
      },
    },
    {
      name: 'charts',
      member: 'ChannelRanks.podcastSlug',
      query: {
        measures: ['ChannelRanks.avgRank'],
        dimensions: ['ChannelRanks.podcastSlug'],
        filters: [{ member: 'ChannelRanks.platform', operator: 'equals', values: ['apple'] }],
        limit: 100,
      },
    },
  ];

  return [
    { name: 'meta', key: 'account', cache: undefined, method: 'GET', path: '/v1/data/meta/', rows: (body) => (Array.isArray(body?.schemas) ? body.schemas.length : 0) },
    load(simpleCount, 'account', 'uncached'),
    load(simpleCount, 'operator', 'uncached'),
    load(simpleCount, 'account', 'renewQuery'),
    // The other account, so its cold request is a real cache miss rather than a hit left by the runs above.
    load(simpleCount, 'otherAccount', 'cached'),
    ...others.map((spec) => load(spec, 'account', 'uncached')),
  ];
}

interface Answer {
  /** 0 when no HTTP answer came (connection error). */
  status: number;
  ms: number;
  body: string;
}

interface ScenarioResult {
  scenario: Scenario;
  cold: Answer;
  latencies: number[];
  errors: number;
  elapsedMs: number;
  lastRows: number;
  firstError?: string;
}

interface RunContext {
  baseUrl: string;
  agent: http.Agent;
  key: string;
  requests: number;
  concurrency: number;
}

/** Requests sent so far by this process: numbers the uncached variant's filter values. */
let sent = 0;

async function runScenario(scenario: Scenario, ctx: RunContext): Promise<ScenarioResult> {
  const send = () => request(ctx.baseUrl, ctx.agent, ctx.key, scenario, scenario.body?.(sent++));
  const cold = await send();
  const latencies: number[] = [];
  let errors = 0;
  let firstError = cold.status === 200 ? undefined : describe(cold);
  let last = cold;

  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < ctx.requests) {
      next += 1;
      const answer = await send();
      latencies.push(answer.ms);
      last = answer;
      if (answer.status !== 200) {
        errors += 1;
        firstError ??= describe(answer);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ctx.concurrency, ctx.requests) }, worker));
  const elapsedMs = performance.now() - started;

  return { scenario, cold, latencies, errors, elapsedMs, lastRows: rowsOf(scenario, last), firstError };
}

function request(baseUrl: string, agent: http.Agent, key: string, scenario: Scenario, body: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: http.OutgoingHttpHeaders = { 'x-api-key': key };
  if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(`${baseUrl}${scenario.path}`, { method: scenario.method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: err.message }));
    });
    // A failed request is a figure (an error), not a reason to stop the benchmark.
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, body: err.message }));
    req.end(payload);
  });
}

function rowsOf(scenario: Scenario, answer: Answer): number {
  if (answer.status !== 200) return 0;
  try {
    return scenario.rows(JSON.parse(answer.body));
  } catch {
    return 0;
  }
}

const describe = (answer: Answer) => `${answer.status === 0 ? 'no answer' : `HTTP ${answer.status}`}: ${answer.body.slice(0, 500)}`;

// ---------------------------------------------------------------- figures

interface Stats {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  perSecond: number;
}

function stats(result: ScenarioResult): Stats {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  // Nearest rank: the smallest latency at or above which the given share of requests fall.
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
  return {
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
    perSecond: result.latencies.length / (result.elapsedMs / 1000),
  };
}

const cacheLabel = (s: Scenario) => s.cache ?? '-';

function scenarioLine(result: ScenarioResult, keyLabel: string): string {
  const s = stats(result);
  return (
    `${`${result.scenario.name} [${keyLabel}, ${cacheLabel(result.scenario)}]`.padEnd(44)} ` +
    `cold ${ms(result.cold.ms).padStart(6)} ms (${result.cold.status})  ` +
    `${result.latencies.length} req  ${result.errors} err  ` +
    `p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  p99 ${ms(s.p99)}  max ${ms(s.max)} ms  ` +
    `${s.perSecond.toFixed(1)} req/s  ${result.lastRows} rows`
  );
}

/** Samples RSS from construction to stop(), so the peak includes chDB's memory while queries run. */
class MemoryWatch {
  readonly before = process.memoryUsage();
  after: NodeJS.MemoryUsage | undefined;
  peakRss = this.before.rss;
  private readonly timer = setInterval(() => this.sample(), MEMORY_SAMPLE_MS);

  private sample(): void {
    this.peakRss = Math.max(this.peakRss, process.memoryUsage.rss());
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
    this.after = process.memoryUsage();
  }
}

function memoryLines(m: MemoryWatch): string[] {
  return [
    `memory before load: RSS ${mb(m.before.rss)} MB, heap used ${mb(m.before.heapUsed)} MB`,
    `peak RSS during load (sampled every ${MEMORY_SAMPLE_MS} ms): ${mb(m.peakRss)} MB`,
    `memory after load:  RSS ${mb(m.after?.rss)} MB, heap used ${mb(m.after?.heapUsed)} MB`,
  ];
}

function markdown(
  options: Options,
  dataset: Dataset,
  results: ScenarioResult[],
  memory: MemoryWatch,
  keys: Record<KeyName, { label: string }>,
): string {
  const totalRows = Object.values(dataset.rows).reduce((a, b) => a + b, 0);
  const build = dataset.buildSeconds === undefined ? 'reused' : `built in ${dataset.buildSeconds.toFixed(1)} s`;
  const lines = [
    `Demo scale ${options.demo.scale}, ${options.demo.days} days (${totalRows.toLocaleString('en-US')} rows, ${build}); ` +
      `${options.requests} requests per scenario at concurrency ${options.concurrency}; Node ${process.version}, ${os.cpus().length} CPUs.`,
    '',
    '| Scenario | Key | Cache | Cold ms | Requests | Errors | p50 ms | p95 ms | p99 ms | Max ms | Req/s | Rows |',
    '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...results.map((r) => {
      const s = stats(r);
      const cold = r.cold.status === 200 ? ms(r.cold.ms) : `${ms(r.cold.ms)} (${r.cold.status})`;
      return `| ${r.scenario.name} | ${keys[r.scenario.key].label} | ${cacheLabel(r.scenario)} | ${cold} | ${r.latencies.length} | ${r.errors} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${ms(s.max)} | ${s.perSecond.toFixed(1)} | ${r.lastRows} |`;
    }),
    '',
    '| Memory | RSS MB | Heap used MB |',
    '|---|--:|--:|',
    `| before load | ${mb(memory.before.rss)} | ${mb(memory.before.heapUsed)} |`,
    `| peak during load | ${mb(memory.peakRss)} | |`,
    `| after load | ${mb(memory.after?.rss)} | ${mb(memory.after?.heapUsed)} |`,
    '',
    'Cache: `cached` is the plain query; `renewQuery` adds renewQuery: true, which Cube 0.33 still answers from its result cache until ' +
      'its 10 s refresh key changes; `uncached` also adds a filter that excludes nothing but differs per request, so every request runs in ClickHouse. ' +
      'Cold: the first request of the row. RSS includes the in-process chDB engine.',
  ];
  return lines.join('\n');
}

const ms = (value: number) => (Number.isNaN(value) ? '-' : value < 10 ? value.toFixed(1) : value.toFixed(0));
const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 1024 / 1024).toFixed(0));
const log = (line: string) => process.stdout.write(`${line}\n`);

// Exits explicitly: Cube 0.33's core keeps the process alive after shutdown().
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
