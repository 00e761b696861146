import { randomUUID } from 'node:crypto';
import { MemoryStore, type ClientRateLimitInfo, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { RedisLink } from '../redis/link';

/**
 * Where the limiters count. Without Redis, in this process's memory. With
 * Redis, in Redis while it answers, so that every instance shares one budget
 * per key; while it does not, in this process's memory, so that an outage
 * neither fails requests (5xx) nor lets them all through unlimited.
 */
export interface LimitStores {
  /** A store for one express-rate-limit limiter; `prefix` keeps limiters apart in Redis. */
  counter(prefix: string): Store;
  concurrency(prefix: string, holdLimitMs: number): ConcurrencySlots;
}

export interface ConcurrencySlots {
  /** Takes one of `max` slots of `key`, or answers undefined when all are taken. */
  acquire(key: string, max: number): Promise<(() => Promise<void>) | undefined>;
}

export const memoryStores: LimitStores = {
  counter: () => new MemoryStore(),
  concurrency: () => memorySlots(),
};

export function redisStores(link: RedisLink): LimitStores {
  return {
    counter: (prefix) => new FailoverStore(link, prefix),
    concurrency: (prefix, holdLimitMs) => redisSlots(link, prefix, holdLimitMs),
  };
}

class FailoverStore implements Store {
  readonly localKeys = false;
  private readonly memory = new MemoryStore();
  private readonly redis: RedisStore;
  private options?: Options;

  constructor(
    private readonly link: RedisLink,
    readonly prefix: string,
  ) {
    this.redis = new RedisStore({ prefix, sendCommand: (...args: string[]) => link.send(args) as Promise<never> });
    // rate-limit-redis loads its scripts in init() and keeps a failed load
    // for good, so every (re)connection loads them again.
    link.onReady(() => {
      if (this.options) this.redis.init(this.options).catch((err: unknown) => link.failed(err));
    });
  }

  init(options: Options): void {
    this.options = options;
    this.memory.init(options);
    if (this.link.ready()) this.redis.init(options).catch((err: unknown) => this.link.failed(err));
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.either((store) => store.get(key));
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.either((store) => store.increment(key));
  }

  decrement(key: string): Promise<void> {
    return this.either((store) => store.decrement(key));
  }

  resetKey(key: string): Promise<void> {
    return this.either((store) => store.resetKey(key));
  }

  shutdown(): void {
    this.memory.shutdown();
  }

  private async either<T>(operation: (store: RedisStore | MemoryStore) => Promise<T>): Promise<T> {
    if (this.link.ready()) {
      try {
        const result = await operation(this.redis);
        this.link.succeeded();
        return result;
      } catch (err) {
        this.link.failed(err);
      }
    }
    return operation(this.memory);
  }
}

function memorySlots(): ConcurrencySlots {
  const inFlight = new Map<string, number>();
  return {
    acquire: async (key, max) => {
      const current = inFlight.get(key) ?? 0;
      if (current >= max) return undefined;
      inFlight.set(key, current + 1);
      return async () => {
        const remaining = (inFlight.get(key) ?? 1) - 1;
        if (remaining === 0) inFlight.delete(key);
        else inFlight.set(key, remaining);
      };
    },
  };
}

/**
 * A sorted set per key: one member per request in flight, scored by the time
 * Redis gave it the slot. A slot is released when its request settles; the
 * slots of an instance that died mid-request are dropped once older than
 * `holdLimitMs` (longer than any request may run), so they cannot lock a key
 * out for good, as a bare INCR/DECR counter would. Taking a slot is one
 * script, so two instances cannot both take the last one.
 */
const ACQUIRE_SCRIPT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local hold = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - hold)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ms, ARGV[2])
redis.call('PEXPIRE', KEYS[1], hold)
return 1`;

function redisSlots(link: RedisLink, prefix: string, holdLimitMs: number): ConcurrencySlots {
  const memory = memorySlots();
  return {
    acquire: async (key, max) => {
      if (!link.ready()) return memory.acquire(key, max);
      const redisKey = `${prefix}${key}`;
      const slot = randomUUID();
      let taken: unknown;
      try {
        taken = await link.send(['EVAL', ACQUIRE_SCRIPT, '1', redisKey, String(max), slot, String(holdLimitMs)]);
        link.succeeded();
      } catch (err) {
        link.failed(err);
        // A script that timed out here may still run later; the slot it would take is let go behind it.
        link.send(['ZREM', redisKey, slot]).catch(() => undefined);
        return memory.acquire(key, max);
      }
      if (taken !== 1) return undefined;
      return async () => {
        // A slot that cannot be released now expires after holdLimitMs.
        await link.send(['ZREM', redisKey, slot]).catch((err: unknown) => link.failed(err));
      };
    },
  };
}
