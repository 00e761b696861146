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
import { ensureGeo, geoObjectStatements } from './geo/load';
import { addressPlaces } from './geo/places';
import { refreshPlaces } from './geo/refresh';
import { ensureImportTables, importFile, ImportRefused } from './import/import';
import { checkedErasure, ErasureRefused, forget, type Erasure } from './forget';
import { handOff, handOffErasure, runningService } from './import/inbox';
import { SOURCES } from './import/sources';
import { AddressesReduced, enforceRetention } from './retention';
import { addMissingProjections, applyDdl, ensureDemo, outdatedTables } from './setup';

const USAGE = `Usage: npm run warehouse -- <command>

Commands (against CLICKHOUSE_URL when set, else the embedded chDB directory):
  init                    create the database and tables, and add the projections tables made by an
                          earlier version lack (idempotent)
  init --cluster <name>   the same ON CLUSTER <name>: a ReplicatedMergeTree <table>_local on every
                          node and a Distributed <table> the service reads, the bookkeeping and the IP
                          database on every node (see docs/guides/deploying.md)
  init --cluster <name> --print
                          print those statements (the IP database's tables and dictionaries without its
                          rows), without a server
  demo                    create the tables and load demo data unless a finished demo build is there
                          (DEMO_SCALE, DEMO_SEED, DEMO_DAYS); single node only
  import [--source S] [--format F] [--account ID] [--max-bad-rows N] [--ignore-unknown] FILE...
                          load files of a source (FILE - reads standard input, *.gz is read compressed)
                          and derive what follows from them (see docs/guides/bringing-data.md); a file already
                          imported (the same content, compressed or not) adds nothing, nor does a row
                          already imported under its own id. Sources and their formats (the first the
                          default):
${SOURCES.map((source) => `                            ${source.name}: ${Object.keys(source.formats).join(', ')}${source.given ? `; --${source.given.join(', --')} for what a file does not say` : ''}`).join('\n')}
  derive                  name every stored request again by the user-agent set (USER_AGENTS_DIR or the
                          built-in one) and derive every download again by DOWNLOAD_RULES and DOWNLOAD_WINDOW,
                          and every link view again from link_events (rows a pipeline inserted itself too)
  forget --account ID     erase every row of the account in every table, and its import records (the same
                          files can be imported again); its API keys are revoked (docs/guides/retention.md)
  forget --address IP [--account ID]
                          erase a listener's or visitor's rows (an IPv6 address by its /64), of one account
                          or of all; both print the rows removed per table and record the erasure without
                          what was erased
  geo-refresh             give every row of downloads, podcast_events and web_events the places
                          the IP database has for the row's IP (a mutation of those columns)

init, import, derive and geo-refresh first load the IP database (the npm packages' files, or GEO_DB_DIR's)
unless these files are loaded already: seconds, once per warehouse and version of the files.
Every command also gives the tables the TTL of RETENTION_RAW_DAYS, RETENTION_DERIVED_DAYS and
RETENTION_CHARTS_DAYS, and cuts the addresses older than ADDRESS_RETENTION_DAYS to their network
(see docs/guides/retention.md); on a ClickHouse server, run init daily for the latter.
`;

type Command =
  | { name: 'init'; cluster?: string; print?: boolean }
  | { name: 'demo' }
  | { name: 'derive' }
  | { name: 'geo-refresh' }
  | { name: 'forget'; erasure: Erasure }
  | {
      name: 'import';
      files: string[];
      source: string;
      account?: string;
      given: Record<string, string>;
      format: string;
      maxBadRows: number;
      ignoreUnknown: boolean;
    };

/**
 * `import`'s options; a format the source has not (or none: its first), or an unknown option, is a usage error. A
 * source's given fields (Source.given) are options of that source: `--<field> VALUE`.
 */
function parseImport(args: string[]): Command | undefined {
  const command: Omit<Extract<Command, { name: 'import' }>, 'format'> & { format?: string } = {
    name: 'import',
    files: [],
    source: SOURCES[0].name,
    given: {},
    maxBadRows: 0,
    ignoreUnknown: false,
  };
  const named = args.indexOf('--source');
  const given = SOURCES.find((s) => s.name === (named >= 0 ? args[named + 1] : SOURCES[0].name))?.given ?? [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--account' && value) command.account = args[++i];
    else if (arg.startsWith('--') && given.includes(arg.slice(2)) && value) command.given[arg.slice(2)] = args[++i];
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

/** `forget`'s options: --account, --address, each at most once, at least one of them. */
function parseForget(args: string[]): Command | undefined {
  const given: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const [option, value] = [args[i], args[i + 1]];
    if (!['--account', '--address'].includes(option) || value === undefined || option in given) return undefined;
    given[option] = value;
  }
  const { '--account': account, '--address': address } = given;
  if (address !== undefined) return { name: 'forget', erasure: { kind: 'address', address, ...(account === undefined ? {} : { account }) } };
  return account === undefined ? undefined : { name: 'forget', erasure: { kind: 'account', account } };
}

function parseArgs(argv: string[]): Command | undefined {
  if (argv[0] === 'import') return parseImport(argv.slice(1));
  if (argv[0] === 'forget') return parseForget(argv.slice(1));
  if (argv.length === 1 && argv[0] === 'derive') return { name: 'derive' };
  if (argv.length === 1 && argv[0] === 'init') return { name: 'init' };
  if (argv.length === 3 && argv[0] === 'init' && argv[1] === '--cluster' && argv[2].trim() !== '') return { name: 'init', cluster: argv[2] };
  if (argv.length === 4 && argv[0] === 'init' && argv[1] === '--cluster' && argv[2].trim() !== '' && argv[3] === '--print') {
    return { name: 'init', cluster: argv[2], print: true };
  }
  if (argv.length === 1 && argv[0] === 'demo') return { name: 'demo' };
  if (argv.length === 1 && argv[0] === 'geo-refresh') return { name: 'geo-refresh' };
  return undefined;
}

/** While `npm start` holds chDB's directory, its files go to the service (src/warehouse/import/inbox.ts). */
async function handToService(dataDir: string, command: Extract<Command, { name: 'import' }>, rejectsDir: string): Promise<number> {
  let failed = false;
  for (const file of command.files) {
    const summary = await handOff(
      dataDir,
      file,
      {
        source: command.source,
        format: command.format,
        account: command.account,
        given: command.given,
        maxBadRows: command.maxBadRows,
        ignoreUnknown: command.ignoreUnknown,
        rejectsDir,
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
  if (command.name === 'init' && command.cluster && command.print) {
    const layout = { database: config.warehouse.database, cluster: command.cluster };
    for (const statement of [...clusterDdlStatements(layout.database, layout.cluster), ...geoObjectStatements(layout)])
      process.stdout.write(`${statement};\n\n`);
    return 0;
  }
  if (command.name === 'init' && command.cluster && config.warehouse.kind !== 'server') {
    throw new WarehouseSetupError('init --cluster needs CLICKHOUSE_URL: the embedded chDB engine is a single node');
  }
  const logger = createLogger(config.logLevel);
  // While `npm start` holds chDB's directory, imports and erasures go to the service.
  const serviceDir = config.warehouse.kind === 'chdb' && runningService(config.warehouse.dataDir) !== undefined ? config.warehouse.dataDir : undefined;
  if (command.name === 'import' && serviceDir !== undefined) return handToService(serviceDir, command, config.rejectsDir);
  if (command.name === 'forget') checkedErasure(command.erasure);
  if (command.name === 'forget' && serviceDir !== undefined) {
    const progress = (message: string) => process.stderr.write(`${message}\n`);
    process.stdout.write(`${JSON.stringify(await handOffErasure(serviceDir, command.erasure, progress))}\n`);
    return 0;
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
      await enforceRetention({ client, database: config.warehouse.database, settings: config, logger });
      await ensureGeo(warehouse, config.geo.dir, logger);
    } else {
      await applyDdl(warehouse, logger);
      // The demo's tables are swapped in from a staging database: the settings are applied to them once they are there.
      if (command.name !== 'demo') await enforceRetention({ client: warehouse.client(), database: config.warehouse.database, settings: config, logger });
      // Seconds the first time a version of the files is seen; every command that gives rows places waits for it (the
      // demo invents its own; an erasure gives none).
      if (command.name !== 'demo' && command.name !== 'forget') await ensureGeo(warehouse, config.geo.dir, logger);
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
        addressDays: config.retention.addressDays,
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
          given: command.given,
          maxBadRows: command.maxBadRows,
          ignoreUnknown: command.ignoreUnknown,
          trackingPrefix: config.downloads.trackingPrefix,
          rejectsDir: config.rejectsDir,
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
      await enforceRetention({ client: warehouse.client(), database: config.warehouse.database, settings: config, logger });
    }
    if (command.name === 'geo-refresh') await refreshPlaces(warehouse, logger);
    if (command.name === 'forget') {
      // No service holds the warehouse: one that starts later revokes the account's keys (src/keys/erased.ts).
      process.stdout.write(`${JSON.stringify(await forget(warehouse.client(), config.warehouse.database, command.erasure))}\n`);
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
    const known =
      err instanceof ConfigError ||
      err instanceof WarehouseSetupError ||
      err instanceof ImportRefused ||
      err instanceof AddressesReduced ||
      err instanceof ErasureRefused;
    process.stderr.write(`${known ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
