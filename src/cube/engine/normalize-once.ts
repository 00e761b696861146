import * as cubeDates from '@cubejs-backend/api-gateway/dist/src/dateParser';
import * as cubeQuery from '@cubejs-backend/api-gateway/dist/src/query';
import { resolveDateRange } from './date-parser';

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
  queries.normalizeQuery = (query, persistent) => {
    const earlier = typeof query === 'object' && query !== null ? normalized.get(query) : undefined;
    if (earlier !== undefined && earlier.persistent === persistent && earlier.json === JSON.stringify(query)) return againOf(query);
    dates.dateParser = parseOnce;
    let answer: Loose;
    try {
      answer = normalize(query, persistent);
    } finally {
      dates.dateParser = parse;
    }
    normalized.set(answer, { persistent, json: JSON.stringify(answer) });
    return answer;
  };
}

/** What Cube's normalizeQuery gives for its own answer: a copy, each time dimension with a `dateRange` key. */
function againOf(query: Loose): Loose {
  const timeDimensions = query.timeDimensions as Loose[];
  return { ...query, timeDimensions: timeDimensions.map((td) => ('dateRange' in td ? td : { ...td, dateRange: undefined })) };
}
