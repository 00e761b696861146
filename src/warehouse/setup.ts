import type { DemoConfig } from '../config';
import type { Logger } from '../log';
import type { Warehouse } from './connection';
import { ddlStatements, TABLES } from './ddl';
import { loadDemoData } from './demo-data';

/** Creates the tables (idempotent). Needs a user that may run DDL. */
export async function applyDdl(warehouse: Warehouse): Promise<void> {
  const client = warehouse.client();
  for (const statement of ddlStatements(warehouse.config.database)) {
    await client.command({ query: statement });
  }
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
