import type { Metrics } from '../metrics/registry';
import { noteCacheLookup, type RequestTiming } from '../metrics/request-timing';
import type { LoadAnswer } from './answer';
import { jsonLength } from '../json-slices';
import { ResultCache, type ResultCacheOptions } from './result-cache';
import { asksRenewal, cacheKey, refreshedAt } from './result-key';
import type { Query, RequestScope } from './types';

/**
 * Answers a load from the result cache when it holds one for the same key,
 * else from `compute` (Cube), keeping Cube's answer. renewQuery asks Cube
 * itself.
 */
export type ThroughCache = <T extends LoadAnswer>(route: string, query: Query | Query[], context: RequestScope, compute: () => Promise<T>) => Promise<T>;

export interface CacheFront {
  through: ThroughCache;
  /**
   * The data changed (an import): no answer kept or being computed before
   * this is served after it.
   */
  dataChanged(): void;
}

/**
 * The result cache in front of Cube, counted in the result-cache metrics and
 * the request's Server-Timing. `modelVersion` is the serving models' version.
 */
export function createCacheFront(options: ResultCacheOptions, metrics: Pick<Metrics, 'resultCacheHits'>, modelVersion: () => Promise<string>): CacheFront {
  const cache = new ResultCache(options);
  /** Loads Cube is answering now for a missed key: later requests for the key wait for the same answer. */
  const pending = new Map<string, Promise<unknown>>();
  /** Bumped when the data changes: an answer computed before is stored, if at all, under a key no later request asks. */
  let generation = 0;

  const through = async <T extends LoadAnswer>(route: string, query: Query | Query[], context: RequestScope, compute: () => Promise<T>): Promise<T> => {
    // Keyed by the serving models and the data's generation: a reload or an import stops older answers from being served.
    const key = cache.enabled ? cacheKey(route, query, context, `${await modelVersion()}/${generation}`) : undefined;
    if (key === undefined) return compute();
    const renew = asksRenewal(query);
    if (!renew) {
      const kept = cache.get(key) ?? pending.get(key);
      if (kept !== undefined) {
        if (noteCacheLookup(context.timing, key, true)) metrics.resultCacheHits.inc();
        return kept as T | Promise<T>;
      }
    }
    const answer = compute().then(async (result) => {
      const computedAt = refreshedAt(result.body);
      if (computedAt !== undefined) cache.set(key, result, computedAt, jsonLength(await result.json()));
      return result;
    });
    if (renew) return answer;
    pending.set(key, answer);
    try {
      return await answer;
    } finally {
      pending.delete(key);
    }
  };
  return {
    through,
    dataChanged: () => {
      generation += 1;
      cache.clear();
    },
  };
}

/**
 * Counts the lookups of Cube's own result cache, behind ours: Cube says in
 * its log events, and nowhere else, whether its cache answered a query:
 * "Using cache for" a hit, the others a miss. Only the request's own query
 * counts (primaryQuery), not the refresh-key queries Cube runs to decide
 * whether a cached result is still fresh.
 */
export function cubeCacheObserver(
  metrics: Pick<Metrics, 'resultCacheHits' | 'resultCacheMisses'>,
  /** The timing of the load Cube names by its request id (in-flight.ts). */
  timingOf: (requestId: unknown) => RequestTiming | undefined,
): (message: string, params: Record<string, unknown>) => void {
  return (message, params) => {
    if (params?.primaryQuery !== true) return;
    const hit = message === 'Using cache for';
    if (!hit && message !== 'Missing cache for' && message !== 'Waiting for renew' && message !== 'Force no cache for') return;
    if (noteCacheLookup(timingOf(params.requestId), JSON.stringify(params.cacheKey), hit)) {
      (hit ? metrics.resultCacheHits : metrics.resultCacheMisses).inc();
    }
  };
}
