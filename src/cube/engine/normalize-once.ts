import * as cubeDates from '@cubejs-backend/api-gateway/dist/src/dateParser';
import * as cubeQuery from '@cubejs-backend/api-gateway/dist/src/query';
import { localTime, resolveDateRange } from './date-parser';

type Loose = Record<string, unknown>;
type Normalize = (query: Loose, persistent: boolean) => Loose;

/** Each query Cube's normalizeQuery returned, as JSON, and how it was normalized. */
const normalized = new WeakMap<object, { persistent: boolean; json: string }>();

let installed = false;

/**
 * Cube's gateway normalizes every query twice, before and after its
 * `queryRewrite` (`getNormalizedQueries`): joi validation of the whole query
 * each time, and in the first a parse of each relative date range by chrono
 * and moment (1.8 ms of an uncached load, docs/benchmarks.md). This service
 * gives Cube no `queryRewrite`, so the second call is handed the first's
 * own answer, and Cube's normalization of its own answer gives that answer
 * back (test/unit/cube/normalize-once.test.ts proves it over generated
 * queries of every operator and shape); the one difference, a time
 * dimension taken from a `member.granularity` dimension, which gains a
 * `dateRange: undefined`, is made here as Cube makes it. An answer changed
 * since (its JSON differs) is normalized again.
 *
 * The first call reads relative date ranges ("last 7 days") with
 * resolveDateRange: Cube's own parser, its answers kept for the second of
 * the clock they were read in (date-parser.ts), which admission has
 * usually read the same phrase in already.
 *
 * A query of a shape normalized before (the same query but for its
 * filters' string values, shapeOf) is not validated and parsed again: its
 * answer is made from that query's answer with its own values, as Cube
 * would make it (test/unit/cube/normalize-once.test.ts compares the two
 * over generated queries, other values and a clock moved on). An uncached
 * dashboard query differs from the last one in its filter values only.
 *
 * Installed on Cube's query module itself, whose export the gateway reads at
 * each call (an ES module compiled to CommonJS), once per process.
 */
export function normalizeEachQueryOnce(): void {
  if (installed) return;
  installed = true;
  const queries = cubeQuery as unknown as { normalizeQuery: Normalize };
  const dates = cubeDates as { dateParser: (range: unknown, timezone: unknown) => readonly string[] };
  const normalize = queries.normalizeQuery;
  const parse = dates.dateParser;
  const parseOnce = (range: unknown, timezone: unknown) =>
    typeof range === 'string' && typeof timezone === 'string' ? resolveDateRange(range, timezone) : parse(range, timezone);
  queries.normalizeQuery = (sent, persistent) => {
    const query = withLocalBounds(sent);
    const earlier = typeof query === 'object' && query !== null ? normalized.get(query) : undefined;
    if (earlier !== undefined && earlier.persistent === persistent && earlier.json === JSON.stringify(query)) return againOf(query);
    const shape = persistent ? shapeOf(query) : undefined;
    const seen = shape === undefined ? undefined : shapes.get(shape);
    let answer: Loose;
    if (seen !== undefined) answer = rebound(seen, query);
    else {
      dates.dateParser = parseOnce;
      try {
        answer = normalize(query, persistent);
      } finally {
        dates.dateParser = parse;
      }
      if (shape !== undefined) {
        if (shapes.size >= SHAPES_KEPT) shapes.clear();
        // A copy: callers may change the answer they get.
        shapes.set(shape, copied(answer));
      }
    }
    normalized.set(answer, { persistent, json: JSON.stringify(answer) });
    return answer;
  };
}

/** A date range bound written with its offset: `…T10:00:00Z` (what a JavaScript client's `toISOString()` sends), `…T10:00:00+02:00`. */
const ZONED_BOUND = /^\d{4}-\d{2}-\d{2}[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})$/;
const isZoned = (bound: unknown): bound is string => typeof bound === 'string' && ZONED_BOUND.test(bound);

/**
 * Cube's normalizeQuery writes each bound of a `dateRange` with
 * `moment.utc(bound)`, so a bound with an offset became its UTC clock time,
 * then read as a local time of the query's time zone: `["…T10:00:00Z",
 * "…T12:00:00Z"]` in New York counted 10:00 to 12:00 New York time. Such a
 * bound is handed to Cube as the local time of that instant in the query's
 * zone (`compareDateRange` ranges reach this as `dateRange`s). Filters'
 * values with an offset were read right, and still are.
 */
export function withLocalBounds(query: Loose): Loose {
  const { timeDimensions, timezone } = query;
  const zoned = (td: unknown) => Array.isArray((td as Loose | null)?.dateRange) && ((td as Loose).dateRange as unknown[]).some(isZoned);
  if (!Array.isArray(timeDimensions) || !timeDimensions.some(zoned)) return query;
  const zone = typeof timezone === 'string' ? timezone : 'UTC';
  // An unknown zone is admission's to refuse (query/admit.ts); Cube gets the query as sent.
  if (!isKnownZone(zone)) return query;
  return {
    ...query,
    timeDimensions: timeDimensions.map((td) =>
      zoned(td) ? { ...td, dateRange: ((td as Loose).dateRange as unknown[]).map((bound) => (isZoned(bound) ? localTime(bound, zone) : bound)) } : td,
    ),
  };
}

function isKnownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Query shapes whose normalization is kept (all of them dropped when full): a few per dashboard, a new set each second for relative ranges. */
const SHAPES_KEPT = 1000;

/** Cube's answer for the first query of each shape, by shape (shapeOf). */
const shapes = new Map<string, Loose>();

/** Marks the shape's own entries; a string of the query's starting with it gets a second one, so the two never meet. */
const MARK = '\u0000';

/**
 * A query's shape: its JSON with each filter's string values replaced by
 * their count, with the clock's second when a date range is a phrase;
 * undefined for a query that is not plain data, which is normalized in
 * full. Two queries of one shape are normalized alike but for those
 * values: Cube's validation takes any string as a filter value (its joi
 * schema checks the type only), its normalization passes strings through
 * as they are, and the query's limit is given (`persistent`, which this
 * service always passes, row-limits.ts), so the environment's limits are
 * not read. A phrase resolves alike within one second (date-parser.ts);
 * dates written out resolve alike at any time.
 */
function shapeOf(query: unknown): string | undefined {
  if (!isPlain(query)) return undefined;
  let plain = true;
  let phrase = false;
  const json = JSON.stringify(query, function (this: unknown, name: string, value: unknown) {
    if (
      (name === 'dateRange' && typeof value === 'string') ||
      (name === 'compareDateRange' && Array.isArray(value) && value.some((range) => typeof range === 'string'))
    )
      phrase = true;
    // What JSON met before a toJSON (a Date's) made it something else: not plain data.
    const raw = (this as Loose)[name];
    if (raw !== value) {
      plain = false;
      return null;
    }
    if (value === undefined) return `${MARK}undefined`;
    if (typeof value === 'string') return value.startsWith(MARK) ? `${MARK}${value}` : value;
    if (
      typeof value === 'function' ||
      typeof value === 'symbol' ||
      typeof value === 'bigint' ||
      (typeof value === 'object' && value !== null && !Array.isArray(value) && !isPlain(value))
    ) {
      plain = false;
      return null;
    }
    if (name === 'values' && isFilter(this) && Array.isArray(value) && value.every((v) => typeof v === 'string')) return `${MARK}strings:${value.length}`;
    return value;
  });
  if (!plain) return undefined;
  return phrase ? `${Math.floor(Date.now() / 1000)}\n${json}` : json;
}

const isPlain = (value: unknown): value is Loose =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && [Object.prototype, null].includes(Object.getPrototypeOf(value));

const isFilter = (holder: unknown): boolean => isPlain(holder) && 'operator' in holder;

/**
 * Cube's normalization of `query`, from its answer for a query of the same
 * shape: the query's own fields as Cube spreads them, the fields Cube makes
 * copied from that answer, and each filter's values as Cube writes them
 * (`toString`, nulls kept).
 */
function rebound(seen: Loose, query: Loose): Loose {
  return {
    ...query,
    limit: seen.limit,
    timezone: seen.timezone,
    order: copied(seen.order),
    filters: reboundFilters(seen.filters as Loose[], (query.filters as Loose[] | undefined) ?? []),
    dimensions: copied(seen.dimensions),
    timeDimensions: copied(seen.timeDimensions),
  };
}

function reboundFilters(seen: Loose[], sent: Loose[]): Loose[] {
  return seen.map((filter, i) => {
    const own = sent[i];
    if (own.or) return { ...filter, or: reboundFilters(filter.or as Loose[], own.or as Loose[]) };
    if (own.and) return { ...filter, and: reboundFilters(filter.and as Loose[], own.and as Loose[]) };
    if (!('values' in filter)) return { ...filter };
    return { ...filter, values: (own.values as unknown[]).map((v) => (v != null ? String(v) : v)) };
  });
}

/** What Cube's normalizeQuery gives for its own answer: a copy, each time dimension with a `dateRange` key. */
function againOf(query: Loose): Loose {
  const timeDimensions = query.timeDimensions as Loose[];
  return { ...query, timeDimensions: timeDimensions.map((td) => ('dateRange' in td ? td : { ...td, dateRange: undefined })) };
}

/** A copy of plain data (arrays, plain objects, primitives), keys in order, `undefined` fields kept. */
function copied<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copied) as T;
  if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, copied(field)])) as T;
  return value;
}
