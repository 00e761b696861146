// First: chDB's allocator reads its options when the library loads (warehouse/allocator.ts).
import './warehouse/allocator';
import type { Server } from 'node:http';
import type { AssembledService } from './assembly';
import { ConfigError, loadConfig, type Config } from './config';
import { ModelsInvalid } from './cube/models/problems';
import { monitorEventLoop } from './event-loop';
import { createHttpServer } from './http/server';
import { createStartingApp } from './http/starting-app';
import { INAPPLICABLE_CUBE_ADVICE } from './cube/console-advice';
import { openMeasuredWarehouse } from './measured-warehouse';
import { KeyFileError, readKeyFileIfPresent } from './keys/store';
import { createLogger, routeConsole, type Logger } from './log';
import { serveMetrics } from './metrics/server';
import { onShutdownSignals } from './shutdown';
import { collectStartupGarbageWhenQuiet } from './startup-garbage';
import { WarehouseSetupError } from './warehouse/data-dir';
import { ensureGeo, warmGeoAtStart } from './warehouse/geo/load';
import { geoFiles } from './warehouse/geo/sources';
import { enforceRetention } from './warehouse/retention';
import { applyDdl, ensureDemo, moveTablesAside, outdatedTables } from './warehouse/setup';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  routeConsole(logger, INAPPLICABLE_CUBE_ADVICE);
  // Everything the operator can get wrong is checked before "listening", so that a start which fails says so at
  // once, in one line naming the variable, rather than after a banner that promised a service.
  await readKeyFileIfPresent(config.keys.file);
  // The IP database's files, which the start loads on the embedded engine (below): GEO_DB_DIR without them is named now.
  if (config.warehouse.kind === 'chdb') geoFiles(config.geo.dir);
  const measured = await openMeasuredWarehouse(config);
  const { warehouse } = measured;
  const metricsServer = await listenOrExit(() => serveMetrics(config.metrics, measured.metrics.registry, logger), {
    port: config.metrics.port,
    host: config.metrics.host,
    variables: ['METRICS_PORT', 'METRICS_HOST'],
  });

  // Listening before the set-up, so that probes learn what the service waits for (503 not_ready) rather than
  // meeting a refused connection while the demo data is built.
  let waitingFor = 'the tables are being checked';
  const startingApp = createStartingApp(logger, () => waitingFor);
  const server = createHttpServer(startingApp, config.http, logger, measured.metrics);
  await listenOrExit(() => listen(server, config, logger), { port: config.port, host: config.host, variables: ['PORT', 'HOST'] });

  // The embedded engine is ours to set up; a ClickHouse server is set up by
  // its operator (npm run warehouse -- init), and the service only reads it.
  if (config.warehouse.kind === 'chdb') {
    const outdated = await outdatedTables(warehouse);
    if (outdated.length > 0) {
      if (!config.demo.enabled) {
        throw new WarehouseSetupError(
          `Tables ${outdated.join(', ')} in ${config.warehouse.dataDir} were created by an older version of the service; move the directory away and load the data again`,
        );
      }
      const moved = await moveTablesAside(warehouse, outdated, `_before_${Date.now()}`);
      logger.warn('tables from an older version moved aside; rebuilding the demo data', { moved });
    }
    await applyDdl(warehouse, logger);
    waitingFor = 'the demo data is being built';
    if (config.demo.enabled) await ensureDemo(warehouse, config.demo, logger, { unprovenRows: 'move-aside', downloads: config.downloads });
    waitingFor = 'the retention settings are being applied';
    await enforceRetention({ client: warehouse.client(), database: config.warehouse.database, settings: config, logger });
    // Imports through the inbox give rows the IP database's places. Loading it (seconds, once per directory and
    // version of the files) and building its dictionaries (seconds, every start) each hold chDB's one statement
    // lane, so both happen here, while every request is answered 503 at once, not behind a query's statement.
    waitingFor = 'the IP database is being loaded';
    await ensureGeo(warehouse, config.geo.dir, logger);
    waitingFor = "the IP database's dictionaries are being built";
    await warmGeoAtStart(warehouse, logger);
  }

  waitingFor = 'the models are being compiled and checked';
  // Cube's 3,900 modules load here, not before listening: a start listens, and checks and builds its data, 3 s sooner,
  // and one that fails on its data directory or its data never loads them.
  const { assembleService } = await import('./assembly.js');
  let service: AssembledService;
  try {
    service = await assembleService({ config, logger, measured, watchModels: config.env !== 'production', importInbox: true });
  } catch (err) {
    if (!(err instanceof ModelsInvalid)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const { app, cube, readiness, gate } = service;
  // From now on requests reach the service itself.
  // Only the starting app's listener: the connection cap keeps one of its own.
  server.off('request', startingApp);
  server.on('request', app);
  logger.info('ready', { warehouse: config.warehouse.kind, startupSeconds: Math.round(performance.now()) / 1000 });
  // From ready on: the start-up's own work (demo data, model compile) is logged with its duration, not as delays.
  const eventLoop = monitorEventLoop({ logger, warnMs: config.eventLoopWarnMs });
  const stopGarbageWatch = collectStartupGarbageWhenQuiet(server, {
    collected: ({ ms, heapBefore, heapAfter }) =>
      logger.info('start-up garbage collected', {
        ms: Math.round(ms),
        heapMbBefore: Math.round(heapBefore / 2 ** 20),
        heapMbAfter: Math.round(heapAfter / 2 ** 20),
      }),
  });
  onShutdownSignals({
    server,
    http: config.http,
    readiness,
    gate,
    cube,
    logger,
    release: async () => {
      eventLoop.stop();
      stopGarbageWatch();
      metricsServer?.close();
      await service.close();
    },
  });
}

interface Listener {
  port: number;
  host: string;
  /** The variables that set the port and the host. */
  variables: [string, string];
}

/** Runs `start`, or exits with one line saying why it cannot listen. */
async function listenOrExit<T>(start: () => Promise<T>, listener: Listener): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!(err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string')) throw err;
    process.stderr.write(`${listenFailure(err, listener)}\n`);
    process.exit(1);
  }
}

/** Listens; "listening" is logged only once it does. */
function listen(server: Server, config: Config, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      server.on('error', (error) => logger.error('server error', { error: error.message }));
      const url = `http://localhost:${config.port}`;
      logger.info('listening', { url, warehouse: config.warehouse.kind });
      if (config.usingDemoKey) {
        // For the person at the terminal; stdout is the log, one JSON object a line.
        process.stderr.write(
          `\nAnalytics API on ${url}/v1/data/meta/ (demo key, reads every account: ${config.apiKeys[0]})\n` +
            `  curl -H 'x-api-key: ${config.apiKeys[0]}' ${url}/v1/data/meta/\n` +
            `A key for one account: npm run keys -- create --account northwind-audio --name demo --force\n` +
            `  (--force: while the service holds the chDB directory, the CLI cannot check that the account has rows)\n\n`,
        );
      }
      resolve();
    });
  });
}

/** Why the server could not listen, in one line naming the variables to change. */
function listenFailure(err: Error, { port, host, variables: [portVariable, hostVariable] }: Listener): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is already in use (${portVariable})`;
    case 'EACCES':
      return `Port ${port} on ${host} needs more privileges than this process has; choose a port above 1023 (${portVariable})`;
    case 'EADDRNOTAVAIL':
      return `Address ${host} is not an address of this machine (${hostVariable})`;
    default:
      return `Cannot listen on ${host}:${port} (${portVariable}, ${hostVariable}): ${err.message}`;
  }
}

// Known failures (a full disk, an unusable data directory, a key file that
// does not read) are one line the operator can act on; anything else keeps
// its stack for whoever debugs it.
main().catch((err: unknown) => {
  const detail =
    err instanceof WarehouseSetupError
      ? err.message
      : err instanceof KeyFileError
        ? `API_KEYS_FILE ${err.message}`
        : err instanceof Error
          ? (err.stack ?? err.message)
          : String(err);
  process.stderr.write(`Failed to start: ${detail}\n`);
  process.exit(1);
});
