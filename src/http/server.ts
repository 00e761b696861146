import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/registry';
import { capConnections, type ShedReason } from './connection-cap';

/** Descriptors left to the engine (chDB's part files), the key file and logs when the cap is derived. */
const DESCRIPTORS_KEPT = 256;
const DEFAULT_MAX_CONNECTIONS = 1000;
/** At most one log line per this interval about connections closed at the cap, however many there are. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * The HTTP server, hardened against connection floods: at most
 * HTTP_MAX_CONNECTIONS open sockets, a new one taking the place of the one
 * that has waited longest for its headers, else of the longest idle (see
 * connection-cap.ts; each closed one counted, and logged at most every
 * 10 s), and a client that is slow to send its headers or its request is
 * cut off after HTTP_HEADERS_TIMEOUT_SECONDS / _REQUEST_. Node checks those
 * timeouts every `connectionsCheckingInterval` (30 s by default, which
 * alone let slow-header sockets squat for 40 s); here every second.
 */
export function createHttpServer(app: Express, http: Config['http'], logger: Logger, metrics: Pick<Metrics, 'connectionsShed'>): Server {
  const server = createServer(
    {
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
    },
    app,
  );
  const limit = openFileLimit();
  const maxConnections = http.maxConnections ?? defaultMaxConnections(limit);
  if (limit !== undefined && maxConnections > limit - DESCRIPTORS_KEPT) {
    logger.warn('HTTP_MAX_CONNECTIONS is close to the open-file limit: the engine may run out of descriptors', {
      maxConnections,
      openFileLimit: limit,
    });
  }

  let quietUntil = 0;
  let unlogged: Record<ShedReason, number> = { waiting_headers: 0, idle: 0, refused: 0 };
  capConnections(server, maxConnections, (reason, remoteAddress) => {
    metrics.connectionsShed.inc({ reason });
    unlogged[reason] += 1;
    const now = Date.now();
    if (now < quietUntil) return;
    logger.warn('connections closed: the server holds HTTP_MAX_CONNECTIONS', {
      maxConnections,
      ...unlogged,
      lastFrom: remoteAddress,
    });
    unlogged = { waiting_headers: 0, idle: 0, refused: 0 };
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
