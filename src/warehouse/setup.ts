import type { DemoConfig, DownloadsConfig } from '../config';
import type { Logger } from '../log';
import type { Warehouse } from './connection';
import {
  addProjectionStatements,
  clusterDdlStatements,
  columnsByTable,
  ddlStatements,
  localTableName,
  projectionsByTable,
  SCHEMA_VERSION,
  TABLES,
} from './ddl';
import { layoutOf } from './layout';
import { quoteIdentifier } from './sql';
import { isNoSpace, WarehouseSetupError } from './data-dir';
import { loadDemoData } from './demo-data';
import { TRACKING_PREFIX } from './reference-data';
import { loadUserAgents } from './derive/user-agents';

/**
 * Creates the tables and adds the columns and projections they lack (idempotent), on one node or, where `init
 * --cluster` made the tables, ON CLUSTER. Needs a user that may run DDL.
 */
export async function applyDdl(warehouse: Warehouse, logger?: Logger): Promise<void> {
  const client = warehouse.client();
  const { database } = warehouse.config;
  const { cluster } = await layoutOf(client, database);
  for (const statement of cluster === undefined ? ddlStatements(database) : clusterDdlStatements(database, cluster)) {
    await client.command({ query: statement });
  }
  await addMissingColumns(warehouse, logger, cluster);
  await addMissingProjections(warehouse, logger, cluster);
}

/**
 * Columns added to a layout after its table was made (CREATE TABLE IF NOT
 * EXISTS leaves such a table as it was): each has a DEFAULT, so adding it is
 * a change of metadata and the rows already there read the default. On a
 * cluster, to the local and the Distributed table alike.
 */
async function addMissingColumns(warehouse: Warehouse, logger?: Logger, cluster?: string): Promise<void> {
  const client = warehouse.client();
  const { database } = warehouse.config;
  const result = await client.query({
    query: 'SELECT table, name FROM system.columns WHERE database = {database:String}',
    query_params: { database },
    format: 'JSONEachRow',
  });
  const present = new Set((await result.json<{ table: string; name: string }>()).map((row) => `${row.table}.${row.name}`));
  const on = cluster === undefined ? '' : ` ON CLUSTER ${quoteIdentifier(cluster)}`;
  for (const { table: name, columns } of columnsByTable()) {
    for (const table of cluster === undefined ? [name] : [localTableName(name), name]) {
      for (const column of columns.filter((c) => !present.has(`${table}.${c.split(/\s+/)[0]}`))) {
        logger?.info('adding column', { table, column });
        await client.command({ query: `ALTER TABLE ${quoteIdentifier(database)}.${quoteIdentifier(table)}${on} ADD COLUMN IF NOT EXISTS ${column}` });
      }
    }
  }
}

/**
 * Tables made before a projection was declared get it here, built for the
 * rows they hold (a full read of the table, once); afterwards the check is
 * one query. With `cluster`, the projections go on every node's local table.
 */
export async function addMissingProjections(
  warehouse: Warehouse,
  logger?: Logger,
  cluster?: string,
): Promise<{ table: string; projection: string; seconds: number }[]> {
  const client = warehouse.client();
  const { database } = warehouse.config;
  const wanted = projectionsByTable().map(({ table, projections }) => ({ table: cluster ? localTableName(table) : table, projections }));
  const result = await client.query({
    query: 'SELECT table, name FROM system.projections WHERE database = {database:String} AND table IN {tables:Array(String)}',
    query_params: { database, tables: wanted.map((w) => w.table) },
    format: 'JSONEachRow',
  });
  const present = new Set((await result.json<{ table: string; name: string }>()).map((row) => `${row.table}.${row.name}`));
  const added: { table: string; projection: string; seconds: number }[] = [];
  for (const { table, projections } of wanted) {
    for (const projection of projections.filter((p) => !present.has(`${table}.${p.name}`))) {
      logger?.info('adding projection', { table, projection: projection.name });
      const started = performance.now();
      for (const statement of addProjectionStatements(database, table, projection, cluster)) await client.command({ query: statement });
      const seconds = Math.round(performance.now() - started) / 1000;
      logger?.info('projection added', { table, projection: projection.name, seconds });
      added.push({ table, projection: projection.name, seconds });
    }
  }
  return added;
}

/**
 * Tables an older version of the service created: IF NOT EXISTS left them as
 * they were, so they may lack columns the model reads (e.g. account_id).
 */
export async function outdatedTables(warehouse: Warehouse): Promise<string[]> {
  const result = await warehouse.client().query({
    query: 'SELECT name FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)} AND comment != {version:String} ORDER BY name',
    query_params: { database: warehouse.config.database, tables: [...TABLES], version: SCHEMA_VERSION },
    format: 'JSONEachRow',
  });
  return (await result.json<{ name: string }>()).map((row) => row.name);
}

/**
 * Moves tables aside (renamed with the given suffix) rather than dropping
 * them, so rebuilding never loses rows someone may still want. Returns the
 * new names.
 */
export async function moveTablesAside(warehouse: Warehouse, tables: readonly string[], suffix: string): Promise<string[]> {
  const client = warehouse.client();
  const db = quoteIdentifier(warehouse.config.database);
  const moved: string[] = [];
  for (const table of tables) {
    await client.command({ query: `RENAME TABLE ${db}.${quoteIdentifier(table)} TO ${db}.${quoteIdentifier(`${table}${suffix}`)}` });
    moved.push(`${table}${suffix}`);
  }
  return moved;
}

/**
 * The demo's completion marker: a one-row table built last in the staging
 * database and moved in after the tables, so its presence in the live
 * database (with this schema version as its comment) means the tables were
 * swapped in from a finished build. Tables holding rows without it were
 * never proven complete (a build killed half way by an older version, which
 * built in place).
 */
export const DEMO_MARKER = 'demo_build';

/** Where a demo build runs until it is finished; a leftover one is an interrupted build. */
export function stagingDatabase(database: string): string {
  return `${database}_staging`;
}

export type DemoState = { kind: 'complete' } | { kind: 'empty' } | { kind: 'incomplete'; reasons: string[]; tablesWithRows: string[] };

/** Whether the live tables are a finished demo build, nothing yet, or something in between. */
export async function demoState(warehouse: Warehouse): Promise<DemoState> {
  const { database } = warehouse.config;
  const staging = stagingDatabase(database);
  const result = await warehouse.client().query({
    query: 'SELECT name, engine, total_rows, comment FROM system.tables WHERE database = {database:String} AND name IN {names:Array(String)}',
    query_params: { database, names: [...TABLES, DEMO_MARKER] },
    format: 'JSONEachRow',
  });
  const live = await result.json<{ name: string; engine: string; total_rows: string | number | null; comment: string }>();
  const distributed = live.filter((row) => row.engine === 'Distributed').map((row) => row.name);
  if (distributed.length > 0) {
    throw new WarehouseSetupError(
      `Tables ${distributed.join(', ')} of database ${database} are Distributed (made by init --cluster); the demo data is built on a single node only`,
    );
  }
  const marker = live.find((row) => row.name === DEMO_MARKER);
  const tablesWithRows = live.filter((row) => row.name !== DEMO_MARKER && Number(row.total_rows ?? 0) > 0).map((row) => row.name);
  const emptyTables = TABLES.filter((table) => !tablesWithRows.includes(table));
  // Every table of a finished build holds rows, at any scale.
  if (marker?.comment === SCHEMA_VERSION && emptyTables.length === 0) return { kind: 'complete' };
  const stagingLeft = await databaseExists(warehouse, staging);
  if (!marker && tablesWithRows.length === 0 && !stagingLeft) return { kind: 'empty' };
  const reasons: string[] = [];
  if (stagingLeft) reasons.push(`staging database ${staging} left by a build that did not finish`);
  if (!marker) reasons.push(`no ${DEMO_MARKER} marker`);
  else if (marker.comment !== SCHEMA_VERSION) reasons.push(`${DEMO_MARKER} marker from an older schema`);
  if (tablesWithRows.length > 0 || marker) {
    reasons.push(`tables with rows: ${tablesWithRows.join(', ') || 'none'}; empty or missing: ${emptyTables.join(', ') || 'none'}`);
  }
  return { kind: 'incomplete', reasons, tablesWithRows };
}

/** Files recorded done in the imports table (src/warehouse/import/import.ts), 0 when there is none. */
async function importedFiles(warehouse: Warehouse): Promise<number> {
  const { database } = warehouse.config;
  const client = warehouse.client();
  const table = await client.query({
    query: "SELECT count() AS n FROM system.tables WHERE database = {database:String} AND name = 'imports'",
    query_params: { database },
    format: 'JSONEachRow',
  });
  if (Number((await table.json<{ n: string | number }>())[0]?.n ?? 0) === 0) return 0;
  const done = await client.query({ query: `SELECT count() AS n FROM ${quoteIdentifier(database)}.imports WHERE state = 'done'`, format: 'JSONEachRow' });
  return Number((await done.json<{ n: string | number }>())[0]?.n ?? 0);
}

async function databaseExists(warehouse: Warehouse, name: string): Promise<boolean> {
  const result = await warehouse.client().query({
    query: 'SELECT count() AS n FROM system.databases WHERE name = {name:String}',
    query_params: { name },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string | number }>())[0]?.n ?? 0) > 0;
}

export interface EnsureDemoOptions {
  /** The last day of the demo window; today (UTC) by default, so "last 7 days" finds rows. */
  endDate?: Date;
  /** The day whose calendar the rows follow (DemoDataOptions.calendarEndDate); endDate by default. */
  calendarEndDate?: Date;
  /**
   * What to do with live tables that hold rows but no completion marker.
   * The embedded engine is the service's own: they are moved aside (never
   * dropped, they may be someone's rows) and the demo is built again. On a
   * ClickHouse server they may be an operator's data: they stay as they are,
   * and no demo data is loaded.
   */
  unprovenRows: 'move-aside' | 'keep';
  /** How the demo's requests become downloads; IAB v2.3, calendar day, and the list beside the repository by default. */
  downloads?: DownloadsConfig;
}

const DEFAULT_DOWNLOADS: DownloadsConfig = { rules: 'iab', window: 'calendar', trackingPrefix: TRACKING_PREFIX };

/**
 * Makes the live tables a complete demo build, building it when they are
 * empty or an earlier build did not finish. The one function start-up awaits
 * for the demo data.
 */
export async function ensureDemo(warehouse: Warehouse, demo: DemoConfig, logger: Logger, options: EnsureDemoOptions): Promise<void> {
  const state = await demoState(warehouse);
  const where = warehouse.config.kind === 'chdb' ? { dataDir: warehouse.config.dataDir } : { database: warehouse.config.database };
  if (state.kind === 'complete') {
    logger.info('demo data present', where);
    await dropStaging(warehouse);
    return;
  }
  if (state.kind === 'incomplete') {
    if (state.tablesWithRows.length > 0 && options.unprovenRows === 'keep') {
      logger.warn('tables hold rows that no finished demo build put there; demo data not loaded', { ...where, tables: state.tablesWithRows });
      await dropStaging(warehouse);
      return;
    }
    // Request logs loaded by `npm run warehouse -- import` into a directory without demo data are the user's, not a broken build.
    if (state.tablesWithRows.length > 0 && (await importedFiles(warehouse)) > 0) {
      logger.info('tables hold imported request logs; demo data not loaded', { ...where, tables: state.tablesWithRows });
      await dropStaging(warehouse);
      return;
    }
    logger.warn('incomplete demo data found; building it again', { ...where, reasons: state.reasons });
    if (state.tablesWithRows.length > 0) {
      const moved = await moveTablesAside(warehouse, state.tablesWithRows, `_before_${Date.now()}`);
      logger.warn('tables of the incomplete build moved aside', { moved });
    }
  } else {
    logger.info('no demo data yet: building it', { ...where, scale: demo.scale });
  }
  const endDate = options.endDate ?? new Date();
  await buildDemo(warehouse, demo, logger, { endDate, calendarEndDate: options.calendarEndDate ?? endDate }, options.downloads ?? DEFAULT_DOWNLOADS);
}

/**
 * All or nothing: the tables are filled in a staging database, then swapped
 * with the live (empty) ones in one EXCHANGE TABLES statement, and the marker
 * follows them. A build that dies before the swap leaves the live tables as
 * they were (empty) and the staging database behind, which the next start
 * drops. chDB's databases use the Atomic engine, whose EXCHANGE swaps table
 * names in its metadata without copying data (a few milliseconds).
 */
async function buildDemo(
  warehouse: Warehouse,
  demo: DemoConfig,
  logger: Logger,
  window: { endDate: Date; calendarEndDate: Date },
  downloads: DownloadsConfig,
): Promise<void> {
  const client = warehouse.client();
  const { database } = warehouse.config;
  const staging = stagingDatabase(database);
  const live = quoteIdentifier(database);
  const stage = quoteIdentifier(staging);
  const started = Date.now();
  let swapMs: number;
  try {
    await dropStaging(warehouse);
    // A marker left from a build whose tables are gone or outdated vouches for nothing.
    await client.command({ query: `DROP TABLE IF EXISTS ${live}.${DEMO_MARKER} SYNC` });
    for (const statement of [...ddlStatements(database), ...ddlStatements(staging)]) await client.command({ query: statement });
    await client.command({
      query: `CREATE TABLE ${stage}.${DEMO_MARKER} (seed Int64, scale Float64, days UInt32, end_date Date, built_at DateTime('UTC')) ENGINE = MergeTree ORDER BY tuple() COMMENT '${SCHEMA_VERSION}'`,
    });
    const end = day(window.endDate);
    await loadDemoData((sql) => client.command({ query: sql }).then(() => undefined), {
      database: staging,
      seed: demo.seed,
      scale: demo.scale,
      days: demo.days,
      endDate: end,
      calendarEndDate: day(window.calendarEndDate),
      downloads: { settings: downloads, userAgents: loadUserAgents(downloads.userAgentsDir) },
      onProgress: (message) => logger.info(`demo data: ${message}`),
    });
    await client.command({
      query: `INSERT INTO ${stage}.${DEMO_MARKER} SELECT ${demo.seed}, ${demo.scale}, ${demo.days}, toDate('${end}'), now()`,
    });
    const swapStarted = performance.now();
    await client.command({ query: `EXCHANGE TABLES ${TABLES.map((t) => `${live}.${quoteIdentifier(t)} AND ${stage}.${quoteIdentifier(t)}`).join(', ')}` });
    await client.command({ query: `RENAME TABLE ${stage}.${DEMO_MARKER} TO ${live}.${DEMO_MARKER}` });
    swapMs = Math.round(performance.now() - swapStarted);
    await dropStaging(warehouse);
  } catch (err) {
    if (!isNoSpace(err)) throw err;
    const where = warehouse.config.kind === 'chdb' ? `CHDB_DATA_DIR ${warehouse.config.dataDir}` : `the ClickHouse server's disk`;
    throw new WarehouseSetupError(
      `${where} has no space left for the demo data (DEMO_SCALE ${demo.scale}): ${(err instanceof Error ? err.message : String(err)).replace(/[\s.]+$/, '')}; the next run builds it again`,
    );
  }
  if (warehouse.config.kind === 'chdb') await releaseBuildMemory(warehouse);
  logger.info('demo data ready', { seconds: (Date.now() - started) / 1000, swapMs });
}

const day = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The embedded engine's allocator (jemalloc) keeps the pages the build's
 * statements and the merges of its new parts freed, a few hundred MB at
 * scale 1, in the service's own process; handing them back to the OS once
 * those merges are done brings the idle RSS down to what serving needs
 * (about 380 MB at scale 1, docs/benchmarks.md, "The service's memory"). A server manages its own.
 */
async function releaseBuildMemory(warehouse: Warehouse): Promise<void> {
  const client = warehouse.client();
  const deadline = Date.now() + MERGE_WAIT_MS;
  while (Date.now() < deadline) {
    const result = await client.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' });
    if (Number((await result.json<{ n: string | number }>())[0]?.n ?? 0) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await client.command({ query: 'SYSTEM JEMALLOC PURGE' });
}

/** Longest wait for the build's merges before releasing memory anyway (larger scales merge for minutes). */
const MERGE_WAIT_MS = 15_000;

/** SYNC: an Atomic database otherwise keeps a dropped table's files for minutes. */
async function dropStaging(warehouse: Warehouse): Promise<void> {
  await warehouse.client().command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(stagingDatabase(warehouse.config.database))} SYNC` });
}
