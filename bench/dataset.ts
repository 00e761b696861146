import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
// Before chdb: the allocator's options are read when the library loads.
import '../src/warehouse/allocator';
import { drainPending } from 'chdb';
import type { DemoConfig } from '../src/config';
import { createLogger } from '../src/log';
import { openWarehouse } from '../src/warehouse/connection';
import { SCHEMA_VERSION, TABLES } from '../src/warehouse/ddl';
import { quoteIdentifier } from '../src/warehouse/sql';
import { applyDdl, demoState, ensureDemo, outdatedTables } from '../src/warehouse/setup';
import { DATABASE, ROLLUP_DATABASE } from './service';
import { log } from './report';

/** Written next to the chDB data so a later run can tell which demo the directory holds. */
const MARKER_FILE = 'bench-demo.json';

interface Marker {
  scale: number;
  days: number;
  seed: number;
  schemaVersion: string;
  endDate: string;
}

export interface Dataset {
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
export async function prepareDataset(dir: string, demo: DemoConfig): Promise<Dataset> {
  const markerPath = path.join(dir, MARKER_FILE);
  const wanted: Omit<Marker, 'endDate'> = { scale: demo.scale, days: demo.days, seed: demo.seed, schemaVersion: SCHEMA_VERSION };
  const found = existsSync(markerPath) ? (JSON.parse(readFileSync(markerPath, 'utf8')) as Marker) : undefined;

  const warehouse = await openWarehouse({ kind: 'chdb', dataDir: dir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
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
