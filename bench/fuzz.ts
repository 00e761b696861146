import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
// Before chdb: the allocator's options are read when the library loads.
import '../src/warehouse/allocator';
import { drainPending } from 'chdb';
import { createLogger } from '../src/log';
import { openWarehouse } from '../src/warehouse/connection';
import { applyDdl, ensureDemo } from '../src/warehouse/setup';
import { clean, runAbuse, type AbuseSummary } from './abuse/harness';
import { API_KEY, DATABASE, FUZZ_DEMO, ROLLUP_DATABASE, startBenchService } from './service';

/**
 * Abuse fuzzing at scale: `npm run fuzz -- [cases] [seed]` (defaults 10000
 * and FUZZ_SEED or a fixed seed). Builds the test suite's small dataset in a
 * fresh chDB directory, serves the real service on a free port and sends it
 * generated hostile requests (bench/abuse/cases.ts), amplification shapes
 * among them. Exits 1 when any answer was a 5xx, leaked internals, broke the
 * error envelope or never came, when a valid query stopped working, or when
 * one request held the event loop for more than 1 s (the service runs in
 * this process, so the harness times its loop).
 */

const DEFAULT_CASES = 10_000;
const DEFAULT_SEED = 20261122;
const PROGRESS_EVERY = 1_000;

async function main(numRuns: number, seed: number): Promise<number> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-fuzz-'));
  try {
    const started = Date.now();
    const warehouse = await openWarehouse({ kind: 'chdb', dataDir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
    await applyDdl(warehouse);
    await ensureDemo(warehouse, FUZZ_DEMO, createLogger('error'), { endDate: new Date(), unprovenRows: 'move-aside' });
    await warehouse.close();
    await drainPending();
    log(`dataset ready in ${seconds(Date.now() - started)} s (${dataDir})`);

    // Rate limits would answer 429 to the burst and hide what the query path does.
    const service = await startBenchService(dataDir, { RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_UNAUTHENTICATED: '1000000', RATE_LIMIT_CONCURRENT: '1000' });
    const server = service.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    log(`fuzzing ${baseUrl} with ${numRuns} cases, seed ${seed}`);

    const summary = await runAbuse({
      baseUrl,
      apiKey: API_KEY,
      numRuns,
      seed,
      onCase: (outcome, sofar) => {
        if ((outcome.index + 1) % PROGRESS_EVERY === 0) log(progressLine(sofar));
      },
    });
    server.close();
    await service.close();

    report(summary);
    return clean(summary) ? 0 : 1;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function progressLine(s: AbuseSummary): string {
  return `${String(s.cases).padStart(7)} cases  ${seconds(s.elapsedMs).padStart(7)} s  5xx ${s.serverErrors}  leaks ${s.leaks}  non-envelope ${s.nonEnvelope}  request errors ${s.requestErrors}  worst loop delay ${s.worstDelay.ms} ms`;
}

function report(s: AbuseSummary): void {
  const rows: [string, string | number][] = [
    ['seed', s.seed],
    ['cases tried', s.cases],
    ...Object.entries(s.byStatus)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]): [string, number] => [`  status ${status}`, count]),
    ['5xx answers', s.serverErrors],
    ['leaks', s.leaks],
    ['non-envelope errors', s.nonEnvelope],
    ['request errors', s.requestErrors],
    ['valid-query checks passed', `${s.validChecks.passed} of ${s.validChecks.passed + s.validChecks.failed}`],
    ['worst event-loop delay', `${s.worstDelay.ms} ms (case ${s.worstDelay.index})`],
    ['cases blocking the loop > 1 s', s.blocked],
    ['elapsed seconds', seconds(s.elapsedMs)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  log('');
  for (const [label, value] of rows) log(`${label.padEnd(width)}  ${value}`);
  if (s.samples.length > 0) {
    log(`\nfirst ${s.samples.length} failing cases (replay with the same seed; index counts from 0):`);
    log(JSON.stringify(s.samples, null, 2));
  }
  log(clean(s) ? '\nOK' : '\nFAILED');
}

function positiveInteger(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    process.stderr.write(`usage: npm run fuzz -- [cases] [seed]: ${name} must be a positive integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return value;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const log = (line: string) => process.stdout.write(`${line}\n`);

// Exits explicitly: Cube 0.33's core keeps the process alive after shutdown().
main(positiveInteger(process.argv[2], DEFAULT_CASES, 'cases'), positiveInteger(process.argv[3] ?? process.env.FUZZ_SEED, DEFAULT_SEED, 'seed')).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
