import { refuse } from './rules';

/**
 * Cube's validator takes a `limit` or `offset` written as a string ("2"),
 * because Joi converts it to check it, but Cube 0.33 then reads only numbers:
 * the string limit is replaced by the default (and escapes the maximum) and
 * the string offset ends up in the SQL as text. A whole number written as
 * digits is read as that number, as the validator already promises; any other
 * string ("2.0", "1e3", " 2") is refused rather than guessed at.
 */
export function withNumericPaging(query: Record<string, unknown>): Record<string, unknown> {
  let read = query;
  for (const key of ['limit', 'offset'] as const) {
    const value = query[key];
    if (typeof value !== 'string') continue;
    if (!/^\d{1,15}$/.test(value)) {
      refuse('paging', `"${key}" must be a whole number, e.g. 100; got ${JSON.stringify(value.slice(0, 50))}.`);
    }
    read = { ...read, [key]: Number(value) };
  }
  return read;
}

/** `limit` and `offset` sent as digit strings are read as numbers, in every query of an array too. */
export function pagingOf<Q extends Record<string, unknown> | Record<string, unknown>[]>(query: Q): Q {
  return (Array.isArray(query) ? query.map(withNumericPaging) : withNumericPaging(query)) as Q;
}
