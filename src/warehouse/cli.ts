import { drainPending } from 'chdb';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../log';
import { openWarehouse } from './connection';
import { applyDdl, isEmpty, loadDemo, outdatedTables } from './setup';

const USAGE = `Usage: npm run warehouse -- <command>

Commands (against CLICKHOUSE_URL when set, else the embedded chDB directory):
  init   create the database and tables (idempotent)
  demo   create the tables and load demo data if they are empty (DEMO_SCALE, DEMO_SEED, DEMO_DAYS)
`;

/** Sets a warehouse up: what the service itself never does on a ClickHouse server. */
async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command !== 'init' && command !== 'demo') {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const warehouse = await openWarehouse(config.warehouse);
  try {
    const outdated = await outdatedTables(warehouse);
    if (outdated.length > 0) {
      throw new Error(`Tables ${outdated.join(', ')} in database ${config.warehouse.database} were created by an older version of the service and lack columns it reads (such as account_id); recreate them and reload their data`);
    }
    await applyDdl(warehouse);
    logger.info('tables ready', { database: config.warehouse.database, warehouse: config.warehouse.kind });
    if (command === 'demo') {
      if (await isEmpty(warehouse)) await loadDemo(warehouse, config.demo, logger);
      else logger.info('tables already hold rows; demo data not loaded');
    }
  } finally {
    await warehouse.close();
    if (config.warehouse.kind === 'chdb') await drainPending();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
