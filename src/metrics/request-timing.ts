/**
 * Where one request's time went, for its Server-Timing header. Cube runs
 * statements from its own queue, outside the request's async context, but
 * hands the request id to the driver and to its log events; so the figures
 * are collected by request id rather than through AsyncLocalStorage.
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

export class RequestTimings {
  // Clients may send their own request ids, and two requests in flight may
  // share one: they then share a record rather than lose each other's.
  private readonly open = new Map<string, { timing: RequestTiming; holders: number }>();

  begin(requestId: string): RequestTiming {
    const entry = this.open.get(requestId);
    if (entry) {
      entry.holders++;
      return entry.timing;
    }
    const timing: RequestTiming = { warehouseMs: 0, cubeMs: 0, cacheLookups: new Map() };
    this.open.set(requestId, { timing, holders: 1 });
    return timing;
  }

  end(requestId: string): void {
    const entry = this.open.get(requestId);
    if (entry && --entry.holders === 0) this.open.delete(requestId);
  }

  /** The record of a request in flight; undefined for work no request waits on (e.g. Cube's background renewals). */
  of(requestId: unknown): RequestTiming | undefined {
    return typeof requestId === 'string' ? this.open.get(requestId)?.timing : undefined;
  }

  /**
   * Records a result-cache lookup; true the first time the request looks up
   * this query. Cube looks a query up again when it renews it in the
   * background and each time the API asks again after "Continue wait"; only
   * the first lookup says whether the cache answered.
   */
  cacheLookup(requestId: unknown, cacheKey: string, hit: boolean): boolean {
    const timing = this.of(requestId);
    if (!timing || timing.cacheLookups.has(cacheKey)) return false;
    timing.cacheLookups.set(cacheKey, hit);
    return true;
  }
}

export function cacheStatus(timing: RequestTiming): CacheStatus | undefined {
  const results = [...timing.cacheLookups.values()];
  if (results.length === 0) return undefined;
  if (results.every(Boolean)) return 'hit';
  return results.some(Boolean) ? 'partial' : 'miss';
}
