import type { Config } from '../config';
import { dateRangeSpanMs, GRANULARITY_MS, type DateRangeReader } from './date-range';
import type { Query } from './request';
import { refuse } from './rules';

const MEMBER_LISTS = ['measures', 'dimensions', 'segments', 'timeDimensions'] as const;

export type QuerySizeLimits = Pick<
  Config['query'],
  'maxMembers' | 'maxFilters' | 'maxQueries' | 'maxFilterValues' | 'maxValueLength' | 'maxTimeBuckets' | 'maxDepth' | 'maxLimit'
>;

/**
 * Caps the work one request can ask for before Cube sees it. Cube's work
 * grows with each of these, synchronously, on the one event loop every
 * request shares, and neither the query timeout nor SIGTERM can interrupt
 * it: queries (each query of an array and each compareDateRange range, which
 * Cube copies the whole query for), members, order entries, filter
 * conditions, filter values and their length, and time buckets (a
 * granularity over a date range, which Cube builds as a series in
 * JavaScript for rolling windows). Counted over every query the request
 * runs, so a compareDateRange multiplies its query's filters and buckets.
 * Walks are iterative, so a body nested thousands deep cannot exhaust the
 * stack, and stop at the first limit passed.
 */
export function checkQuerySize(queries: Query[], limits: QuerySizeLimits, readDateRange: DateRangeReader): void {
  const ranges = queries.map(rangeCount);
  const runs = ranges.reduce((sum, n) => sum + n, 0);
  if (runs > limits.maxQueries) {
    refuse(
      'queries',
      `The request runs ${runs} queries (each query of an array and each range of a compareDateRange is one); the maximum is ${limits.maxQueries} (QUERY_MAX_QUERIES).`,
    );
  }
  checkLimitsAndMembers(queries, limits);
  const counted = { filters: 0, values: 0, buckets: 0 };
  for (const [i, query] of queries.entries()) {
    checkFilters(query, ranges[i], counted, limits);
    checkBuckets(query, ranges[i], counted, limits, readDateRange);
  }
  checkDepth(queries, limits.maxDepth);
}

/** Each query's limit, then the members and order entries over all of them. */
function checkLimitsAndMembers(queries: Query[], limits: QuerySizeLimits): void {
  let members = 0;
  let orders = 0;
  for (const [i, query] of queries.entries()) {
    // Cube says only "The query limit has been exceeded."
    const limit = typeof query.limit === 'string' && /^\d+$/.test(query.limit) ? Number(query.limit) : query.limit;
    if (typeof limit === 'number' && limit > limits.maxLimit) {
      refuse(
        'limit',
        `${queries.length > 1 ? `query[${i}]: ` : ''}"limit" is ${limit}; the maximum is ${limits.maxLimit} (QUERY_MAX_LIMIT). Ask for at most that many rows and page on with "offset".`,
      );
    }
    for (const list of MEMBER_LISTS) {
      const value = query[list];
      if (Array.isArray(value)) members += value.length;
    }
    const { order } = query;
    if (Array.isArray(order)) orders += order.length;
    else if (typeof order === 'object' && order !== null) orders += Object.keys(order).length;
  }
  if (members > limits.maxMembers) {
    refuse(
      'members',
      `The query names ${members} members (measures, dimensions, segments and time dimensions); the maximum is ${limits.maxMembers} (QUERY_MAX_MEMBERS).`,
    );
  }
  if (orders > limits.maxMembers) {
    refuse('order', `The query has ${orders} order entries; the maximum is ${limits.maxMembers}, as for members (QUERY_MAX_MEMBERS).`);
  }
}

/** Filter conditions, values and bucket counts so far, over every query of the request. */
interface Counted {
  filters: number;
  values: number;
  buckets: number;
}

/** One query's filter conditions and values, counted on from the queries before it; `ranges` repeat its values. */
function checkFilters(query: Query, ranges: number, counted: Counted, limits: QuerySizeLimits): void {
  const pending: unknown[] = Array.isArray(query.filters) ? [...query.filters] : [];
  while (pending.length > 0) {
    const filter = pending.pop();
    if (++counted.filters > limits.maxFilters) {
      refuse(
        'filters',
        `The query has more than ${limits.maxFilters} filter conditions, counting those inside "and" and "or"; that is the maximum (QUERY_MAX_FILTERS).`,
      );
    }
    if (typeof filter !== 'object' || filter === null) continue;
    const { and, or, values: list } = filter as Record<string, unknown>;
    for (const nested of [and, or]) if (Array.isArray(nested)) for (const item of nested) pending.push(item);
    if (!Array.isArray(list)) continue;
    counted.values += list.length * ranges;
    if (counted.values > limits.maxFilterValues) {
      refuse(
        'filterValues',
        `The filters hold more than ${limits.maxFilterValues} values (a compareDateRange repeats its query's once per range); that is the maximum (QUERY_MAX_FILTER_VALUES).`,
      );
    }
    for (const value of list) checkLength(value, 'A filter value', limits);
  }
}

/** One query's date-range lengths and time buckets, counted on from the queries before it. */
function checkBuckets(query: Query, ranges: number, counted: Counted, limits: QuerySizeLimits, readDateRange: DateRangeReader): void {
  const timeDimensions = Array.isArray(query.timeDimensions) ? query.timeDimensions : [];
  for (const td of timeDimensions) {
    if (typeof td !== 'object' || td === null) continue;
    const { granularity, dateRange, compareDateRange } = td as Record<string, unknown>;
    const dateRanges = Array.isArray(compareDateRange) ? compareDateRange : [dateRange];
    for (const range of dateRanges) {
      for (const text of Array.isArray(range) ? range : [range]) checkLength(text, 'A date range', limits);
    }
    const bucketMs = typeof granularity === 'string' ? GRANULARITY_MS[granularity] : undefined;
    if (bucketMs === undefined) continue;
    // Every range of the query's compareDateRange runs this time dimension again.
    const repeats = Array.isArray(compareDateRange) ? 1 : ranges;
    for (const range of dateRanges) {
      const span = dateRangeSpanMs(range, query.timezone, readDateRange);
      if (span === undefined) continue;
      // The buckets at both ends may be partial.
      counted.buckets += (Math.ceil(span / bucketMs) + 1) * repeats;
      if (counted.buckets > limits.maxTimeBuckets) {
        refuse(
          'buckets',
          `The time dimensions' granularities over their date ranges make more than ${limits.maxTimeBuckets} time buckets; that is the maximum (QUERY_MAX_TIME_BUCKETS). Use a coarser granularity or a shorter date range.`,
        );
      }
    }
  }
}

/** How many queries Cube makes of one: one per range of its compareDateRange. */
function rangeCount(query: Query): number {
  let ranges = 0;
  if (Array.isArray(query.timeDimensions)) {
    for (const td of query.timeDimensions) {
      const compare = typeof td === 'object' && td !== null ? (td as Record<string, unknown>).compareDateRange : undefined;
      if (Array.isArray(compare)) ranges += compare.length;
    }
  }
  return Math.max(ranges, 1);
}

function checkLength(value: unknown, what: string, limits: QuerySizeLimits): void {
  if (typeof value === 'string' && value.length > limits.maxValueLength) {
    refuse('valueLength', `${what} is ${value.length} characters long; the maximum is ${limits.maxValueLength} (QUERY_MAX_VALUE_LENGTH).`);
  }
}

/**
 * Nesting deeper than any query needs (and/or filters included) is refused
 * here: everything after this (Cube's validation, cache keys, JSON.stringify)
 * walks the query recursively, and a body nested thousands deep would
 * overflow the stack there.
 */
function checkDepth(queries: Query[], maxDepth: number): void {
  const pending: [unknown, number][] = queries.map((query) => [query, 1]);
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) refuse('depth', `The query nests objects and arrays more than ${maxDepth} deep; that is the maximum (QUERY_MAX_DEPTH).`);
    for (const item of Object.values(value)) pending.push([item, depth + 1]);
  }
}
