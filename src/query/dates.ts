import type { DateRangeReader } from './date-range';
import { DATE_PHRASE_FORMS, datePhraseSuggestions, isDatePhrase, isDateValue } from './date-phrases';
import { eachFilter } from './filters';
import { refuse } from './rules';

/**
 * Dates a query gives: the values of the date filters and the ranges of
 * time dimensions. Cube 0.33 checks neither. A filter value that is not a
 * date ("2026-13-01") becomes a NULL bound in the SQL, so the query answers
 * 0 rows with a 200; a range becomes "Invalid date" and a 400 naming neither
 * the member nor the value; a phrase goes through chrono, which reads
 * "2026-13-01" as 13 January. Each is refused here, naming both.
 */

/** How many values each date operator reads (Cube's BaseFilter; onTheDate and the ranges take one date as that day, see the dialect). */
export const DATE_OPERATOR_VALUES: Readonly<Record<string, readonly [number, number]>> = {
  inDateRange: [1, 2],
  notInDateRange: [1, 2],
  onTheDate: [1, 2],
  beforeDate: [1, 1],
  beforeOrOnDate: [1, 1],
  afterDate: [1, 1],
  afterOrOnDate: [1, 1],
};

const DATE_FORMS = 'a date (YYYY-MM-DD) or a local time (YYYY-MM-DDTHH:mm:ss.SSS)';

/** Whether `text` is an accepted phrase (date-phrases.ts) and the bounds Cube reads it as exist. */
function isRangePhrase(text: string, timezone: string, readDateRange: DateRangeReader): boolean {
  if (!isDatePhrase(text)) return false;
  try {
    return readDateRange(text, timezone).every((bound) => isDateValue(bound));
  } catch {
    return false;
  }
}

const shown = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
};

/** One date filter's values: how many its operator reads, each a date. */
export function checkDateFilter(where: string, member: string, operator: string, values: unknown): void {
  const counts = DATE_OPERATOR_VALUES[operator];
  if (counts === undefined) return;
  const [fewest, most] = counts;
  const list = Array.isArray(values) ? values : [];
  if (list.length < fewest || list.length > most) {
    const wanted = fewest === most ? `${fewest} date` : `${fewest} or ${most} dates`;
    refuse('dateFilters', `${where}: the ${operator} filter on ${member} takes ${wanted}; got ${list.length}.`);
  }
  for (const value of list) {
    if (!isDateValue(value)) refuse('dateFilters', `${where}: the ${operator} filter on ${member} needs ${DATE_FORMS}; ${shown(value)} is not one.`);
  }
}

/** Operators that compare a member with its values as written; on a time dimension the values are instants (the dialect reads them in the query's time zone). */
const VALUE_OPERATORS = new Set(['equals', 'notEquals', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte']);

/**
 * The values of a value operator on a time dimension: dates or local times,
 * null aside (equals and notEquals read null as `IS NULL`); anything else
 * reached ClickHouse's parser and failed the query, or was read as some
 * other time.
 */
export function checkTimeValues(where: string, member: string, operator: string, values: unknown): void {
  if (!VALUE_OPERATORS.has(operator) || !Array.isArray(values)) return;
  for (const value of values) {
    if (value !== null && !isDateValue(value))
      refuse('dateFilters', `${where}: the ${operator} filter on ${member} compares times; ${shown(value)} is not ${DATE_FORMS}.`);
  }
}

const RANGE_FORMS = `A date range is one or two dates or local times, ["2026-11-01", "2026-11-30"], or a phrase such as "last 7 days" or "from 2026-11-01 to now": ${DATE_PHRASE_FORMS} (docs/reference/query-language.md, "Date ranges").`;

/** ` Did you mean …?` for a refused phrase, when one is close; empty otherwise. */
function meant(phrase: string): string {
  const suggestions = datePhraseSuggestions(phrase);
  return suggestions.length === 0 ? '' : ` Did you mean ${suggestions.join(' or ')}?`;
}

/** One time dimension's `dateRange` or one range of its `compareDateRange`: a phrase, or one or two dates. */
export function checkDateRange(where: string, member: string, range: unknown, timezone: unknown, readDateRange: DateRangeReader): void {
  const zone = typeof timezone === 'string' ? timezone : 'UTC';
  if (typeof range === 'string') {
    if (!isRangePhrase(range, zone, readDateRange))
      refuse('dateRanges', `${where}: ${shown(range)} is not a date range for ${member}.${meant(range)} ${RANGE_FORMS}`);
    return;
  }
  if (!Array.isArray(range) || range.length < 1 || range.length > 2) {
    refuse('dateRanges', `${where}: ${shown(range)} is not a date range for ${member}. ${RANGE_FORMS}`);
  }
  for (const value of range) {
    if (!isDateValue(value)) refuse('dateRanges', `${where}: ${shown(value)} is not a date for ${member}; expected ${DATE_FORMS}.`);
  }
}

/** Every date of a query: its date filters at any depth and its time dimensions' ranges. */
export function checkQueryDates(query: Record<string, unknown>, readDateRange: DateRangeReader): void {
  const { timeDimensions, filters, timezone } = query;
  if (Array.isArray(timeDimensions)) {
    timeDimensions.forEach((td, i) => {
      if (typeof td !== 'object' || td === null) return;
      const { dimension, dateRange, compareDateRange } = td as Record<string, unknown>;
      const member = typeof dimension === 'string' ? dimension : `timeDimensions[${i}]`;
      if (dateRange !== undefined) checkDateRange(`timeDimensions[${i}].dateRange`, member, dateRange, timezone, readDateRange);
      if (Array.isArray(compareDateRange)) {
        compareDateRange.forEach((range, j) => checkDateRange(`timeDimensions[${i}].compareDateRange[${j}]`, member, range, timezone, readDateRange));
      }
    });
  }
  eachFilter(filters, ({ member, dimension, operator, values }, where) => {
    const name = member ?? dimension;
    if (typeof name === 'string' && typeof operator === 'string') checkDateFilter(where, name, operator, values);
  });
}
