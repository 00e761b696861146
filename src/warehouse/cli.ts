// First: chDB's allocator reads its options when the library loads (allocator.ts).
import './allocator';
import { drainPending } from 'chdb';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../log';
import { openWarehouse } from './connection';
import { WarehouseSetupError } from './data-dir';
import { clusterDdlStatements, TABLES } from './ddl';
import { deriveAllLinkViews } from './derive/link-views';
import { deriveAll } from './derive/rederive';
import { loadUserAgents } from './derive/user-agents';
import { ensureGeo } from './geo/load';
import { addressPlaces } from './geo/places';
import { refreshPlaces } from './geo/refresh';
import { ensureImportTables, importFile, ImportRefused } from './import/import';
import { handOff, runningService } from './import/inbox';
import { SOURCES } from './import/sources';
import { addMissingProjections, applyDdl, ensureDemo, outdatedTables } from './setup';

const USAGE = `Usage: npm run warehouse -- <command>

Commands (against CLICKHOUSE_URL when set, else the embedded chDB directory):
  init                    create the database and tables, and add the projections tables made by an
                          earlier version lack (idempotent)
  init --cluster <name>   the same ON CLUSTER <name>: a ReplicatedMergeTree <table>_local on every
                          node and a Distributed <table> the service reads (see docs/operations.md)
  demo                    create the tables and load demo data unless a finished demo build is there
                          (DEMO_SCALE, DEMO_SEED, DEMO_DAYS); single node only
  import [--source S] [--format F] [--account ID] [--max-bad-rows N] [--ignore-unknown] FILE...
                          load files of a source (FILE - reads standard input, *.gz is read compressed)
                          and derive what follows from them (see docs/bringing-data.md); a file already
                          imported (the same content, compressed or not) adds nothing, nor does a row
                          already imported under its own id. Sources and their formats (the first the
                          default):
${SOURCES.map((source) => `                            ${source.name}: ${Object.keys(source.formats).join(', ')}`).join('\n')}
  derive                  name every stored request again by the user-agent set (USER_AGENTS_DIR or the
                          built-in one) and derive every download again by DOWNLOAD_RULES and DOWNLOAD_WINDOW,
                          and every link view again from link_events (rows a pipeline inserted itself too)
  geo-refresh             give every row of downloads, podcast_events and web_events the places
                          the IP database has for the row's IP (a mutation of those columns; single node only)

init, import, derive and geo-refresh first load the IP database (the npm packages' files, or GEO_DB_DIR's)
unless these files are loaded already: seconds, once per warehouse and version of the files.
`;

type Command =
  | { name: 'init'; cluster?: string }
  | { name: 'demo' }
  | { name: 'derive' }
  | { name: 'geo-refresh' }
  | { name: 'import'; files: string[]; source: string; account?: string; format: string; maxBadRows: number; ignoreUnknown: boolean };

/** `import`'s options; a format the source has not (or none: its first), or an unknown option, is a usage error. */
function parseImport(args: string[]): Command | undefined {
  const command: Omit<Extract<Command, { name: 'import' }>, 'format'> & { format?: string } = {
    name: 'import',
    files: [],
    source: SOURCES[0].name,
    maxBadRows: 0,
    ignoreUnknown: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--account' && value) command.account = args[++i];
    else if (arg === '--source' && SOURCES.some((s) => s.name === value)) command.source = args[++i];
    else if (arg === '--format' && value) command.format = args[++i];
    else if (arg === '--max-bad-rows' && /^\d+$/.test(value ?? '')) command.maxBadRows = Number(args[++i]);
    else if (arg === '--ignore-unknown') command.ignoreUnknown = true;
    else if (arg === '-' || !arg.startsWith('-')) command.files.push(arg);
    else return undefined;
  }
  const formats = Object.keys(SOURCES.find((s) => s.name === command.source)?.formats ?? {});
  const format = command.format ?? formats[0];
  return command.files.length > 0 && formats.includes(format) ? { ...command, format } : undefined;
}

function parseArgs(argv: string[]): Command | undefined {
  if (argv[0] === 'import') return parseImport(argv.slice(1));
  if (argv.length === 1 && argv[0] === 'derive') return { name: 'derive' };
  if (argv.length === 1 && argv[0] === 'init') return { name: 'init' };
  if (argv.length === 3 && argv[0] === 'init' && argv[1] === '--cluster' && argv[2].trim() !== '') return { name: 'init', cluster: argv[2] };
  if (argv.length === 1 && argv[0] === 'demo') return { name: 'demo' };
  if (argv.length === 1 && argv[0] === 'geo-refresh') return { name: 'geo-refresh' };
  return undefined;
}

/** While `npm start` holds chDB's directory, its files go to the service (src/warehouse/import/inbox.ts). */
async function handToService(dataDir: string, command: Extract<Command, { name: 'import' }>): Promise<number> {
  let failed = false;
  for (const file of command.files) {
    const summary = await handOff(
      dataDir,
      file,
      {
        source: command.source,
        format: command.format,
        account: command.account,
        maxBadRows: command.maxBadRows,
        ignoreUnknown: command.ignoreUnknown,
        rejectsDir: process.cwd(),
      },
      (message) => process.stderr.write(`${message}\n`),
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (summary.outcome === 'refused') failed = true;
  }
  return failed ? 1 : 0;
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
  if (command.name === 'import' && config.warehouse.kind === 'chdb' && runningService(config.warehouse.dataDir) !== undefined) {
    return handToService(config.warehouse.dataDir, command);
  }
  const warehouse = await openWarehouse(config.warehouse);
  try {
    const outdated = await outdatedTables(warehouse);
    if (outdated.length > 0) {
      throw new WarehouseSetupError(
        `Tables ${outdated.join(', ')} in database ${config.warehouse.database} were created by an older version of the service and lack columns it reads (such as account_id); recreate them and reload their data`,
      );
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
        throw new WarehouseSetupError(
          `Tables ${single.map((t) => `${t.name} (${t.engine})`).join(', ')} of database ${config.warehouse.database} already exist on this node as single-node tables; move them away, then run init --cluster again`,
        );
      }
      await addMissingProjections(warehouse, logger, command.cluster);
    } else {
      await applyDdl(warehouse, logger);
      // Seconds the first time a version of the files is seen; every command that gives rows places waits for it (the
      // demo invents its own).
      if (command.name !== 'demo') await ensureGeo(warehouse, config.geo.dir, logger);
    }
    logger.info('tables ready', {
      database: config.warehouse.database,
      warehouse: config.warehouse.kind,
      cluster: command.name === 'init' ? command.cluster : undefined,
    });
    if (command.name === 'import' || command.name === 'derive') {
      const client = warehouse.client();
      const derivation = {
        settings: config.downloads,
        userAgents: loadUserAgents(config.downloads.userAgentsDir),
        places: addressPlaces(config.warehouse.database),
      };
      const progress = (message: string) => process.stderr.write(`${message}\n`);
      if (command.name === 'derive') {
        await ensureImportTables(client, config.warehouse.database);
        const started = performance.now();
        const derived = {
          ...(await deriveAll(client, config.warehouse.database, derivation)),
          ...(await deriveAllLinkViews(client, config.warehouse.database, derivation)),
        };
        process.stdout.write(
          `${JSON.stringify({ rules: config.downloads.rules, window: config.downloads.window, ...derived, seconds: Math.round(performance.now() - started) / 1000 })}\n`,
        );
        return 0;
      }
      let failed = false;
      for (const file of command.files) {
        const summary = await importFile(client, file, {
          database: config.warehouse.database,
          source: command.source,
          format: command.format,
          account: command.account,
          maxBadRows: command.maxBadRows,
          ignoreUnknown: command.ignoreUnknown,
          trackingPrefix: config.downloads.trackingPrefix,
          rejectsDir: process.cwd(),
          derivation,
          engineReadsFiles: config.warehouse.kind === 'chdb',
          progress,
        });
        process.stdout.write(`${JSON.stringify(summary)}\n`);
        if (summary.outcome === 'refused') failed = true;
      }
      return failed ? 1 : 0;
    }
    if (command.name === 'demo') {
      // Same all-or-nothing build as the service's start-up; on a server, rows
      // that no finished demo build put there may be an operator's and stay.
      await ensureDemo(warehouse, config.demo, logger, { unprovenRows: config.warehouse.kind === 'chdb' ? 'move-aside' : 'keep', downloads: config.downloads });
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
    const known = err instanceof ConfigError || err instanceof WarehouseSetupError || err instanceof ImportRefused;
    process.stderr.write(`${known ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
