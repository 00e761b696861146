import type { Metrics, QueryOutcome } from '../metrics/registry';
import { ServiceError } from '../errors';
import type { Query } from '../query/request';

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
export function cubesOf(queries: readonly Query[], known: ReadonlySet<string>): Set<string> {
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

/** One load's timing in the query metrics. */
export interface QueryTimer {
  /** The load of these queries starts: admission's model stage takes them. */
  start(queries: readonly Query[]): void;
  /** Cube answered the load. */
  answered(): void;
  /** The load failed with `err`. */
  failed(err: unknown): void;
}

/**
 * Timers of loads, each observing its load's duration and outcome under
 * each cube its members name, from admission's model stage to Cube's answer
 * (a load refused before that stage is not a query the metrics count);
 * `cubes` are the serving models' cubes, read once the load ends (its
 * admission may have read them first).
 */
export function queryTimers(duration: Metrics['queryDuration'], cubes: () => ReadonlySet<string>): () => QueryTimer {
  return () => {
    let started: { at: number; queries: readonly Query[] } | undefined;
    const observe = (outcome: QueryOutcome) => {
      if (started === undefined) return;
      const seconds = (performance.now() - started.at) / 1000;
      for (const cube of cubesOf(started.queries, cubes())) duration.observe({ cube, outcome }, seconds);
      started = undefined;
    };
    return {
      start: (queries) => (started = { at: performance.now(), queries }),
      answered: () => observe('ok'),
      failed: (err) => observe(outcomeOf(err)),
    };
  };
}
