import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { formatNamed, FORMAT_NAMES } from '../src/export/formats';
import { statementTicket } from '../src/warehouse/statement-queue';
import { API_KEY } from '../test/integration/support/constants';
import { startService, type TestService } from '../test/integration/support/service';
import { prepareDataset } from './dataset';
import { log, mb, perSecond, table } from './report';

/**
 * Export benchmark: `npm run bench:export -- [--scale 1] [--rows 1000000] [--data-dir DIR]`.
 * For each format, one export of `rows` rows through the API over real HTTP
 * (read as fast as the client can), next to the same SQL run straight on the
 * engine into a file (chDB's streaming query, no Cube, no HTTP), in one run:
 * rows/s, bytes, and the peak RSS above the RSS before each run (sampled every
 * 20 ms; chDB runs in this process, so its memory counts). The ratio
 * API ÷ direct is the figure. Figures only: it fails only when setup does.
 */

const SAMPLE_MS = 20;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: '1' }, rows: { type: 'string', default: '1000000' }, 'data-dir': { type: 'string' } } });
  const scale = Number(values.scale);
  const rows = Number(values.rows);
  const dataDir = values['data-dir'] ?? mkdtempSync(path.join(os.tmpdir(), 'analytics-api-bench-'));
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-export-'));
  try {
    await prepareDataset(dataDir, { enabled: true, scale, seed: 20261122, days: 90 });
    process.env.TEST_CHDB_DATA_DIR = dataDir;
    const service = await startService(
      { QUERY_TIMEOUT_SECONDS: '600', EXPORT_MAX_ROWS: String(rows), RATE_LIMIT_CONCURRENT: '10' },
      { schemaPath: path.resolve(__dirname, '..', '..', 'schema') },
    );
    const server = service.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    // Chart ranks by podcast, country, platform and hour: about one row each, 1.5 million at scale 1.
    const query = {
      measures: ['ChannelRanks.avgRank'],
      dimensions: ['ChannelRanks.podcastSlug', 'ChannelRanks.countryCode', 'ChannelRanks.platform'],
      timeDimensions: [{ dimension: 'ChannelRanks.timestamp', granularity: 'hour' }],
      limit: rows,
    };
    const context = { requestId: 'bench-export', accountId: null, lane: 'bench' };
    const { sql, columns } = await service.cube.exportSql(query, rows, context);
    const direct = `SELECT ${columns.map((c) => `\`${c.alias}\` AS \`${c.member}\``).join(', ')} FROM (${sql}) LIMIT ${rows}`;

    // The first run reads the table into the engine's caches; the measured runs then start alike.
    await engineRun(service, direct, 'csv', rows, outDir);
    const results: string[][] = [];
    for (const name of FORMAT_NAMES) {
      const api = await measured(async () => {
        const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
          const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: `/v1/data/export?format=${name}`, headers: { 'x-api-key': API_KEY } }, resolve);
          req.on('error', reject);
          req.end(JSON.stringify({ query }));
        });
        let bytes = 0;
        const head: Buffer[] = [];
        for await (const chunk of res) {
          bytes += (chunk as Buffer).length;
          if (res.statusCode !== 200) head.push(chunk as Buffer);
        }
        if (res.statusCode !== 200) throw new Error(`export ${name}: HTTP ${res.statusCode} ${Buffer.concat(head).toString('utf8')}`);
        return bytes;
      });
      const engine = await measured(() => engineRun(service, direct, name, rows, outDir));
      results.push(
        [`${name} via API`, perSecond(rows / api.seconds), mb(api.value), mb(api.peakRss)],
        [`${name} direct to a file`, perSecond(rows / engine.seconds), mb(engine.value), mb(engine.peakRss)],
        [`${name} ratio API ÷ direct`, (engine.seconds / api.seconds).toFixed(2), '', ''],
      );
    }
    log(`\n${rows.toLocaleString('en')} rows, scale ${scale}\n`);
    log(table(['Export', 'Rows/s', 'MB written', 'Peak RSS above start, MB'], ['l', 'r', 'r', 'r'], results));
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    return 0;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
    if (!values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The SQL streamed by the engine into a file in the format, as the export's statement is; resolves with the file's size. */
async function engineRun(service: TestService, sql: string, name: string, rows: number, outDir: string): Promise<number> {
  const format = formatNamed(name)!;
  const file = path.join(outDir, `direct.${format.extension}`);
  const signal = new AbortController().signal;
  const chunks = await statementTicket.run({ lane: 'bench', signal }, () =>
    service.warehouse.stream({ query: sql, format: format.clickhouse, settings: format.settings, signal, limits: { timeoutMs: 600_000, maxMemoryBytes: 8 * 1024 ** 3, maxResultRows: rows } }),
  );
  await pipeline(Readable.from(chunks), createWriteStream(file));
  return statSync(file).size;
}

/** Runs `work` while sampling RSS; the peak is above the RSS at its start. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; peakRss: number }> {
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), SAMPLE_MS);
  const started = performance.now();
  try {
    const value = await work();
    return { value, seconds: (performance.now() - started) / 1000, peakRss: Math.max(peak, process.memoryUsage.rss()) - start };
  } finally {
    clearInterval(timer);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
