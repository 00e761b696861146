/**
 * Where one request's time went, for its Server-Timing header: made when a
 * data route's request arrives (src/http/server-timing.ts) and carried in
 * its scope to the Cube adapter, which adds Cube's time, and to the
 * statements and cache lookups Cube makes for its load (src/cube/in-flight.ts).
 */
export interface RequestTiming {
  /** Time Cube's driver waited for this request's statements: chDB's statement queue and ClickHouse. */
  warehouseMs: number;
  /** Time in Cube's API gateway (including the warehouse). */
  cubeMs: number;
  /** Each distinct query Cube looked up for the request, and whether its result cache answered it. */
  cacheLookups: Map<string, boolean>;
}

export type CacheStatus = 'hit' | 'miss' | 'partial';

export function newRequestTiming(): RequestTiming {
  return { warehouseMs: 0, cubeMs: 0, cacheLookups: new Map() };
}

/**
 * Records a result-cache lookup; true the first time the request looks up
 * this query. Cube looks a query up again when it renews it in the
 * background and each time the API asks again after "Continue wait"; only
 * the first lookup says whether the cache answered. False without a timing
 * (work no data route waits on).
 */
export function noteCacheLookup(timing: RequestTiming | undefined, cacheKey: string, hit: boolean): boolean {
  if (!timing || timing.cacheLookups.has(cacheKey)) return false;
  timing.cacheLookups.set(cacheKey, hit);
  return true;
}

export function cacheStatus(timing: RequestTiming): CacheStatus | undefined {
  const results = [...timing.cacheLookups.values()];
  if (results.length === 0) return undefined;
  if (results.every(Boolean)) return 'hit';
  return results.some(Boolean) ? 'partial' : 'miss';
}
