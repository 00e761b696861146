import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Config } from '../config';
import type { Logger } from '../log';
import { countRefusedConnection, refusedConnections } from './refused-connections';

/** Descriptors left to the engine (chDB's part files), the key file and logs when the cap is derived. */
const DESCRIPTORS_KEPT = 256;
const DEFAULT_MAX_CONNECTIONS = 1000;
/** At most one log line per this interval about refused connections, however many there are. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * The HTTP server, hardened against connection floods: at most
 * `maxConnections` open sockets (more are closed at once, counted and logged
 * at most every 10 s), and a client that is slow to send its headers or its
 * request is cut off after HTTP_HEADERS_TIMEOUT_SECONDS / _REQUEST_. Node
 * checks those timeouts every `connectionsCheckingInterval` (30 s by
 * default, which alone let slow-header sockets squat for 40 s); here every
 * second.
 */
export function createHttpServer(app: Express, http: Config['http'], logger: Logger): Server {
  const server = createServer(
    {
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
    },
    app,
  );
  const limit = openFileLimit();
  server.maxConnections = http.maxConnections ?? defaultMaxConnections(limit);
  if (limit !== undefined && server.maxConnections > limit - DESCRIPTORS_KEPT) {
    logger.warn('HTTP_MAX_CONNECTIONS is close to the open-file limit: the engine may run out of descriptors', {
      maxConnections: server.maxConnections,
      openFileLimit: limit,
    });
  }

  let quietUntil = 0;
  let unlogged = 0;
  server.on('drop', (data?: { remoteAddress?: string }) => {
    countRefusedConnection();
    unlogged += 1;
    const now = Date.now();
    if (now < quietUntil) return;
    logger.warn('connections refused: the server holds HTTP_MAX_CONNECTIONS', {
      maxConnections: server.maxConnections,
      refused: unlogged,
      refusedTotal: refusedConnections(),
      lastFrom: data?.remoteAddress,
    });
    unlogged = 0;
    quietUntil = now + REFUSAL_LOG_INTERVAL_MS;
  });
  return server;
}

/** The cap when none is configured: below the open-file limit, and at most 1,000. */
export function defaultMaxConnections(limit = openFileLimit()): number {
  if (limit === undefined) return DEFAULT_MAX_CONNECTIONS;
  return Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, limit - DESCRIPTORS_KEPT));
}

/** The soft open-file limit (`ulimit -n`), where the system says (Linux); undefined elsewhere or unlimited. */
function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}
