import type { Metrics, QueryOutcome } from '../metrics/registry';
import { ServiceError } from '../errors';
import type { Query } from './service';

/** The query-duration metric's outcome label of a load that failed: an admission refusal is a client error too. */
export function outcomeOf(err: unknown): QueryOutcome {
  if (!(err instanceof ServiceError) || err.code === 'internal') return 'failure';
  return err.code === 'query_timeout' ? 'timeout' : 'client_error';
}

/**
 * The cubes a query's members belong to, as metric label values: only names
 * of the compiled model's cubes, so a client cannot mint new label values;
 * anything else (a query naming no known cube) is "unknown".
 */
export function cubesOf(queries: Query[], known: ReadonlySet<string>): Set<string> {
  const cubes = new Set<string>();
  // Iterative: a client may nest arrays thousands deep before validation refuses them.
  const pending: unknown[] = queries.flatMap((query) => [query.measures, query.dimensions, query.segments, query.timeDimensions, query.filters]);
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      const cube = value.split('.')[0];
      if (known.has(cube)) cubes.add(cube);
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      const { member, dimension, and, or } = value as Record<string, unknown>;
      pending.push(member, dimension, and, or);
    }
  }
  if (cubes.size === 0) cubes.add('unknown');
  return cubes;
}

/**
 * Runs loads, observing each one's duration and outcome under each cube its
 * members name; `cubes` are the serving models' cubes, read once the load
 * ends (its checks may have read them first).
 */
export function loadTimer(duration: Metrics['queryDuration'], cubes: () => ReadonlySet<string>) {
  return async <T>(queries: Query[], run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let outcome: QueryOutcome = 'failure';
    try {
      const result = await run();
      outcome = 'ok';
      return result;
    } catch (err) {
      outcome = outcomeOf(err);
      throw err;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      for (const cube of cubesOf(queries, cubes())) duration.observe({ cube, outcome }, seconds);
    }
  };
}
