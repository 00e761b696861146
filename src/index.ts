import type { Server } from 'node:http';
import { assembleService, openMeasuredWarehouse, type AssembledService } from './assembly';
import { ConfigError, loadConfig, type Config } from './config';
import { ModelsInvalid } from './cube/models/problems';
import { monitorEventLoop } from './event-loop';
import { createHttpServer } from './http/server';
import { createStartingApp } from './http/starting-app';
import { INAPPLICABLE_CUBE_ADVICE } from './cube/console-advice';
import { createLogger, routeConsole, type Logger } from './log';
import { serveMetrics } from './metrics/server';
import { onShutdownSignals } from './shutdown';
import { WarehouseSetupError } from './warehouse/data-dir';
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
  const measured = await openMeasuredWarehouse(config);
  const { warehouse } = measured;

  // Listening before the set-up, so that probes learn what the service waits for (503 not_ready) rather than
  // meeting a refused connection while the demo data is built.
  let waitingFor = 'the tables are being checked';
  const server = createHttpServer(createStartingApp(logger, () => waitingFor), config.http, logger);
  await listen(server, config, logger);

  // The embedded engine is ours to set up; a ClickHouse server is set up by
  // its operator (npm run warehouse -- init), and the service only reads it.
  if (config.warehouse.kind === 'chdb') {
    const outdated = await outdatedTables(warehouse);
    if (outdated.length > 0) {
      if (!config.demo.enabled) {
        throw new WarehouseSetupError(`Tables ${outdated.join(', ')} in ${config.warehouse.dataDir} were created by an older version of the service; move the directory away and load the data again`);
      }
      const moved = await moveTablesAside(warehouse, outdated, `_before_${Date.now()}`);
      logger.warn('tables from an older version moved aside; rebuilding the demo data', { moved });
    }
    await applyDdl(warehouse, logger);
    waitingFor = 'the demo data is being built';
    if (config.demo.enabled) await ensureDemo(warehouse, config.demo, logger, { unprovenRows: 'move-aside' });
  }

  waitingFor = 'the models are being compiled and checked';
  let service: AssembledService;
  try {
    service = await assembleService({ config, logger, measured, watchModels: config.env !== 'production' });
  } catch (err) {
    if (!(err instanceof ModelsInvalid)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const { app, cube, readiness, gate, metrics } = service;
  const metricsServer = await serveMetrics(config.metrics, metrics.registry, logger);
  // From now on requests reach the service itself.
  server.removeAllListeners('request');
  server.on('request', app);
  logger.info('ready', { warehouse: config.warehouse.kind, startupSeconds: Math.round(performance.now()) / 1000 });
  // From ready on: the start-up's own work (demo data, model compile) is logged with its duration, not as delays.
  const eventLoop = monitorEventLoop({ logger, warnMs: config.eventLoopWarnMs });
  onShutdownSignals({
    server,
    http: config.http,
    readiness,
    gate,
    cube,
    logger,
    release: async () => {
      eventLoop.stop();
      metricsServer?.close();
      await service.close();
    },
  });
}

/** Listens, or exits with one line saying why it cannot. "listening" is logged only once it does. */
function listen(server: Server, config: Config, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const failed = (err: Error) => {
      process.stderr.write(`${listenFailure(err, config)}\n`);
      process.exit(1);
    };
    server.once('error', failed);
    server.listen(config.port, config.host, () => {
      server.off('error', failed);
      server.on('error', (error) => logger.error('server error', { error: error.message }));
      const url = `http://localhost:${config.port}`;
      logger.info('listening', { url, warehouse: config.warehouse.kind });
      if (config.usingDemoKey) {
        // For the person at the terminal; stdout is the log, one JSON object a line.
        process.stderr.write(
          `\nAnalytics API on ${url}/v1/data/meta/ (demo key, reads every account: ${config.apiKeys[0]})\n` +
            `  curl -H 'x-api-key: ${config.apiKeys[0]}' ${url}/v1/data/meta/\n` +
            `A key for one account: npm run keys -- create --account northwind-audio --name demo\n\n`,
        );
      }
      resolve();
    });
  });
}

/** Why the server could not listen, in one line naming the variables to change. */
function listenFailure(err: Error, { port, host }: Config): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is already in use (PORT)`;
    case 'EACCES':
      return `Port ${port} on ${host} needs more privileges than this process has; choose a port above 1023 (PORT)`;
    case 'EADDRNOTAVAIL':
      return `Address ${host} is not an address of this machine (HOST)`;
    default:
      return `Cannot listen on ${host}:${port} (PORT, HOST): ${err.message}`;
  }
}

// Known failures (a full disk, an unusable data directory) are one line the
// operator can act on; anything else keeps its stack for whoever debugs it.
main().catch((err: unknown) => {
  const detail = err instanceof WarehouseSetupError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`Failed to start: ${detail}\n`);
  process.exit(1);
});
