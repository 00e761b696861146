import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseConfig, type DemoConfig } from '../src/config';
import { DEMO_ACCOUNTS } from '../src/warehouse/reference-data';
import type { LocalService } from '../src/assembly';
import { LoadAnswer } from '../src/cube/answer';
import type { CubeService } from '../src/cube/service';
import { createExporter } from '../src/export/exporter';
import { createApp } from '../src/http/app';
import { createAuthenticator } from '../src/keys/authenticator';
import { createLogger } from '../src/log';
import { API_KEY, startBenchService } from './service';
import { FLOOR_KINDS, listen, startCeiling, startFloor, type BareEndpoint } from './ceiling';
import { prepareDataset, type Dataset } from './dataset';
import { directSql, type DirectSql } from './direct-sql';
import { describe, outcomeOf, runConcurrently, send, type Answer, type Run } from './http-load';
import { MemoryWatch } from './memory';
import { log, mb, ms, perSecond, signedMs, stats, table } from './report';
import {
  FUNNEL_PERCENT,
  GROUPED_100,
  LARGEST,
  loadScenarios,
  queryOf,
  requestNumberOf,
  SIMPLE_COUNT,
  type KeyName,
  type LoadScenario,
  type Query,
} from './scenarios';

/**
 * Load benchmark: `npm run bench -- [--scale 0.2] [--days 90] [--requests 200]
 * [--concurrency 1] [--cached-requests 10000] [--cached-concurrency 64]
 * [--mixed-requests 100] [--mixed-concurrency 4] [--largest-requests 5] [--only compare,cached,mixed,largest]
 * [--shapes 'simple count,group-by'] [--data-dir DIR]`. Builds (or reuses) the demo
 * dataset, serves the real service on a free port and prints four markdown
 * tables, each measured in this one run, then issue 21's targets beside
 * what the run measured:
 * - compare: every query shape through the API over real HTTP, next to the
 *   exact SQL Cube generates for it run straight on the same engine, in
 *   alternating blocks at the same concurrency; for the uncached rows issue
 *   21's target judges also the floor: that SQL behind bare HTTP servers on
 *   the same loopback, and behind our own app with Cube's load replaced by it;
 * - cached: one repeated query at 64 connections, next to a bare Express
 *   endpoint answering the same bytes (the ceiling);
 * - mixed: short dashboard queries alone and while a slow one runs;
 * - largest: the worst event-loop delay of one 50,000-row answer on each
 *   load route, next to the same SQL on the engine and an idle probe.
 * Figures only: it exits 1 when setup fails, never because of the figures.
 * With --data-dir the data is kept, and a later run at the same scale and
 * days reuses it.
 */

const SECTIONS = ['compare', 'cached', 'mixed', 'largest'] as const;
type Section = (typeof SECTIONS)[number];

interface Options {
  demo: DemoConfig;
  requests: number;
  concurrency: number;
  cachedRequests: number;
  cachedConcurrency: number;
  mixedRequests: number;
  largestRequests: number;
  mixedConcurrency: number;
  sections: Set<Section>;
  /** Compare only the shapes whose names hold one of these; all when undefined. */
  shapes: string[] | undefined;
  /** Undefined: a fresh temporary directory, removed at the end. */
  dataDir: string | undefined;
}

/** One figure of issue 21 beside its target and what it is compared with in the same run. */
interface TargetRow {
  figure: string;
  target: string;
  measured: string;
  met: boolean | undefined;
}

/** Filled by the sections as they measure; printed last. */
const targets: TargetRow[] = [];

const verdict = (met: boolean | undefined) => (met === undefined ? '-' : met ? 'yes' : 'no');

/** API and direct runs alternate in blocks this size, so both see the same load from the rest of the machine. */
const BLOCK = 25;
const LOAD_PATH = '/v1/data/load/';
const MB = 1024 * 1024;
const CACHED_WARM_UP = 2000;

interface Target {
  baseUrl: string;
  agent: http.Agent;
  keys: Record<KeyName, { label: string; key: string }>;
  service: LocalService;
}

async function main(): Promise<number> {
  const options = parseOptions();
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'analytics-api-bench-'));
  try {
    const dataset = await prepareDataset(dataDir, options.demo);
    const [account, otherAccount] = DEMO_ACCOUNTS;
    const service = await startBenchService(
      dataDir,
      // Rate limits would answer 429 to the load and measure the limiter instead of the query path.
      {
        RATE_LIMIT_REQUESTS: '1000000',
        RATE_LIMIT_UNAUTHENTICATED: '1000000',
        RATE_LIMIT_CONCURRENT: '1000',
        QUERY_TIMEOUT_SECONDS: '120',
        // So the cost of the result cache and the SQL plans can be measured: RESULT_CACHE_MB=0 (or CUBE_SQL_PLANS=0) npm run bench …
        ...pick(process.env, ['RESULT_CACHE_MB', 'RESULT_CACHE_SECONDS', 'CUBE_CACHE_MB', 'CUBE_SQL_PLANS']),
      },
      [account, otherAccount],
    );
    const server = service.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const target: Target = {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      agent: new http.Agent({ keepAlive: true, maxSockets: Math.max(options.concurrency, options.cachedConcurrency, options.mixedConcurrency) + 1 }),
      keys: {
        account: { label: account, key: service.accountKeys[account] },
        otherAccount: { label: otherAccount, key: service.accountKeys[otherAccount] },
        operator: { label: 'operator', key: API_KEY },
      },
      service,
    };
    log(`\nserving ${target.baseUrl}\n`);

    // Idle: the models compiled and nothing asked yet; a second for what start-up left to settle.
    await sleep(1000);
    const memory = new MemoryWatch();
    const idleRss = memory.before.rss;
    targets.push({ figure: 'RSS idle, models compiled', target: '≤ 400 MB', measured: `${mb(idleRss)} MB`, met: idleRss <= 400 * MB });
    const tables: string[] = [];
    if (options.sections.has('compare')) tables.push(await compareSection(target, options));
    if (options.sections.has('cached')) tables.push(await cachedSection(target, options, memory));
    if (options.sections.has('mixed')) tables.push(await mixedSection(target, options));
    // Last: its 50,000-row answers leave the heap larger, which the memory under load above would otherwise carry.
    if (options.sections.has('largest')) {
      memory.mark('largest answers');
      tables.push(await largestSection(target, options));
    }
    memory.stop();

    target.agent.destroy();
    server.closeAllConnections();
    server.close();
    await service.close();

    log('');
    log(header(options, dataset));
    for (const t of tables) log(`\n${t}`);
    log(`\n${memory.table()}`);
    const underLoad = memory.peakOf('cached run (service)');
    if (underLoad !== undefined) {
      targets.push({
        figure: `RSS under ${options.cachedConcurrency} connections (peak, cached run)`,
        target: '≤ 600 MB',
        measured: `${mb(underLoad)} MB`,
        met: underLoad <= 600 * MB,
      });
    }
    log('\nIssue 21 targets, each measured in this run beside what it is compared with:\n');
    log(
      table(
        ['Figure', 'Target', 'Measured (comparison in the same run)', 'Met'],
        ['l', 'l', 'l', 'l'],
        targets.map((t) => [t.figure, t.target, t.measured, verdict(t.met)]),
      ),
    );
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
      concurrency: { type: 'string', default: '1' },
      'cached-requests': { type: 'string', default: '10000' },
      'cached-concurrency': { type: 'string', default: '64' },
      'mixed-requests': { type: 'string', default: '100' },
      'largest-requests': { type: 'string', default: '5' },
      'mixed-concurrency': { type: 'string', default: '4' },
      only: { type: 'string', default: SECTIONS.join(',') },
      shapes: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    strict: true,
  });
  // parseConfig checks scale and days against the service's own bounds and supplies its demo seed.
  const { demo } = parseConfig({ DEMO_SCALE: values.scale, DEMO_DAYS: values.days });
  const sections = values.only.split(',').map((s) => s.trim());
  for (const s of sections) {
    if (!(SECTIONS as readonly string[]).includes(s))
      throw new Error(`--only takes a comma-separated list of ${SECTIONS.join(', ')}; got ${JSON.stringify(s)}`);
  }
  return {
    demo,
    requests: positiveInteger(values.requests, 'requests'),
    concurrency: positiveInteger(values.concurrency, 'concurrency'),
    cachedRequests: positiveInteger(values['cached-requests'], 'cached-requests'),
    cachedConcurrency: positiveInteger(values['cached-concurrency'], 'cached-concurrency'),
    mixedRequests: positiveInteger(values['mixed-requests'], 'mixed-requests'),
    largestRequests: positiveInteger(values['largest-requests'], 'largest-requests'),
    mixedConcurrency: positiveInteger(values['mixed-concurrency'], 'mixed-concurrency'),
    sections: new Set(sections as Section[]),
    shapes: values.shapes?.split(',').map((s) => s.trim()),
    dataDir: values['data-dir'] === undefined ? undefined : path.resolve(values['data-dir']),
  };
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name] as string]])));
}

function positiveInteger(raw: string, name: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

function header(options: Options, dataset: Dataset): string {
  const totalRows = Object.values(dataset.rows).reduce((a, b) => a + b, 0);
  const build = dataset.buildSeconds === undefined ? 'reused' : `built in ${dataset.buildSeconds.toFixed(1)} s`;
  return (
    `Demo scale ${options.demo.scale}, ${options.demo.days} days (${totalRows.toLocaleString('en-US')} rows, ${build}); ` +
    `Node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end.`
  );
}

// ---------------------------------------------------------------- requests

/** Requests sent so far by this process: numbers the uncached variant's filter values, so none repeats. */
let sent = 0;

function loadRequest(target: Target, scenario: LoadScenario): Promise<Answer> {
  return send(target.baseUrl, target.agent, {
    method: 'POST',
    path: LOAD_PATH,
    key: target.keys[scenario.key].key,
    body: { query: queryOf(scenario, sent++) },
  });
}

const rowsOf = (answer: Answer) => {
  try {
    const data = (JSON.parse(answer.body) as { data?: unknown }).data;
    return Array.isArray(data) ? data.length : 0;
  } catch {
    return 0;
  }
};

// ---------------------------------------------------------------- compare

async function compareSection(target: Target, options: Options): Promise<string> {
  log(`compare: ${options.requests} requests per row at concurrency ${options.concurrency}, API and direct SQL in alternating blocks of ${BLOCK}`);
  const rows: string[][] = [];
  const floorRows: string[][] = [];
  const client = target.service.warehouse.queryClient(target.service.config.query);
  const wanted = (s: LoadScenario) => options.shapes === undefined || options.shapes.some((name) => s.shape.name.includes(name));
  for (const scenario of loadScenarios().filter(wanted)) {
    const { label, key } = target.keys[scenario.key];
    const direct = await directSql(scenario, { baseUrl: target.baseUrl, agent: target.agent, key }, client);
    const cold = await loadRequest(target, scenario);
    // Issue 21's uncached target judges these rows; their floors are measured beside them.
    const judged = scenario.cache === 'uncached' && (scenario.shape === SIMPLE_COUNT || scenario.shape === GROUPED_100);
    const floors = (judged ? await startFloors(target, direct) : []).map((floor) => ({ ...floor, runs: [] as Run[], rows: 0 }));
    const api: Run[] = [];
    const sql: Run[] = [];
    let rowsSeen = rowsOf(cold);
    const cpu = new Map<string, number>();
    const timedCpu = async (which: string, run: () => Promise<Run>) => {
      const before = process.cpuUsage();
      const result = await run();
      const used = process.cpuUsage(before);
      cpu.set(which, (cpu.get(which) ?? 0) + (used.user + used.system) / 1000);
      return result;
    };
    const cpuPerRequest = (which: string) => (cpu.get(which) ?? 0) / options.requests;
    for (let done = 0; done < options.requests; done += BLOCK) {
      const count = Math.min(BLOCK, options.requests - done);
      api.push(
        await timedCpu('api', () =>
          runConcurrently(count, options.concurrency, async () => {
            const answer = await loadRequest(target, scenario);
            if (answer.status === 200) rowsSeen = rowsOf(answer);
            return outcomeOf(answer);
          }),
        ),
      );
      sql.push(await timedCpu('sql', () => runConcurrently(count, options.concurrency, () => direct.run(sent++))));
      for (const floor of floors) {
        floor.runs.push(
          await timedCpu(floor.kind, () =>
            runConcurrently(count, options.concurrency, async () => {
              const answer = await send(floor.endpoint.baseUrl, target.agent, {
                method: 'POST',
                path: LOAD_PATH,
                key,
                body: { query: queryOf(scenario, sent++) },
              });
              if (answer.status === 200) floor.rows = rowsOf(answer);
              return outcomeOf(answer);
            }),
          ),
        );
      }
    }
    for (const floor of floors) floor.endpoint.close();
    const a = merge(api);
    const d = merge(sql);
    const sa = stats(a);
    const sd = stats(d);
    const name = `${scenario.shape.name} [${label}, ${scenario.cache}]`;
    log(
      `  ${name.padEnd(52)} API p50 ${ms(sa.p50)} p99 ${ms(sa.p99)}  SQL p50 ${ms(sd.p50)} p99 ${ms(sd.p99)}  ` +
        `Δ p50 ${signedMs(sa.p50 - sd.p50)}  CPU/req ${ms(cpuPerRequest('api'))} vs ${ms(cpuPerRequest('sql'))} ms  errors ${a.errors}/${d.errors}  ${rowsSeen} rows`,
    );
    const shapeAndKey = `${scenario.shape.name} [${label}]`;
    const floorRow = (endpoint: string, run: Run, cpuMs: number, rows: number) => {
      const s = stats(run);
      return [shapeAndKey, endpoint, ms(s.p50), ms(s.p99), signedMs(s.p50 - sd.p50), signedMs(s.p99 - sd.p99), ms(cpuMs), String(run.errors), String(rows)];
    };
    const floorDeltas: string[] = [];
    if (floors.length > 0) floorRows.push(floorRow('the API (our app and Cube)', a, cpuPerRequest('api'), rowsSeen));
    for (const floor of floors) {
      const f = merge(floor.runs);
      const sf = stats(f);
      floorDeltas.push(`${floor.kind.split(' + ')[0]} ${signedMs(sf.p50 - sd.p50)}`);
      log(
        `    floor, ${floor.kind}: p50 ${ms(sf.p50)} p99 ${ms(sf.p99)}  Δ p50 ${signedMs(sf.p50 - sd.p50)}  CPU/req ${ms(cpuPerRequest(floor.kind))} ms  errors ${f.errors}  ${floor.rows} rows`,
      );
      if (f.firstError) log(`    first ${floor.kind} error: ${f.firstError}`);
      floorRows.push(floorRow(floor.kind, f, cpuPerRequest(floor.kind), floor.rows));
    }
    if (floors.length > 0) floorRows.push(floorRow('the same SQL on the engine', d, cpuPerRequest('sql'), rowsSeen));
    if (judged) {
      const overhead = sa.p50 - sd.p50;
      targets.push({
        figure: `Uncached overhead, ${scenario.shape.name} [${label}]`,
        target: 'API p50 − SQL p50 ≤ 3 ms',
        measured: `${signedMs(overhead)} ms (API ${ms(sa.p50)}, same SQL on the engine ${ms(sd.p50)}; the floors: ${floorDeltas.join(', ')} ms)`,
        met: overhead <= 3,
      });
    }
    if (a.firstError) log(`    first API error: ${a.firstError}`);
    if (d.firstError) log(`    first SQL error: ${d.firstError}`);
    rows.push([
      scenario.shape.name,
      label,
      scenario.cache,
      cold.status === 200 ? ms(cold.ms) : `${ms(cold.ms)} (${cold.status})`,
      ms(sa.p50),
      ms(sa.p99),
      ms(sd.p50),
      ms(sd.p99),
      signedMs(sa.p50 - sd.p50),
      signedMs(sa.p99 - sd.p99),
      ms(cpuPerRequest('api')),
      ms(cpuPerRequest('sql')),
      perSecond(sa.perSecond),
      String(a.errors + d.errors),
      String(rowsSeen),
    ]);
  }
  return [
    `Each query shape through the API and as the SQL Cube generates for it (account condition included) on the same chDB ` +
      `connection: ${options.requests} requests each at concurrency ${options.concurrency}, alternating in blocks of ${BLOCK}. ` +
      "CPU ms/req: this process's CPU time (all threads: Node, chDB and the HTTP client) per request, less sensitive than latency to other jobs on the machine.",
    '',
    table(
      [
        'Shape',
        'Key',
        'Cache',
        'Cold ms',
        'API p50',
        'API p99',
        'SQL p50',
        'SQL p99',
        'Δ p50',
        'Δ p99',
        'API CPU ms/req',
        'SQL CPU ms/req',
        'API req/s',
        'Errors',
        'Rows',
      ],
      ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      rows,
    ),
    ...(floorRows.length === 0
      ? []
      : [
          '',
          `The floor under each row issue 21's uncached target judges, in the same alternating blocks: the API's own requests answered with their SQL on the same connection, ` +
            `behind a bare server on the same loopback (HTTP and JSON only: no key check, limits, middleware or Cube; the rows as JSON objects), ` +
            `and behind our own app with its load route's call to Cube answered by that SQL (our middleware, route and answer; no Cube). ` +
            'Δ: over the same SQL on the engine. What the API adds above the bare floor is what the service could still cut.',
          '',
          table(
            ['Shape', 'Endpoint', 'p50', 'p99', 'Δ p50', 'Δ p99', 'CPU ms/req', 'Errors', 'Rows'],
            ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
            floorRows,
          ),
        ]),
  ].join('\n');
}

/**
 * The floors of an uncached row, each answering the API's own request with
 * that request's SQL run on the service's engine: bare servers (HTTP and
 * JSON only), and our app as the service builds it (request id, Server-Timing,
 * security headers, the key check, rate limits, the load route and its
 * answer) with a stand-in for Cube's load.
 */
async function startFloors(target: Target, direct: DirectSql): Promise<{ kind: string; endpoint: BareEndpoint }[]> {
  const rows = (query: Query) => direct.rows(requestNumberOf(query));
  const bare = await Promise.all(
    FLOOR_KINDS.map(async (kind) => ({
      kind: `${kind} + the same SQL`,
      endpoint: await startFloor(kind, LOAD_PATH, async (body) => ({ data: await rows((body as { query: Query }).query) })),
    })),
  );
  const { service } = target;
  const { config } = service;
  const cube: CubeService = {
    ...service.cube,
    load: async (query) =>
      new LoadAnswer(
        {
          query,
          data: await rows(query),
          lastRefreshTime: new Date().toISOString(),
          annotation: { measures: {}, dimensions: {}, segments: {}, timeDimensions: {} },
          slowQuery: false,
          total: null,
        },
        false,
      ),
  };
  const app = createApp({
    config,
    cube,
    admission: service.admission,
    exporter: createExporter({ cube, warehouse: service.warehouse, limits: config.query, caps: config.exports }),
    authenticator: createAuthenticator({ operatorKeys: config.apiKeys, ring: service.ring }),
    logger: createLogger('error', () => {}),
    readiness: service.readiness,
    gate: service.gate,
    metrics: service.metrics,
  });
  return [...bare, { kind: 'our app + the same SQL for Cube', endpoint: await listen(app) }];
}

function merge(runs: Run[]): Run {
  return {
    latencies: runs.flatMap((r) => r.latencies),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    elapsedMs: runs.reduce((n, r) => n + r.elapsedMs, 0),
    firstError: runs.find((r) => r.firstError)?.firstError,
  };
}

// ---------------------------------------------------------------- largest

/** The issue-21 target: no single request holds the event loop longer than this, at scale 1. */
export const EVENT_LOOP_TARGET_MS = 100;

/**
 * The worst event-loop delay while `run` is the only work of the process,
 * sampled every millisecond (the bench's own client included: it only
 * gathers the answer's bytes while measured). The histogram records a
 * delay when its timer fires after it, so a block at the very end of `run`
 * (the last parse of an answer) counts only once a timer has had its turn.
 */
async function worstDelayDuring<T>(run: () => Promise<T>): Promise<{ result: T; worstMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    const result = await run();
    await sleep(2);
    return { result, worstMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

async function largestSection(target: Target, options: Options): Promise<string> {
  const scenario: LoadScenario = { shape: LARGEST, key: 'account', cache: 'uncached' };
  const { label, key } = target.keys[scenario.key];
  const client = target.service.warehouse.queryClient(target.service.config.query);
  const direct = await directSql(scenario, { baseUrl: target.baseUrl, agent: target.agent, key }, client);
  const routes = [
    { name: 'POST /v1/data/load/', path: LOAD_PATH },
    { name: 'POST /cubejs-api/v1/load', path: '/cubejs-api/v1/load' },
  ];
  log(`largest: ${scenario.shape.name}, ${options.largestRequests} uncached requests per route, one at a time, event-loop delay sampled every 1 ms`);
  const rows: string[][] = [];
  const worst = { idle: 0, sql: 0, api: 0 };
  const idle: number[] = [];
  const sqlDelays: number[] = [];
  const sqlMs: number[] = [];
  const byRoute = routes.map(() => ({ delays: [] as number[], latencies: [] as number[], rows: 0, bytes: 0, errors: 0 }));
  // Alternated, so each sees the same load from the rest of the machine.
  for (let i = 0; i < options.largestRequests; i += 1) {
    const quiet = await worstDelayDuring(() => sleep(200));
    idle.push(quiet.worstMs);
    const sql = await worstDelayDuring(() => direct.run(sent++));
    sqlDelays.push(sql.worstMs);
    sqlMs.push(sql.result.ms);
    for (const [r, route] of routes.entries()) {
      const { result: answer, worstMs } = await worstDelayDuring(() =>
        send(target.baseUrl, target.agent, { method: 'POST', path: route.path, key, body: { query: queryOf(scenario, sent++) } }),
      );
      const seen = byRoute[r];
      seen.delays.push(worstMs);
      seen.latencies.push(answer.ms);
      if (answer.status === 200) {
        seen.rows = rowsOf(answer);
        seen.bytes = Buffer.byteLength(answer.body);
      } else {
        seen.errors += 1;
        log(`    ${route.name}: ${describe(answer)}`);
      }
    }
  }
  worst.idle = Math.max(...idle);
  worst.sql = Math.max(...sqlDelays);
  const median = (values: number[]) => stats({ latencies: values, errors: 0, elapsedMs: 1 }).p50;
  for (const [r, route] of routes.entries()) {
    const seen = byRoute[r];
    const routeWorst = Math.max(...seen.delays);
    worst.api = Math.max(worst.api, routeWorst);
    log(
      `  ${route.name}: worst event-loop delay ${ms(routeWorst)} ms (median of requests ${ms(median(seen.delays))}), p50 ${ms(median(seen.latencies))} ms, ${seen.rows} rows, ${seen.bytes} bytes`,
    );
    rows.push([
      route.name,
      label,
      ms(routeWorst),
      ms(median(seen.delays)),
      ms(median(seen.latencies)),
      String(seen.rows),
      (seen.bytes / 1e6).toFixed(1),
      String(seen.errors),
    ]);
  }
  rows.push(['the same SQL on the engine', label, ms(worst.sql), ms(median(sqlDelays)), ms(median(sqlMs)), '', '', '']);
  rows.push(['nothing (200 ms asleep)', '-', ms(worst.idle), ms(median(idle)), '', '', '', '']);
  log(`  same SQL on the engine: worst ${ms(worst.sql)} ms; idle: worst ${ms(worst.idle)} ms`);
  targets.push({
    figure: `Worst event-loop delay, one ${scenario.shape.name} request (both routes)`,
    target: `≤ ${EVENT_LOOP_TARGET_MS} ms`,
    measured: `${ms(worst.api)} ms (same SQL on the engine ${ms(worst.sql)}, idle ${ms(worst.idle)})`,
    met: worst.api <= EVENT_LOOP_TARGET_MS,
  });
  return [
    `The largest answer, \`${scenario.shape.name}\` (uncached), ${options.largestRequests} requests per route one at a time, alternating with ` +
      `the same SQL on the engine (its rows parsed as the service's driver parses them) and 200 ms of nothing: the worst event-loop delay during each ` +
      `(monitorEventLoopDelay, 1 ms resolution). Target: ≤ ${EVENT_LOOP_TARGET_MS} ms for every request; the idle row is the machine's own noise.`,
    '',
    table(['Request', 'Key', 'Worst delay ms', 'Median of worst ms', 'p50 ms', 'Rows', 'MB', 'Errors'], ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'], rows),
  ].join('\n');
}

// ---------------------------------------------------------------- cached

async function cachedSection(target: Target, options: Options, memory: MemoryWatch): Promise<string> {
  const scenario: LoadScenario = { shape: SIMPLE_COUNT, key: 'otherAccount', cache: 'cached' };
  const { key, label } = target.keys[scenario.key];
  const body = { query: queryOf(scenario, 0) };
  const warm = await send(target.baseUrl, target.agent, { method: 'POST', path: LOAD_PATH, key, body });
  if (warm.status !== 200) throw new Error(`cached run: the first request failed: ${warm.body.slice(0, 500)}`);
  const ceiling = await startCeiling(LOAD_PATH, warm.body);
  log(
    `cached: ${options.cachedRequests} requests at ${options.cachedConcurrency} connections after ${Math.min(CACHED_WARM_UP, options.cachedRequests)} untimed, service then bare Express (${Buffer.byteLength(warm.body)} bytes)`,
  );

  const timed = (baseUrl: string) => () => send(baseUrl, target.agent, { method: 'POST', path: LOAD_PATH, key, body }).then(outcomeOf);
  const cpuPerRequest = async (run: () => Promise<Run>) => {
    const before = process.cpuUsage();
    const result = await run();
    const used = process.cpuUsage(before);
    return { result, cpu: (used.user + used.system) / 1000 / options.cachedRequests };
  };
  // Untimed first: both servers' code paths are compiled by V8 before either is measured.
  const warmUp = Math.min(CACHED_WARM_UP, options.cachedRequests);
  await runConcurrently(warmUp, options.cachedConcurrency, timed(target.baseUrl));
  await runConcurrently(warmUp, options.cachedConcurrency, timed(ceiling.baseUrl));
  memory.mark('cached run (service)');
  const { result: service, cpu: serviceCpu } = await cpuPerRequest(() =>
    runConcurrently(options.cachedRequests, options.cachedConcurrency, timed(target.baseUrl)),
  );
  memory.mark('cached run (bare)');
  const { result: bare, cpu: bareCpu } = await cpuPerRequest(() => runConcurrently(options.cachedRequests, options.cachedConcurrency, timed(ceiling.baseUrl)));
  memory.mark('the rest');
  ceiling.close();

  const s = stats(service);
  const b = stats(bare);
  const rows = [
    ['service', label, perSecond(s.perSecond), ms(s.p50), ms(s.p99), ms(serviceCpu), String(service.errors)],
    ['bare Express 5, same bytes', '-', perSecond(b.perSecond), ms(b.p50), ms(b.p99), ms(bareCpu), String(bare.errors)],
  ];
  const ratio = s.perSecond / b.perSecond;
  log(
    `  service ${perSecond(s.perSecond)} req/s p50 ${ms(s.p50)} p99 ${ms(s.p99)}; bare ${perSecond(b.perSecond)} req/s p50 ${ms(b.p50)} p99 ${ms(b.p99)}; ratio ${(ratio * 100).toFixed(0)}%`,
  );
  if (service.firstError) log(`    first error: ${service.firstError}`);
  targets.push({
    figure: `Cached query at ${options.cachedConcurrency} connections, req/s`,
    target: '≥ 60% of the bare endpoint',
    measured: `${(ratio * 100).toFixed(0)}% (${perSecond(s.perSecond)} of ${perSecond(b.perSecond)} req/s)`,
    met: ratio >= 0.6,
  });
  targets.push({
    figure: `Cached query at ${options.cachedConcurrency} connections, p99`,
    target: '≤ 2 × the bare endpoint’s p99',
    measured: `${(s.p99 / b.p99).toFixed(2)} × (${ms(s.p99)} vs ${ms(b.p99)} ms)`,
    met: s.p99 <= 2 * b.p99,
  });
  return [
    `One repeated (cached) query, \`${SIMPLE_COUNT.name}\`, ${options.cachedRequests} requests at ${options.cachedConcurrency} connections ` +
      `(after ${Math.min(CACHED_WARM_UP, options.cachedRequests)} untimed to each endpoint). ` +
      `Service / bare: ${(ratio * 100).toFixed(0)}% of the requests per second. ` +
      "CPU ms/req: this process's CPU time per request, the load-generating client included.",
    '',
    table(['Endpoint', 'Key', 'Req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'Errors'], ['l', 'l', 'r', 'r', 'r', 'r', 'r'], rows),
  ].join('\n');
}

// ---------------------------------------------------------------- mixed

async function mixedSection(target: Target, options: Options): Promise<string> {
  const short: LoadScenario = { shape: SIMPLE_COUNT, key: 'account', cache: 'uncached' };
  const slow: LoadScenario = { shape: FUNNEL_PERCENT, key: 'operator', cache: 'uncached' };
  log(`mixed: ${options.mixedRequests} short queries at concurrency ${options.mixedConcurrency}, alone and while ${slow.shape.name} runs in a loop`);
  const shortRun = () => runConcurrently(options.mixedRequests, options.mixedConcurrency, async () => outcomeOf(await loadRequest(target, short)));

  const alone = await shortRun();
  let running = true;
  const slowLatencies: number[] = [];
  const slowLoop = (async () => {
    while (running) slowLatencies.push((await loadRequest(target, slow)).ms);
  })();
  const mixed = await shortRun();
  running = false;
  await slowLoop;

  const sa = stats(alone);
  const sm = stats(mixed);
  const ss = stats({ latencies: slowLatencies, errors: 0, elapsedMs: 1 });
  log(`  short alone p50 ${ms(sa.p50)} p99 ${ms(sa.p99)}; with the slow query p50 ${ms(sm.p50)} p99 ${ms(sm.p99)}; slow p50 ${ms(ss.p50)}`);
  return [
    `Short dashboard queries (\`${short.shape.name}\`, uncached, ${options.mixedRequests} at concurrency ${options.mixedConcurrency}) alone and while ` +
      `\`${slow.shape.name}\` (uncached, p50 ${ms(ss.p50)} ms) runs back to back on one more connection.`,
    '',
    table(
      ['Short queries', 'p50 ms', 'p99 ms', 'Max ms', 'Errors'],
      ['l', 'r', 'r', 'r', 'r'],
      [
        ['alone', ms(sa.p50), ms(sa.p99), ms(sa.max), String(alone.errors)],
        [`while ${slow.shape.name} runs`, ms(sm.p50), ms(sm.p99), ms(sm.max), String(mixed.errors)],
      ],
    ),
  ].join('\n');
}

// Exits explicitly: Cube 0.33's core keeps the process alive after shutdown().
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
