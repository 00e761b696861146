// Cube's own parser of relative date ranges, so a key means what Cube will compute.
import { resolveDateRange } from './engine/date-parser';
import type { Query, RequestScope } from './types';

/**
 * Everything that changes a load's answer: the route (its shape), the
 * account (null for an operator), the compiled models, the query as sent
 * (timezone, limit, order… included; renewQuery left out, it changes only
 * whether Cube's cache is asked) and what each relative date range means
 * right now ("last 7 days" and "this hour" move with the clock), resolved by
 * Cube's own parser in the query's time zone. Undefined when a range does
 * not parse: Cube answers that query, with its error.
 */
export function cacheKey(route: string, query: Query | Query[], { accountId }: RequestScope, models: string): string | undefined {
  const queries = Array.isArray(query) ? query : [query];
  const ranges: unknown[] = [];
  try {
    for (const q of queries) {
      const timezone = typeof q.timezone === 'string' ? q.timezone : 'UTC';
      for (const td of Array.isArray(q.timeDimensions) ? (q.timeDimensions as Record<string, unknown>[]) : []) {
        if (typeof td?.dateRange === 'string') ranges.push(resolveDateRange(td.dateRange, timezone));
        if (Array.isArray(td?.compareDateRange)) {
          for (const range of td.compareDateRange) if (typeof range === 'string') ranges.push(resolveDateRange(range, timezone));
        }
      }
    }
  } catch {
    return undefined;
  }
  const withoutRenewal = queries.map((q) => ({ ...q, renewQuery: undefined }));
  return JSON.stringify([route, accountId, models, Array.isArray(query) ? withoutRenewal : withoutRenewal[0], ranges]);
}

export function asksRenewal(query: Query | Query[]): boolean {
  return (Array.isArray(query) ? query : [query]).some((q) => q.renewQuery === true);
}

/**
 * When Cube computed an answer: its lastRefreshTime, or the oldest of its
 * results' for a multi answer. Undefined when any is missing, and the
 * answer is then not kept. Never later than `now`: an answer from a rollup
 * carries its table's stamp, which runs ahead of the clock while builds
 * come faster than one a second (src/cube/engine/build-stamps.ts), and would
 * otherwise be kept that much longer.
 */
export function refreshedAt(answer: unknown, now = Date.now()): number | undefined {
  const body = answer as { lastRefreshTime?: unknown; results?: { lastRefreshTime?: unknown }[] };
  const times = Array.isArray(body.results) ? body.results.map((r) => r.lastRefreshTime) : [body.lastRefreshTime];
  let oldest = Infinity;
  for (const time of times) {
    const ms = typeof time === 'string' ? Date.parse(time) : NaN;
    if (Number.isNaN(ms)) return undefined;
    oldest = Math.min(oldest, ms);
  }
  return times.length === 0 ? undefined : Math.min(oldest, now);
}
