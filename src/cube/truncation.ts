import { ServiceError } from '../errors';

/**
 * Whether a load answer holds every row its query matches, or its limit left
 * some out. Cube answers a query cut at its limit exactly like a complete
 * one, so each query asks the warehouse for one row more than its limit (its
 * own, or QUERY_DEFAULT_LIMIT): when that row comes back, rows were left out,
 * and it is dropped before anyone sees the answer.
 */

type Loose = Record<string, any>;

export interface RowLimits {
  /** Largest limit a client may ask for (QUERY_MAX_LIMIT); Cube itself is told one more. */
  maxLimit: number;
  /** The limit of a query that gives none (QUERY_DEFAULT_LIMIT). */
  defaultLimit: number;
}

/**
 * The query as sent to Cube: its limit, or the default, plus one. Admission
 * refused a limit over QUERY_MAX_LIMIT before (query/size.ts); a limit that
 * is not a whole positive number is left for Cube's validator to refuse in
 * its own words.
 */
export function withOneMoreRow(query: Loose, { defaultLimit }: RowLimits): Loose {
  const { limit } = query;
  if (limit === undefined || limit === null) return { ...query, limit: defaultLimit + 1 };
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) return query;
  return { ...query, limit: limit + 1 };
}

export function queriesWithOneMoreRow<Q extends Loose | Loose[]>(query: Q, limits: RowLimits): Q {
  return (Array.isArray(query) ? query.map((q) => withOneMoreRow(q, limits)) : withOneMoreRow(query, limits)) as Q;
}

/**
 * Cube's load answer (one result, or the multi shape's `results`) with the
 * extra row of each result dropped, and the limits it echoes put back to the
 * ones the client asked for. Returns whether each result was cut.
 */
export function dropExtraRows(body: Loose, { maxResultRows }: { maxResultRows?: number } = {}): { body: Loose; truncated: boolean[] } {
  const drop = (result: Loose) => withinResultRows(dropExtraRow(result), maxResultRows);
  if (Array.isArray(body.results)) {
    const results = body.results.map(drop);
    const { pivotQuery } = body;
    return {
      body: { ...body, results: results.map((r: { result: Loose }) => r.result), ...(pivotQuery ? { pivotQuery: withAskedLimit(pivotQuery) } : {}) },
      truncated: results.map((r: { truncated: boolean }) => r.truncated),
    };
  }
  const { result, truncated } = drop(body);
  return { body: result, truncated: [truncated] };
}

/**
 * The warehouse lets a statement return QUERY_MAX_RESULT_ROWS + 1 rows
 * (service.ts), the extra row being ours: more than the maximum once it is
 * dropped is the answer ClickHouse itself would have refused. Not an admission
 * rule: only the answer shows it, so it fails like the engine's own refusal.
 */
function withinResultRows<T extends { result: Loose }>(dropped: T, maxResultRows: number | undefined): T {
  const { data } = dropped.result;
  if (maxResultRows !== undefined && maxResultRows > 0 && Array.isArray(data) && data.length > maxResultRows) {
    throw new ServiceError('result_too_large', 'The answer would have more rows than the service returns; add filters or a smaller limit.');
  }
  return dropped;
}

function dropExtraRow(result: Loose): { result: Loose; truncated: boolean } {
  const query = result.query as Loose | undefined;
  const sent = query?.limit;
  if (typeof sent !== 'number' || !Array.isArray(result.data)) return { result, truncated: false };
  const asked = sent - 1;
  const truncated = result.data.length > asked;
  return { result: { ...result, query: withAskedLimit(query!), data: truncated ? result.data.slice(0, asked) : result.data }, truncated };
}

/** Cube echoes the limit it ran with, in `limit` and (on its own route) `rowLimit`. */
function withAskedLimit(query: Loose): Loose {
  const echoed = { ...query };
  for (const key of ['limit', 'rowLimit']) if (typeof echoed[key] === 'number') echoed[key] -= 1;
  return echoed;
}

/**
 * Cube's own answer carries the flag as a field too, `truncated`: on each
 * result of the multi shape, and at its top (any result cut). Cube's clients
 * keep the fields they know and ignore the rest (test/integration/cubejs-api/client.suite.ts).
 */
export function withTruncatedField(body: Loose, truncated: boolean[]): Loose {
  if (Array.isArray(body.results)) {
    return { ...body, results: body.results.map((r: Loose, i: number) => ({ ...r, truncated: truncated[i] ?? false })), truncated: truncated.some(Boolean) };
  }
  return { ...body, truncated: truncated[0] ?? false };
}
