import type { DateRangeReader } from './date-range';
import { checkQueryDates } from './dates';
import { guardBlending, guardQuery } from './guard';
import { checkMembers, type ModelMembers } from './members';
import type { Query } from './request';
import { refuse } from './rules';
import { checkUngrouped } from './ungrouped';

/**
 * The model stage of admission (query/rules.ts): one query, or an array of
 * them to blend, against the serving models' members, checked the same way
 * on every route and API. The request and size stages ran before (the
 * routes), so the walks here are bounded.
 */
export function admitQueries(query: Query | Query[], model: ModelMembers, readDateRange: DateRangeReader): void {
  for (const one of Array.isArray(query) ? query : [query]) {
    checkMembers(one, model);
    checkTimezone(one);
    guardQuery(one, model);
    checkQueryDates(one, readDateRange);
    checkUngrouped(one, model.keyed ?? new Set());
  }
  if (Array.isArray(query)) guardBlending(query);
}

const ADD_MULTI = 'add "queryType": "multi" next to "query" (on GET, the URL parameter queryType=multi)';

/** Queries whose answer is one result per query or per range, which only Cube's multi shape holds. */
export function refuseMultiOnly(query: Query | Query[]): void {
  if (Array.isArray(query)) refuse('multi', `An array of queries answers one result per query: ${ADD_MULTI}.`);
  const i = compareDateRangeAt(query);
  if (i >= 0) refuse('multi', `timeDimensions[${i}].compareDateRange answers one result per range: ${ADD_MULTI}.`);
}

/** An export is one file of one query's rows; a compareDateRange is one result per range. */
export function refuseInExport(query: Query): void {
  const i = compareDateRangeAt(query);
  if (i >= 0)
    refuse(
      'exportOne',
      `timeDimensions[${i}].compareDateRange answers one result per range, and an export writes one: export each range as a "dateRange" of its own.`,
    );
}

function compareDateRangeAt({ timeDimensions }: Query): number {
  if (!Array.isArray(timeDimensions)) return -1;
  return timeDimensions.findIndex((td) => typeof td === 'object' && td !== null && 'compareDateRange' in td);
}

/**
 * Cube 0.33 takes any string as `timezone` and leaves it to the database,
 * which fails the query as if it were our fault; a name the IANA database
 * does not know is the client's mistake.
 */
export function checkTimezone(query: Query): void {
  const { timezone } = query;
  if (typeof timezone !== 'string') return;
  let known: string;
  try {
    known = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    refuse('timezone', `Unknown time zone ${JSON.stringify(timezone)}: expected an IANA name such as "America/New_York".`);
  }
  // Intl ignores case; ClickHouse does not ("utc" fails the query).
  if (known !== timezone && known.toLowerCase() === timezone.toLowerCase()) {
    refuse('timezone', `Unknown time zone ${JSON.stringify(timezone)}: time zone names are case-sensitive; did you mean ${JSON.stringify(known)}?`);
  }
}
