import type { DemoConfig } from '../config';
import type { Logger } from '../log';
import type { Warehouse } from './connection';
import { ddlStatements, quoteIdentifier, SCHEMA_VERSION, TABLES } from './ddl';
import { loadDemoData } from './demo-data';

/** Creates the tables (idempotent). Needs a user that may run DDL. */
export async function applyDdl(warehouse: Warehouse): Promise<void> {
  const client = warehouse.client();
  for (const statement of ddlStatements(warehouse.config.database)) {
    await client.command({ query: statement });
  }
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

/** True when no table behind the cubes holds a row, e.g. a new data directory. */
export async function isEmpty(warehouse: Warehouse): Promise<boolean> {
  const result = await warehouse.client().query({
    query: 'SELECT sum(total_rows) AS rows FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)}',
    query_params: { database: warehouse.config.database, tables: [...TABLES] },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ rows: string | number | null }>();
  return Number(row?.rows ?? 0) === 0;
}

/** Demo data for the window ending today (UTC), so "last 7 days" finds rows. */
export async function loadDemo(warehouse: Warehouse, demo: DemoConfig, logger: Logger, endDate = new Date()): Promise<void> {
  const client = warehouse.client();
  const started = Date.now();
  await loadDemoData((sql) => client.command({ query: sql }).then(() => undefined), {
    database: warehouse.config.database,
    seed: demo.seed,
    scale: demo.scale,
    days: demo.days,
    endDate: endDate.toISOString().slice(0, 10),
    onProgress: (message) => logger.info(`demo data: ${message}`),
  });
  logger.info('demo data ready', { seconds: (Date.now() - started) / 1000 });
}
