import type { Config } from '../config';
import type { Query } from '../cube/service';
import { ApiError } from './errors';

const MEMBER_LISTS = ['measures', 'dimensions', 'segments', 'timeDimensions'] as const;

/**
 * Caps the work one request can ask for before Cube sees it: members
 * (measures, dimensions, segments, time dimensions) and filter conditions,
 * counted over every query of a multi request. Nested and/or filters count
 * every node, so deep nesting is refused here rather than recursed into.
 */
export function checkQuerySize(queries: Query[], limits: Pick<Config['query'], 'maxMembers' | 'maxFilters'>): void {
  let members = 0;
  let filters = 0;
  for (const query of queries) {
    for (const list of MEMBER_LISTS) {
      const value = query[list];
      if (Array.isArray(value)) members += value.length;
    }
    // Iterative, so a body nested thousands deep cannot exhaust the stack.
    const pending: unknown[] = Array.isArray(query.filters) ? [...query.filters] : [];
    while (pending.length > 0 && filters <= limits.maxFilters) {
      const filter = pending.pop();
      filters++;
      if (typeof filter === 'object' && filter !== null) {
        for (const key of ['and', 'or'] as const) {
          const nested = (filter as Record<string, unknown>)[key];
          if (Array.isArray(nested)) for (const item of nested) pending.push(item);
        }
      }
    }
  }
  if (members > limits.maxMembers) {
    throw new ApiError('query_too_large', `The query names ${members} members (measures, dimensions, segments and time dimensions); the maximum is ${limits.maxMembers}.`);
  }
  if (filters > limits.maxFilters) {
    throw new ApiError('query_too_large', `The query has more than ${limits.maxFilters} filter conditions, counting those inside "and" and "or"; that is the maximum.`);
  }
}
