import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
// Before chdb: the allocator's options are read when the library loads.
import '../src/warehouse/allocator';
import { drainPending } from 'chdb';
import { createLogger } from '../src/log';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection';
import { TABLES } from '../src/warehouse/ddl';
import { quoteIdentifier } from '../src/warehouse/sql';
import { DEMO_ACCOUNTS } from '../src/warehouse/reference-data';
import { applyDdl, demoState, DEMO_MARKER } from '../src/warehouse/setup';
import { API_KEY, DATABASE, ROLLUP_DATABASE, startBenchService } from './service';

/**
 * Dashboard shapes at scale: `npm run bench:dashboards -- --data-dir DIR
 * [--requests 20] [--budget-seconds 20] [--shapes country,day,…] [--keys account|operator|both]`. DIR holds a finished demo build
 * (e.g. `CHDB_DATA_DIR=DIR DEMO_SCALE=130 npm run warehouse -- demo`, 100M
 * downloads). Adds projections the tables lack (timed), prints table and
 * projection sizes, then times each shape one request at a time: through the
 * API (uncached: a filter that excludes nothing, different per request, on a
 * column the projection holds), and the SQL Cube generates for it run
 * directly, with projections and with `optimize_use_projections = 0` (the
 * raw rows). A shape stops after --requests or --budget-seconds, whichever
 * comes first, with at least 3 requests (after one uncounted warm-up), or
 * exactly one, uncounted warm-up none, with --requests 1 (for the funnel at
 * 100M, whose every run reads the range's downloads and joins them). --shapes
 * keeps the shapes whose names contain one of the given words.
 */

interface Shape {
  name: string;
  /** A string dimension the shape's projection holds, for the uncached filter. */
  member: string;
  query: Record<string, unknown>;
}

const SHAPES: Shape[] = [
  {
    name: 'count by country, last 30 days',
    member: 'Downloads.country',
    query: { measures: ['Downloads.count'], dimensions: ['Downloads.country'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 30 days' }] },
  },
  {
    name: 'count by day, last 90 days',
    member: 'Downloads.country',
    query: { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 90 days' }] },
  },
  {
    name: 'PodcastEvents.count by parsedUa, last 30 days',
    member: 'PodcastEvents.parsedUa',
    query: {
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.parsedUa'],
      timeDimensions: [{ dimension: 'PodcastEvents.ts', dateRange: 'last 30 days' }],
    },
  },
  {
    name: 'funnel, last 7 days',
    member: 'WebEventsFromPodcastFunnel.step',
    query: {
      measures: ['WebEventsFromPodcastFunnel.conversions'],
      dimensions: ['WebEventsFromPodcastFunnel.step'],
      timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: 'last 7 days' }],
    },
  },
  {
    name: 'links by UTM source, last 30 days',
    member: 'LinksDashboard.utmSource',
    query: {
      measures: ['LinksDashboard.linkViewCount', 'LinksDashboard.uniqueLinkViewCount'],
      dimensions: ['LinksDashboard.utmSource'],
      timeDimensions: [{ dimension: 'LinksDashboard.timestamp', dateRange: 'last 30 days' }],
    },
  },
];

/** The settings the service's query client adds that change the plan (src/warehouse/connection.ts). */
const SERVICE_SETTINGS = 'optimize_rewrite_aggregate_function_with_if = 0';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      requests: { type: 'string', default: '20' },
      'budget-seconds': { type: 'string', default: '20' },
      shapes: { type: 'string' },
      keys: { type: 'string', default: 'both' },
    },
    strict: true,
  });
  if (!values['data-dir']) throw new Error('--data-dir DIR is required: a directory holding a finished demo build');
  const dataDir = path.resolve(values['data-dir']);
  const requests = Number(values.requests);
  const budgetMs = Number(values['budget-seconds']) * 1000;
  const words = values.shapes?.split(',').map((w) => w.trim().toLowerCase());
  const shapes = SHAPES.filter((shape) => !words || words.some((w) => shape.name.toLowerCase().includes(w)));
  if (!['account', 'operator', 'both'].includes(values.keys)) throw new Error('--keys must be account, operator or both');

  await prepare(dataDir);
  const account = DEMO_ACCOUNTS[0];
  const service = await startBenchService(dataDir, { RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_CONCURRENT: '1000', QUERY_TIMEOUT_SECONDS: '300' }, [account]);
  const server = service.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // The service's own engine connection: direct SQL runs in the same process and queue as the API's.
  const direct = await openWarehouse({ kind: 'chdb', dataDir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  const client = direct.client();

  const keys = [
    { label: account, key: service.accountKeys[account], kind: 'account' },
    { label: 'operator', key: API_KEY, kind: 'operator' },
  ].filter((k) => values.keys === 'both' || values.keys === k.kind);
  const rows: string[] = [];
  let sent = 0;
  for (const shape of shapes) {
    for (const { label, key } of keys) {
      const sql = await generatedSql(base, agent, key, shape.query);
      const plan = (
        await (await client.query({ query: `EXPLAIN projections = 1 ${sql} SETTINGS ${SERVICE_SETTINGS}`, format: 'JSONEachRow' })).json<{ explain: string }>()
      )
        .map((r) => r.explain)
        .join('\n');
      const reads = [...plan.matchAll(/ReadFromMergeTree \(([^)]+)\)/g)].map((m) => m[1]);
      const api = await timed(requests, budgetMs, async () => {
        const never = { member: shape.member, operator: 'notEquals', values: [`bench-no-such-value-${sent++}`] };
        const query = { ...shape.query, renewQuery: true, filters: [never] };
        const answer = await post(base, agent, key, '/v1/data/load/', { query });
        if (answer.status !== 200) throw new Error(`${shape.name} [${label}]: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
        return (JSON.parse(answer.body) as { data: unknown[] }).data.length;
      });
      const run = (settings: string) => async () => (await (await client.query({ query: `${sql} SETTINGS ${settings}`, format: 'JSONEachRow' })).json()).length;
      const projected = await timed(requests, budgetMs, run(SERVICE_SETTINGS));
      const raw = await timed(requests, budgetMs, run(`${SERVICE_SETTINGS}, optimize_use_projections = 0`));
      const line = `| ${shape.name} | ${label} | ${fmt(api.p50)} | ${fmt(api.p99)} | ${api.n} | ${fmt(projected.p50)} | ${fmt(raw.p50)} | ${fmt(api.p50 - projected.p50)} | ${api.rows} | ${[...new Set(reads)].join(', ')} |`;
      log(line);
      rows.push(line);
    }
  }
  agent.destroy();
  server.close();
  await direct.close();
  await service.close();

  const { rss, heapUsed } = process.memoryUsage();
  log(`RSS ${(rss / 2 ** 20).toFixed(0)} MB (peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB), heap ${(heapUsed / 2 ** 20).toFixed(0)} MB`);
  log('');
  log(
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GB, Node ${process.version}; one request at a time.`,
  );
  log('');
  log('| Shape | Key | API p50 ms | API p99 ms | Requests | SQL p50 ms (projection) | SQL p50 ms (raw rows) | API − SQL ms | Rows | Reads |');
  log('|---|---|--:|--:|--:|--:|--:|--:|--:|---|');
  for (const line of rows) log(line);
  return 0;
}

/** Adds missing projections (timed), then prints rows and bytes of each table and of its projections. */
async function prepare(dataDir: string): Promise<void> {
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  try {
    const state = await demoState(warehouse);
    if (state.kind !== 'complete')
      throw new Error(
        `${dataDir} holds no finished demo build (${state.kind}); build one with CHDB_DATA_DIR=${dataDir} DEMO_SCALE=… npm run warehouse -- demo`,
      );
    await applyDdl(
      warehouse,
      createLogger('info', (line) => log(`  ${line}`)),
    );
    await printSizes(warehouse);
  } finally {
    await warehouse.close();
    await drainPending();
  }
}

async function printSizes(warehouse: Warehouse): Promise<void> {
  const client = warehouse.client();
  const db = quoteIdentifier(DATABASE);
  const [marker] = await (
    await client.query({
      query: `SELECT scale, days, toString(end_date) AS end_date, toString(built_at) AS built_at FROM ${db}.${DEMO_MARKER}`,
      format: 'JSONEachRow',
    })
  ).json<Record<string, unknown>>();
  log(`demo build: ${JSON.stringify(marker)}`);
  const sizes = await (
    await client.query({
      query: `
        SELECT t.table AS table, t.rows AS rows, t.bytes AS bytes, ifNull(p.rows, 0) AS projection_rows, ifNull(p.bytes, 0) AS projection_bytes
        FROM (SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = {db:String} AND active GROUP BY table) AS t
        LEFT JOIN (SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.projection_parts WHERE database = {db:String} AND active GROUP BY table) AS p
          ON t.table = p.table
        WHERE t.table IN {tables:Array(String)}
        ORDER BY t.table`,
      query_params: { db: DATABASE, tables: [...TABLES] },
      format: 'JSONEachRow',
    })
  ).json<{ table: string; rows: string; bytes: string; projection_rows: string; projection_bytes: string }>();
  log('');
  log('| Table | Rows | On disk MB (with projections) | Projection rows | Projection MB | Projection share |');
  log('|---|--:|--:|--:|--:|--:|');
  for (const s of sizes) {
    const share = Number(s.projection_bytes) / Number(s.bytes);
    log(
      `| ${s.table} | ${Number(s.rows).toLocaleString('en-US')} | ${(Number(s.bytes) / 2 ** 20).toFixed(0)} | ${Number(s.projection_rows).toLocaleString('en-US')} | ${(Number(s.projection_bytes) / 2 ** 20).toFixed(1)} | ${(100 * share).toFixed(2)} % |`,
    );
  }
  log('');
}

interface Timing {
  n: number;
  p50: number;
  p99: number;
  rows: number;
}

async function timed(requests: number, budgetMs: number, run: () => Promise<number>): Promise<Timing> {
  const latencies: number[] = [];
  let rows = 0;
  const started = performance.now();
  // The first run warms caches and compiles; it is not counted, unless only one is asked for.
  if (requests > 1) await run();
  while (latencies.length < requests && (latencies.length < 3 || performance.now() - started < budgetMs)) {
    const t = performance.now();
    rows = await run();
    latencies.push(performance.now() - t);
  }
  const sorted = latencies.sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return { n: sorted.length, p50: at(50), p99: at(99), rows };
}

/** The SQL Cube generates, parameters inlined. */
async function generatedSql(base: string, agent: http.Agent, key: string, query: Record<string, unknown>): Promise<string> {
  const answer = await post(base, agent, key, '/cubejs-api/v1/sql', { query });
  if (answer.status !== 200) throw new Error(`sql: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
  const [text, params] = (JSON.parse(answer.body) as { sql: { sql: [string, unknown[]] } }).sql.sql;
  let next = 0;
  return text.replace(/\?/g, () => `'${String(params[next++]).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
}

function post(base: string, agent: http.Agent, key: string, route: string, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${route}`,
      { method: 'POST', agent, headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(1) : ms.toFixed(0));
const log = (line: string) => process.stdout.write(`${line}\n`);

// Exits explicitly: Cube 0.33's core keeps the process alive after shutdown().
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
