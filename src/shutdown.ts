import type { Server } from 'node:http';
import type { Config } from './config';
import type { CubeService } from './cube/service';
import type { ShutdownGate } from './http/shutdown-gate';
import type { Logger } from './log';
import type { Readiness } from './readiness';

/** Exit codes of a shutdown: every request was answered, or some were cut off at SHUTDOWN_TIMEOUT_SECONDS. */
export const EXIT_CLEAN = 0;
export const EXIT_REQUESTS_CUT_OFF = 3;

export interface ShutdownDeps {
  server: Server;
  http: Pick<Config['http'], 'shutdownDrainMs' | 'shutdownTimeoutMs'>;
  readiness: Readiness;
  gate: ShutdownGate;
  cube: Pick<CubeService, 'refuseNotStarted'>;
  logger: Logger;
  /** Closes what the server used (key ring, Cube, warehouse) once no request is left. */
  release(): Promise<void>;
}

/**
 * The shutdown sequence; resolves with the exit code.
 * 1. Readiness turns 503 at once; for SHUTDOWN_DRAIN_SECONDS every request
 *    is still taken and answered, while load balancers notice.
 * 2. The server stops accepting connections; a request on a connection still
 *    open is answered 503 shutting_down, and so is every load none of whose
 *    statements has started (waiting in the statement queue or Cube's).
 * 3. Requests with a statement running get SHUTDOWN_TIMEOUT_SECONDS to
 *    finish; any still open then is logged with its request id and cut off,
 *    and the exit code says so.
 */
export async function shutDown(deps: ShutdownDeps, signal: string): Promise<number> {
  const { server, http, readiness, gate, cube, logger } = deps;
  readiness.markShuttingDown();
  logger.info('shutting down: draining', { signal, drainMs: http.shutdownDrainMs, timeoutMs: http.shutdownTimeoutMs });
  await sleep(http.shutdownDrainMs);

  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  gate.close();
  cube.refuseNotStarted();
  server.closeIdleConnections();
  const running = gate.inFlight();
  logger.info('shutting down: no longer accepting; waiting for running requests', { running: running.length });

  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    gate.idle().then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), http.shutdownTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
  const cutOff = finished ? [] : gate.inFlight();
  for (const request of cutOff) {
    logger.error('request cut off at shutdown timeout', { ...request, timeoutMs: http.shutdownTimeoutMs });
  }
  // Kept-alive connections that answered their last request hold the server open.
  server.closeAllConnections();
  await closed;
  try {
    await deps.release();
  } catch (err) {
    logger.error('release failed', { error: String(err) });
  }
  const code = cutOff.length > 0 ? EXIT_REQUESTS_CUT_OFF : EXIT_CLEAN;
  logger.info('shut down', { exitCode: code, cutOff: cutOff.length });
  return code;
}

/** SIGTERM/SIGINT run the sequence once, then exit with its code. */
export function onShutdownSignals(deps: ShutdownDeps): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    shutDown(deps, signal).then(
      (code) => process.exit(code),
      (err: unknown) => {
        deps.logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
