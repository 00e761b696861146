import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type QueryOutcome = 'ok' | 'client_error' | 'timeout' | 'failure';
export type RateLimitReason = 'rate' | 'concurrency' | 'unauthenticated';

/**
 * Every metric the service exports, in a registry of its own (not
 * prom-client's global one), so that tests can run several services in one
 * process. Label values are bounded: route patterns, methods, statuses,
 * cube names from the compiled model and fixed reasons; never keys, accounts
 * or member names.
 */
export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'route' | 'method' | 'status'>;
  queryDuration: Histogram<'cube' | 'outcome'>;
  resultCacheHits: Counter;
  resultCacheMisses: Counter;
  cubeCacheBytes: Gauge;
  warehouseQueueDepth: Gauge;
  warehouseQueueWait: Histogram;
  rateLimitRefusals: Counter<'reason'>;
  authFailures: Counter<'reason'>;
  keyFileReloadFailures: Counter;
  connectionsShed: Counter<'reason'>;
}

// From a cached answer (~20 ms) to QUERY_TIMEOUT_SECONDS' default (60 s).
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const QUEUE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'analytics_http_request_duration_seconds',
      help: 'HTTP requests by route pattern, method and status, and the time to answer them.',
      labelNames: ['route', 'method', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    queryDuration: new Histogram({
      name: 'analytics_query_duration_seconds',
      help: 'Load queries by cube and outcome (ok, client_error, timeout, failure); a query over several cubes counts under each.',
      labelNames: ['cube', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    resultCacheHits: new Counter({
      name: 'analytics_result_cache_hits_total',
      help: 'Queries Cube answered from its result cache.',
      registers,
    }),
    resultCacheMisses: new Counter({
      name: 'analytics_result_cache_misses_total',
      help: 'Queries Cube sent to the warehouse because its result cache had no fresh answer.',
      registers,
    }),
    cubeCacheBytes: new Gauge({
      name: 'analytics_cube_cache_bytes',
      help: "Bytes (of JSON) of the results and refresh keys Cube's own cache keeps; bounded by CUBE_CACHE_MB.",
      registers,
    }),
    warehouseQueueDepth: new Gauge({
      name: 'analytics_warehouse_queue_depth',
      help: 'chDB statements waiting for the one before them to finish.',
      registers,
    }),
    warehouseQueueWait: new Histogram({
      name: 'analytics_warehouse_queue_wait_seconds',
      help: 'Time a chDB statement waited in the statement queue before it ran.',
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    rateLimitRefusals: new Counter({
      name: 'analytics_rate_limit_refusals_total',
      help: 'Requests answered 429, by reason (rate, concurrency, unauthenticated).',
      labelNames: ['reason'],
      registers,
    }),
    authFailures: new Counter({
      name: 'analytics_auth_failures_total',
      help: 'Requests without a valid API key, by reason (missing, invalid).',
      labelNames: ['reason'],
      registers,
    }),
    keyFileReloadFailures: new Counter({
      name: 'analytics_key_file_reload_failures_total',
      help: 'Changes to the key file that did not read cleanly; the previous keys stay in use.',
      registers,
    }),
    connectionsShed: new Counter({
      name: 'analytics_http_connections_closed_at_cap_total',
      help: 'Connections closed because the server held HTTP_MAX_CONNECTIONS, by reason: waiting_headers (the oldest without complete request headers, closed for a newcomer), idle (the longest-idle keep-alive, likewise), refused (the newcomer, every other one having a request in progress).',
      labelNames: ['reason'],
      registers,
    }),
  };
}
