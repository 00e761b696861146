import { drainPending } from 'chdb';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../log';
import { openWarehouse } from './connection';
import { WarehouseSetupError } from './data-dir';
import { clusterDdlStatements, TABLES } from './ddl';
import { ensureGeo } from './geo/load';
import { refreshPlaces } from './geo/refresh';
import { addMissingProjections, applyDdl, ensureDemo, outdatedTables } from './setup';

const USAGE = `Usage: npm run warehouse -- <command>

Commands (against CLICKHOUSE_URL when set, else the embedded chDB directory):
  init                    create the database and tables, and add the projections tables made by an
                          earlier version lack (idempotent)
  init --cluster <name>   the same ON CLUSTER <name>: a ReplicatedMergeTree <table>_local on every
                          node and a Distributed <table> the service reads (see docs/operations.md)
  demo                    create the tables and load demo data unless a finished demo build is there
                          (DEMO_SCALE, DEMO_SEED, DEMO_DAYS); single node only
  geo-refresh             load the IP database (the npm packages', or GEO_DB_DIR's) unless it is loaded,
                          then give every row of downloads, podcast_events and web_events the places
                          it has for the row's IP (a mutation of those columns; single node only)
`;

type Command = { name: 'init'; cluster?: string } | { name: 'demo' } | { name: 'geo-refresh' };

function parseArgs(argv: string[]): Command | undefined {
  if (argv.length === 1 && argv[0] === 'init') return { name: 'init' };
  if (argv.length === 3 && argv[0] === 'init' && argv[1] === '--cluster' && argv[2].trim() !== '') return { name: 'init', cluster: argv[2] };
  if (argv.length === 1 && argv[0] === 'demo') return { name: 'demo' };
  if (argv.length === 1 && argv[0] === 'geo-refresh') return { name: 'geo-refresh' };
  return undefined;
}

/** Sets a warehouse up: what the service itself never does on a ClickHouse server. */
async function main(argv: string[]): Promise<number> {
  const command = parseArgs(argv);
  if (!command) {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = loadConfig();
  if (command.name === 'init' && command.cluster && config.warehouse.kind !== 'server') {
    throw new WarehouseSetupError('init --cluster needs CLICKHOUSE_URL: the embedded chDB engine is a single node');
  }
  const logger = createLogger(config.logLevel);
  const warehouse = await openWarehouse(config.warehouse);
  try {
    const outdated = await outdatedTables(warehouse);
    if (outdated.length > 0) {
      throw new WarehouseSetupError(`Tables ${outdated.join(', ')} in database ${config.warehouse.database} were created by an older version of the service and lack columns it reads (such as account_id); recreate them and reload their data`);
    }
    if (command.name === 'init' && command.cluster) {
      const client = warehouse.client();
      for (const statement of clusterDdlStatements(config.warehouse.database, command.cluster)) await client.command({ query: statement });
      const result = await client.query({
        query: "SELECT name, engine FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)} AND engine != 'Distributed'",
        query_params: { database: config.warehouse.database, tables: [...TABLES] },
        format: 'JSONEachRow',
      });
      const single = await result.json<{ name: string; engine: string }>();
      if (single.length > 0) {
        // IF NOT EXISTS kept tables an earlier single-node init made.
        throw new WarehouseSetupError(`Tables ${single.map((t) => `${t.name} (${t.engine})`).join(', ')} of database ${config.warehouse.database} already exist on this node as single-node tables; move them away, then run init --cluster again`);
      }
      await addMissingProjections(warehouse, logger, command.cluster);
    } else {
      await applyDdl(warehouse, logger);
      await ensureGeo(warehouse, config.geo.dir, logger);
    }
    logger.info('tables ready', { database: config.warehouse.database, warehouse: config.warehouse.kind, cluster: command.name === 'init' ? command.cluster : undefined });
    if (command.name === 'demo') {
      // Same all-or-nothing build as the service's start-up; on a server, rows
      // that no finished demo build put there may be an operator's and stay.
      await ensureDemo(warehouse, config.demo, logger, { unprovenRows: config.warehouse.kind === 'chdb' ? 'move-aside' : 'keep' });
    }
    if (command.name === 'geo-refresh') await refreshPlaces(warehouse, logger);
  } finally {
    await warehouse.close();
    if (config.warehouse.kind === 'chdb') await drainPending();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known = err instanceof ConfigError || err instanceof WarehouseSetupError;
    process.stderr.write(`${known ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
