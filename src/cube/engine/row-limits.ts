/**
 * Cube 0.33 reads its row limits from the process's environment only
 * (CUBEJS_DB_QUERY_LIMIT, CUBEJS_DB_QUERY_DEFAULT_LIMIT, read by the
 * gateway's normalizeQuery on every query), so two services in one process
 * would share whichever values were written last. Each gateway is given its
 * own instead: a query without a limit gets this service's default before
 * Cube normalizes it, one over this service's maximum is refused in Cube's
 * own words, and Cube's environment check is skipped by normalizing as its
 * `persistent` path does (the one difference: a limit is taken as given).
 */
export interface GatewayRowLimits {
  /** The largest limit Cube may be asked for (QUERY_MAX_LIMIT + 1: the extra row is truncation.ts's). */
  maxLimit: number;
  /** The limit of a query that gives none (QUERY_DEFAULT_LIMIT). */
  defaultLimit: number;
}

type Loose = Record<string, unknown>;

interface Normalizer {
  getNormalizedQueries(query: unknown, context: unknown, persistent?: boolean): Promise<unknown>;
}

export function ownRowLimits(gateway: unknown, { maxLimit, defaultLimit }: GatewayRowLimits): void {
  const target = gateway as Normalizer;
  const normalize = target.getNormalizedQueries.bind(target);
  const withLimit = (query: unknown): unknown => {
    if (typeof query !== 'object' || query === null || Array.isArray(query)) return query;
    const { limit } = query as Loose;
    if (limit === undefined || limit === null) return { ...query, limit: Math.min(defaultLimit, maxLimit) };
    // Cube's message, which src/cube/engine/errors.ts knows as the client's mistake.
    if (typeof limit === 'number' && limit > maxLimit) throw new Error('The query limit has been exceeded.');
    return query;
  };
  target.getNormalizedQueries = async (query, context, persistent = false) => {
    // The gateway's own callers pass the query as sent (an object, an array, or JSON text); only objects are read here.
    if (persistent || typeof query === 'string') return normalize(query, context, persistent);
    return normalize(Array.isArray(query) ? query.map(withLimit) : withLimit(query), context, true);
  };
}
