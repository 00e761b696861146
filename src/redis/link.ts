import { Gauge, type Registry } from 'prom-client';
import { createClient } from 'redis';
import type { Logger } from '../log';

/**
 * The connection to the Redis that holds the rate-limit counters of every
 * instance. Commands never wait for Redis: while it is unreachable they fail
 * at once (no offline queue) or after COMMAND_TIMEOUT_MS, and the limiters
 * count in memory instead. An outage is logged once when it begins and once
 * when it ends, not once per request. The client reconnects by itself.
 */
export interface RedisLink {
  /** True while connected; commands sent otherwise fail at once. */
  ready(): boolean;
  send(args: string[]): Promise<unknown>;
  /** A command failed: the first failure of an outage is logged. */
  failed(err: unknown): void;
  /** A command succeeded: ends an outage, if one was logged. */
  succeeded(): void;
  /** Called each time the connection is (re-)established. */
  onReady(listener: () => void): void;
  close(): Promise<void>;
}

// A rate-limit check sits in front of every request; a Redis slower than
// this is treated as down for that request.
const COMMAND_TIMEOUT_MS = 500;

export function connectRedis(url: string, logger: Logger, registry: Registry): RedisLink {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1000) },
  });
  const listeners: (() => void)[] = [];
  let outage = false;
  const where = redactedUrl(url);

  const failed = (err: unknown) => {
    if (outage) return;
    outage = true;
    logger.error("redis unavailable: counting rate limits in this instance's memory until it is back", {
      redis: where,
      error: err instanceof Error ? err.message : String(err),
    });
  };
  const succeeded = () => {
    if (!outage) return;
    outage = false;
    logger.warn('redis available again: counting rate limits in redis', { redis: where });
  };

  // Without an 'error' listener the client's errors would crash the process.
  client.on('error', failed);
  client.on('ready', () => {
    succeeded();
    for (const listener of listeners) listener();
  });
  client.connect().catch(failed);

  new Gauge({
    name: 'analytics_rate_limit_redis_up',
    help: 'With REDIS_URL: 1 while rate limits are counted in Redis, 0 while this instance counts them in memory.',
    registers: [registry],
    collect() {
      this.set(client.isReady && !outage ? 1 : 0);
    },
  });

  return {
    ready: () => client.isReady,
    send: (args) => withTimeout(client.sendCommand(args), COMMAND_TIMEOUT_MS),
    failed,
    succeeded,
    onReady: (listener) => listeners.push(listener),
    close: async () => {
      if (client.isOpen) client.destroy();
    },
  };
}

/**
 * node-redis's own command timeout stops counting once the command is on the
 * socket, so a Redis that accepts commands and does not answer them would
 * hold every request; this gives up waiting (the reply, when it comes, is
 * still read by the client and dropped).
 */
function withTimeout<T>(command: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis did not answer within ${ms} ms`)), ms);
    command.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function redactedUrl(url: string): string {
  return url.replace(/:[^:@/]*@/, ':***@');
}
