import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
// Before chdb, as in the service (src/index.ts): chDB's allocator reads its options when the library loads, so
// without this the exports were measured with the allocator's built-in options, not the service's.
import '../src/warehouse/allocator';
import { drainPending } from 'chdb';
import type { LocalService } from '../src/assembly';
import type { Query } from '../src/cube/service';
import { formatNamed, FORMAT_NAMES } from '../src/export/formats';
import { openWarehouse } from '../src/warehouse/connection';
import { demoState, DEMO_MARKER } from '../src/warehouse/setup';
import { statementTicket } from '../src/warehouse/statement-queue';
import { prepareDataset } from './dataset';
import { log, mb, ms, perSecond, table } from './report';
import { API_KEY, DATABASE, ROLLUP_DATABASE, startBenchService } from './service';

/**
 * Export benchmark: `npm run bench:export -- [--scale 1] [--rows 1000000] [--data-dir DIR]
 * [--repeat 3] [--formats csv,ndjson,parquet] [--client curl|node] [--slow-rows 1000000]
 * [--slow-kib-per-second 2048] [--raw-rows 150000,600000] [--raw-account cedar-street-studios]
 * [--max-block-size N,…] [--only grouped,raw,slow] [--purge]`. DIR may hold a finished demo build made by
 * `npm run warehouse -- demo` (used as it is; its scale is the build's), or
 * the benchmark builds its own demo at `scale` there.
 * For each format, `repeat` exports of `rows` rows through the API over real HTTP
 * (read as fast as the client can and written to a file: by curl, a process of
 * its own as a real client is, or with `--client node` by this process, whose
 * reading and garbage then count against the service), next to the same SQL run straight on the
 * engine into a file (chDB's streaming query; parquet: the engine writes the file, as
 * the export does; no Cube, no HTTP), alternated in one run:
 * the medians' rows/s, bytes, and RSS before, at its peak (sampled every 20 ms; chDB runs
 * in this process, so its memory counts) and after each run, Node's buffers at their peak and the
 * largest chunk chDB handed out. Beside that GROUP BY, `raw-rows` of one account's raw requests
 * (ungrouped, read in the table's order: no aggregation state in the engine) at each size, to tell
 * the export's own memory from the engine's; `--max-block-size` reruns each format with that
 * max_block_size on the streamed statements; `--purge` has the engine's allocator return its freed
 * pages before each run (SYSTEM JEMALLOC PURGE), so that each run's growth starts from the same floor. The ratio
 * API ÷ direct is the figure; the process's CPU seconds (every thread,
 * the engine's too) say what each run cost on a machine whose wall clock
 * other work shares. Then a slow reader: a csv export of `slow-rows`
 * rows read at `slow-kib-per-second` from its first byte, while a statement of its own (SELECT 1
 * through the engine's queue, as every query goes) is sent every 250 ms: how
 * long those waited says whether the reader holds the engine. Figures only:
 * it fails only when setup does.
 */

const SAMPLE_MS = 20;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: '1' },
      rows: { type: 'string', default: '1000000' },
      'data-dir': { type: 'string' },
      'slow-rows': { type: 'string', default: '1000000' },
      'slow-kib-per-second': { type: 'string', default: '2048' },
      repeat: { type: 'string', default: '3' },
      formats: { type: 'string', default: FORMAT_NAMES.join(',') },
      client: { type: 'string', default: 'curl' },
      'raw-rows': { type: 'string', default: '150000,600000' },
      'raw-account': { type: 'string', default: 'cedar-street-studios' },
      'max-block-size': { type: 'string', default: '' },
      purge: { type: 'boolean', default: false },
      only: { type: 'string', default: 'grouped,raw,slow' },
    },
  });
  const rows = Number(values.rows);
  if (values.client !== 'curl' && values.client !== 'node') throw new Error('--client must be curl or node');
  const dataDir = values['data-dir'] ?? mkdtempSync(path.join(os.tmpdir(), 'analytics-api-bench-'));
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-export-'));
  try {
    const built = values['data-dir'] ? await builtDemoScale(dataDir) : undefined;
    const scale = built ?? Number(values.scale);
    if (built === undefined) await prepareDataset(dataDir, { enabled: true, scale, seed: 20261122, days: 90 });
    else log(`using the finished demo build in ${dataDir} as it is (scale ${scale})`);
    const rawSizes = values['raw-rows'].split(',').filter(Boolean).map(Number);
    const blockVariants = values['max-block-size'].split(',').filter(Boolean).map(Number);
    const service = await startBenchService(
      dataDir,
      {
        QUERY_TIMEOUT_SECONDS: '600',
        EXPORT_MAX_ROWS: String(Math.max(rows, ...rawSizes)),
        RATE_LIMIT_CONCURRENT: '10',
        RATE_LIMIT_REQUESTS: '1000000',
        // No refresh worker building rollups while the formats are measured.
        CUBE_ROLLUP_REFRESH_SECONDS: '0',
      },
      [values['raw-account']],
    );
    const server = service.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const chunks = watchChunks(service);
    const directSql = async (query: Query, limit: number, accountId: string | null) => {
      const { sql, columns } = await service.cube.exportSql(query, limit, { requestId: 'bench-export', accountId, lane: 'bench' });
      return `SELECT ${columns.map((c) => `\`${c.alias}\` AS \`${c.member}\``).join(', ')} FROM (${sql}) LIMIT ${limit}`;
    };
    // With --purge the engine's allocator returns its freed pages before each run, so that a run's growth is all
    // the memory it took, not what the run before it left for it to reuse.
    const settle = values.purge
      ? () =>
          statementTicket.run({ lane: 'bench', signal: new AbortController().signal }, () =>
            service.warehouse.client().command({ query: 'SYSTEM JEMALLOC PURGE' }),
          )
      : undefined;
    const formats = values.formats.split(',').filter(Boolean);
    const repeat = Number(values.repeat);
    const only = new Set(values.only.split(','));
    const header = [
      'Export',
      'Rows/s (median)',
      'MB written',
      'RSS MB before / peak / after (median run)',
      'RSS growth MB (each run)',
      'Anon / file RSS growth MB (median run)',
      'arrayBuffers MB before / peak, external peak',
      'Largest chunk MB (chunks)',
      'CPU s (median run)',
      'Each run',
    ];
    const align: ('l' | 'r')[] = ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'];

    /** Per format, `repeat` exports through the API alternated with the same SQL on the engine, as the median runs' rows. */
    const compare = async (query: Query, limit: number, accountId: string | null): Promise<string[][]> => {
      const direct = await directSql(query, limit, accountId);
      const key = accountId === null ? API_KEY : service.accountKeys[accountId];
      // The first run reads the table into the engine's caches; the measured runs then start alike.
      await engineRun(service, direct, 'csv', limit, outDir);
      const results: string[][] = [];
      for (const name of formats) {
        const format = formatNamed(name)!;
        for (const blockRows of [undefined, ...blockVariants]) {
          chunks.blockRows = blockRows;
          const label = blockRows === undefined ? name : `${name}, max_block_size ${blockRows}`;
          const file = path.join(outDir, `api.${format.extension}`);
          const exportRun = () => (values.client === 'curl' ? curlExport : nodeExport)(port, key, name, query, file);
          // Alternated, so that both see the same moments of a shared machine; the medians are compared.
          const apiRuns: Measured<number>[] = [];
          const engineRuns: Measured<number>[] = [];
          for (let i = 0; i < repeat; i++) {
            apiRuns.push(await measured(exportRun, chunks, settle));
            engineRuns.push(await measured(() => engineRun(service, direct, name, limit, outDir), chunks, settle));
          }
          chunks.blockRows = undefined;
          const api = median(apiRuns);
          const engine = median(engineRuns);
          const row = (what: string, m: Measured<number>, runs: Measured<number>[]) => [
            `${label} ${what}`,
            perSecond(limit / m.seconds),
            mb(m.value),
            rss(m),
            runs.map((r) => `+${mb(r.rssPeak - r.rssBefore)}`).join(', '),
            `+${mb(m.anonPeak - m.anonBefore)} / +${mb(m.filePeak - m.fileBefore)}`,
            `${mb(m.arrayBuffersBefore)} / ${mb(m.arrayBuffersPeak)} / ${mb(m.externalPeak)}`,
            `${(m.largestChunk / 1024 / 1024).toFixed(2)} (${m.chunks})`,
            m.cpuSeconds.toFixed(1),
            runs.map((r) => perSecond(limit / r.seconds)).join(', '),
          ];
          results.push(row('via API', api, apiRuns), row('direct', engine, engineRuns), [
            `${label} ratio API ÷ direct`,
            (engine.seconds / api.seconds).toFixed(2),
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            apiRuns.map((r, i) => (engineRuns[i].seconds / r.seconds).toFixed(2)).join(', '),
          ]);
        }
      }
      return results;
    };
    const loadAverage = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ');

    // Chart ranks by podcast, country, platform and hour: about one row each, 1.5 million at scale 1.
    const query = {
      measures: ['ChannelRanks.avgRank'],
      dimensions: ['ChannelRanks.podcastSlug', 'ChannelRanks.countryCode', 'ChannelRanks.platform'],
      timeDimensions: [{ dimension: 'ChannelRanks.timestamp', granularity: 'hour' }],
      limit: rows,
    };
    if (only.has('grouped')) {
      const results = await compare(query, rows, null);
      log(
        `\nGrouped (ChannelRanks.avgRank by podcast, country, platform, hour): ${rows.toLocaleString('en')} rows, scale ${scale}, client ${values.client}, load average ${loadAverage()}\n`,
      );
      log(table(header, align, results));
    }
    // One account's raw requests as recorded, one row each. Cube orders them by token whatever the query says,
    // which the table's key (account_id, token, ts) gives with the account fixed: the engine reads them in that
    // order, merging its parts' streams, and holds no aggregation or sort state.
    for (const size of only.has('raw') ? rawSizes : []) {
      const raw = {
        dimensions: ['PodcastEvents.token', 'PodcastEvents.country', 'PodcastEvents.city', 'PodcastEvents.url', 'PodcastEvents.rawUa', 'PodcastEvents.ts'],
        ungrouped: true,
        limit: size,
      };
      const results = await compare(raw, size, values['raw-account']);
      log(
        `\nUngrouped (PodcastEvents records of ${values['raw-account']}, in the table's order): ${size.toLocaleString('en')} rows, scale ${scale}, client ${values.client}, load average ${loadAverage()}\n`,
      );
      log(table(header, align, results));
    }

    if (only.has('slow')) {
      const slowRows = Number(values['slow-rows']);
      const rate = Number(values['slow-kib-per-second']) * 1024;
      const slow = await slowRead(port, { ...query, limit: slowRows }, rate, service);
      log(`\nA slow reader: csv of ${slowRows.toLocaleString('en')} rows read at ${values['slow-kib-per-second']} KiB/s\n`);
      log(
        table(
          ['Reader took, s', 'MB read', 'Probes', 'Probe wait p50, ms', 'Probe wait max, ms', 'Engine free after, s'],
          ['r', 'r', 'r', 'r', 'r', 'r'],
          [
            [
              slow.seconds.toFixed(1),
              mb(slow.bytes),
              String(slow.waits.length),
              ms(percentile(slow.waits, 50)),
              ms(Math.max(...slow.waits)),
              slow.engineFreeAfter.toFixed(1),
            ],
          ],
        ),
      );
    }
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    return 0;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
    if (!values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The finished demo build's scale when `dir` holds one that `npm run warehouse -- demo` made (no benchmark marker); nothing is written. */
async function builtDemoScale(dir: string): Promise<number | undefined> {
  if (!existsSync(dir) || existsSync(path.join(dir, 'bench-demo.json'))) return undefined;
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: dir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  try {
    if ((await demoState(warehouse)).kind !== 'complete') return undefined;
    const [marker] = await (
      await warehouse.client().query({ query: `SELECT scale FROM ${DATABASE}.${DEMO_MARKER}`, format: 'JSONEachRow' })
    ).json<{ scale: number }>();
    return Number(marker.scale);
  } finally {
    await warehouse.close();
    await drainPending();
  }
}

/** An export read by curl into `file`, as a client of its own; resolves with the bytes it wrote. */
async function curlExport(port: number, key: string, name: string, query: object, file: string): Promise<number> {
  const curl = spawn(
    'curl',
    [
      '-sS',
      '-o',
      file,
      '-w',
      '%{http_code}',
      '-X',
      'POST',
      '-H',
      `x-api-key: ${key}`,
      '-H',
      'content-type: application/json',
      '--data-binary',
      '@-',
      `http://127.0.0.1:${port}/v1/data/export?format=${name}`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  curl.stdin.end(JSON.stringify({ query }));
  let status = '';
  curl.stdout.on('data', (text: Buffer) => (status += text.toString('utf8')));
  const [code] = (await once(curl, 'close')) as [number];
  if (code !== 0 || status !== '200') throw new Error(`export ${name}: curl exit ${code}, HTTP ${status}`);
  return statSync(file).size;
}

/** An export read by this process into `file`; resolves with the bytes it wrote. */
async function nodeExport(port: number, key: string, name: string, query: object, file: string): Promise<number> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: `/v1/data/export?format=${name}`, headers: { 'x-api-key': key } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
  if (res.statusCode !== 200) {
    const head: Buffer[] = [];
    for await (const chunk of res) head.push(chunk as Buffer);
    throw new Error(`export ${name}: HTTP ${res.statusCode} ${Buffer.concat(head).toString('utf8')}`);
  }
  await pipeline(res, createWriteStream(file));
  return statSync(file).size;
}

/** The SQL streamed by the engine into a file in the format, with the export statement's settings; resolves with the file's size. */
async function engineRun(service: LocalService, sql: string, name: string, rows: number, outDir: string): Promise<number> {
  const format = formatNamed(name)!;
  const file = path.join(outDir, `direct.${format.extension}`);
  const signal = new AbortController().signal;
  rmSync(file, { force: true });
  if (format.records === 'none') {
    // chDB's stream hands out each block as a parquet file of its own, so the engine writes the file, as the export does.
    const client = service.warehouse.client();
    await statementTicket.run({ lane: 'bench', signal }, () => client.command({ query: `INSERT INTO FUNCTION file('${file}', ${format.clickhouse}) ${sql}` }));
    return statSync(file).size;
  }
  const chunks = await statementTicket.run({ lane: 'bench', signal }, () =>
    service.warehouse.stream({
      query: sql,
      format: format.clickhouse,
      settings: format.settings,
      signal,
      limits: { timeoutMs: 600_000, maxMemoryBytes: 8 * 1024 ** 3, maxResultRows: rows },
    }),
  );
  await pipeline(Readable.from(chunks), createWriteStream(file));
  return statSync(file).size;
}

interface Measured<T> {
  value: T;
  seconds: number;
  cpuSeconds: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
  /**
   * The RSS's anonymous part (the heaps: the engine's allocator's, Node's) and its file-backed part (mapped
   * files, the binaries), before and at their peaks: whether the growth is memory the process allocated.
   */
  anonBefore: number;
  anonPeak: number;
  fileBefore: number;
  filePeak: number;
  /** Node's own buffers before and at their peak: what of the RSS the service's JavaScript holds outside its heap. */
  arrayBuffersBefore: number;
  arrayBuffersPeak: number;
  externalPeak: number;
  /** The largest chunk chDB's stream handed out during the run, and how many it handed out. */
  largestChunk: number;
  chunks: number;
}

/**
 * The chunks chDB's streams hand out, the export's statements' and the direct run's alike, counted as they
 * pass; with `blockRows`, each statement is run with that max_block_size instead of the one it carries.
 */
interface ChunkWatch {
  largest: number;
  count: number;
  blockRows?: number;
}

function watchChunks(service: LocalService): ChunkWatch {
  const watch: ChunkWatch = { largest: 0, count: 0 };
  const stream = service.warehouse.stream.bind(service.warehouse);
  service.warehouse.stream = async (statement) => {
    const settings = watch.blockRows === undefined ? statement.settings : { ...statement.settings, max_block_size: watch.blockRows };
    const chunks = await stream({ ...statement, settings });
    return (async function* () {
      for await (const chunk of chunks) {
        watch.largest = Math.max(watch.largest, chunk.length);
        watch.count++;
        yield chunk;
      }
    })();
  };
  return watch;
}

/** Runs `work` while sampling RSS and Node's buffers. */
async function measured<T>(work: () => Promise<T>, chunks: ChunkWatch, settle?: () => Promise<unknown>): Promise<Measured<T>> {
  // The last run's garbage collected first (with --expose-gc), so that each run's figures start alike.
  (globalThis as { gc?: () => void }).gc?.();
  await settle?.();
  const { arrayBuffers: arrayBuffersBefore } = process.memoryUsage();
  const rssBefore = process.memoryUsage.rss();
  let peak = rssBefore;
  const { anon: anonBefore, file: fileBefore } = rssParts();
  let anonPeak = anonBefore;
  let filePeak = fileBefore;
  let arrayBuffersPeak = 0;
  let externalPeak = 0;
  chunks.largest = 0;
  chunks.count = 0;
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    peak = Math.max(peak, now.rss);
    const parts = rssParts();
    anonPeak = Math.max(anonPeak, parts.anon);
    filePeak = Math.max(filePeak, parts.file);
    arrayBuffersPeak = Math.max(arrayBuffersPeak, now.arrayBuffers);
    externalPeak = Math.max(externalPeak, now.external);
  }, SAMPLE_MS);
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const value = await work();
    const rssAfter = process.memoryUsage.rss();
    const { user, system } = process.cpuUsage(cpu);
    return {
      value,
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (user + system) / 1e6,
      rssBefore,
      rssPeak: Math.max(peak, rssAfter),
      rssAfter,
      anonBefore,
      anonPeak,
      fileBefore,
      filePeak,
      arrayBuffersBefore,
      arrayBuffersPeak,
      externalPeak,
      largestChunk: chunks.largest,
      chunks: chunks.count,
    };
  } finally {
    clearInterval(timer);
  }
}

/** The process's anonymous and file-backed resident bytes (Linux's /proc/self/status; zero elsewhere). */
function rssParts(): { anon: number; file: number } {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return { anon: 0, file: 0 };
  }
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { anon: kib('RssAnon'), file: kib('RssFile') };
}

/** The run of median duration. */
const median = <T>(runs: Measured<T>[]) => [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)];

const rss = (m: Measured<unknown>) => `${mb(m.rssBefore)} / ${mb(m.rssPeak)} / ${mb(m.rssAfter)}`;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/**
 * A csv export read at `bytesPerSecond` (the client pauses the socket
 * between chunks to keep to it), with a probe statement every 250 ms. The
 * engine counts as free from the end of the last probe that waited over
 * a second.
 */
async function slowRead(
  port: number,
  query: object,
  bytesPerSecond: number,
  service: LocalService,
): Promise<{ seconds: number; bytes: number; waits: number[]; engineFreeAfter: number }> {
  const started = performance.now();
  const client = service.warehouse.client();
  const waits: number[] = [];
  let engineFreeAfter = 0;
  let reading = true;
  const probing = (async () => {
    while (reading) {
      const sent = performance.now();
      await client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((rows) => rows.json());
      const waited = performance.now() - sent;
      waits.push(waited);
      if (waited > 1000) engineFreeAfter = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=csv', headers: { 'x-api-key': API_KEY } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
  let bytes = 0;
  let firstByte: number | undefined;
  await new Promise<void>((resolve, reject) => {
    res.on('data', (chunk: Buffer) => {
      firstByte ??= performance.now();
      bytes += chunk.length;
      const due = firstByte + (bytes / bytesPerSecond) * 1000;
      const ahead = due - performance.now();
      if (ahead > 0) {
        res.pause();
        setTimeout(() => res.resume(), ahead);
      }
    });
    res.on('end', resolve);
    res.on('error', reject);
  });
  reading = false;
  await probing;
  if (res.statusCode !== 200) throw new Error(`slow export: HTTP ${res.statusCode}`);
  return { seconds: (performance.now() - started) / 1000, bytes, waits, engineFreeAfter };
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
