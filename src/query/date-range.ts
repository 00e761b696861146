/**
 * What a date-range phrase ("last 7 days") means now in a time zone, as
 * Cube 0.33 reads it: its bounds; throws for a phrase Cube refuses. Cube's
 * own parser (src/cube/engine/date-parser.ts), handed to admission by the
 * Cube service, so that admission agrees with Cube and imports none of it.
 */
export type DateRangeReader = (phrase: string, timezone: string) => readonly string[];

const DAY_MS = 86_400_000;

/**
 * The shortest length of each granularity's bucket, so that a count of
 * buckets made with it is never below the number Cube would make.
 */
export const GRANULARITY_MS: Readonly<Record<string, number>> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: DAY_MS,
  week: 7 * DAY_MS,
  month: 28 * DAY_MS,
  quarter: 89 * DAY_MS,
  year: 365 * DAY_MS,
};

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * How long a time dimension's `dateRange` (or one range of a
 * compareDateRange) is, read as Cube 0.33 reads it: a phrase ("last 3
 * years", "from 7 days ago to now") through Cube's own parser in the query's
 * time zone, one date as that whole day, a date-only end as the end of its
 * day. Undefined for anything Cube would refuse itself.
 */
export function dateRangeSpanMs(dateRange: unknown, timezone: unknown, readDateRange: DateRangeReader): number | undefined {
  let bounds: readonly unknown[];
  if (typeof dateRange === 'string') {
    try {
      bounds = readDateRange(dateRange, knownTimezone(timezone));
    } catch {
      return undefined;
    }
  } else if (Array.isArray(dateRange) && (dateRange.length === 1 || dateRange.length === 2)) {
    bounds = dateRange;
  } else {
    return undefined;
  }
  const [first, last = first] = bounds;
  if (typeof first !== 'string' || typeof last !== 'string') return undefined;
  const from = parseLocal(first);
  const to = parseLocal(last) + (DATE_ONLY.test(last) ? DAY_MS : 0);
  return Number.isFinite(from) && Number.isFinite(to) && to >= from ? to - from : undefined;
}

/** Local timestamps as if UTC: the span is what matters, not the zone. */
function parseLocal(text: string): number {
  return Date.parse(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) || DATE_ONLY.test(text) ? text : `${text}Z`);
}

function knownTimezone(timezone: unknown): string {
  if (typeof timezone !== 'string') return 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone;
  } catch {
    return 'UTC';
  }
}
