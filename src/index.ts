import type { Server } from 'node:http';
import { ConfigError, loadConfig, type Config } from './config';
import { createCubeService } from './cube/service';
import { createApp } from './http/app';
import { createAuthenticator } from './keys/authenticator';
import { openKeyRing } from './keys/ring';
import { createLogger, type Logger } from './log';
import { openWarehouse } from './warehouse/connection';
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
  const warehouse = await openWarehouse(config.warehouse);

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
    if (config.demo.enabled) await ensureDemo(warehouse, config.demo, logger, { unprovenRows: 'move-aside' });
  }

  const ring = await openKeyRing({ file: config.keys.file, reloadIntervalMs: config.keys.reloadIntervalMs, logger });
  const authenticator = createAuthenticator({ operatorKeys: config.apiKeys, ring });
  const cube = createCubeService({ warehouse, query: config.query, logger });
  const app = createApp({ config, cube, authenticator, logger });
  const server = app.listen(config.port, config.host, () => {
    const url = `http://localhost:${config.port}`;
    logger.info('listening', { url, warehouse: config.warehouse.kind });
    if (config.usingDemoKey) {
      process.stdout.write(
        `\nAnalytics API on ${url}/v1/data/meta/ (demo key, reads every account: ${config.apiKeys[0]})\n` +
          `  curl -H 'x-api-key: ${config.apiKeys[0]}' ${url}/v1/data/meta/\n` +
          `A key for one account: npm run keys -- create --account northwind-audio --name demo\n\n`,
      );
    }
  });
  server.on('error', (err) => {
    logger.error('server error', { error: err.message });
    process.exit(1);
  });
  onShutdown(server, logger, config.http.shutdownTimeoutMs, async () => {
    ring.close();
    await cube.close();
    await warehouse.close();
  });
}

/** SIGTERM/SIGINT: stop accepting connections, let requests in flight finish, then release the engine. */
function onShutdown(server: Server, logger: Logger, timeoutMs: number, release: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      logger.warn('requests still open at shutdown timeout; closing them');
      server.closeAllConnections();
    }, timeoutMs);
    force.unref();
    server.close(() => {
      release()
        .catch((err: unknown) => logger.error('release failed', { error: String(err) }))
        .finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

// Known failures (a full disk, an unusable data directory) are one line the
// operator can act on; anything else keeps its stack for whoever debugs it.
main().catch((err: unknown) => {
  const detail = err instanceof WarehouseSetupError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`Failed to start: ${detail}\n`);
  process.exit(1);
});
