/**
 * The query shapes the benchmark sends, and how a request meets Cube's
 * result cache.
 */

export type KeyName = 'account' | 'otherAccount' | 'operator';

/**
 * `renewQuery` alone does not bypass Cube's cache in Cube 0.33: Cube
 * re-checks the refresh key (a 10 s bucket of now()) and answers from the
 * cache until that changes. `uncached` also adds a filter that excludes
 * nothing but differs per request, so every request compiles and runs its
 * own SQL in ClickHouse.
 */
export type CacheMode = 'cached' | 'renewQuery' | 'uncached';

export type Query = Record<string, unknown>;

/** A load query; `member` is a string dimension of the query's cube, for the uncached variant's filter. */
export interface Shape {
  name: string;
  member: string;
  query: Query;
}

export interface LoadScenario {
  shape: Shape;
  key: KeyName;
  cache: CacheMode;
}

const NEVER_PREFIX = 'bench-no-such-value-';

/** The uncached variant's filter value for the n-th request: no row holds it. */
export const neverValue = (n: number) => `${NEVER_PREFIX}${n}`;

/** The n of the uncached query a request carries, so an endpoint that stands in for Cube runs that request's SQL. */
export function requestNumberOf(query: Query): number {
  const values = ((query.filters as { values?: unknown[] }[] | undefined) ?? []).flatMap((filter) => filter.values ?? []);
  const never = values.find((value): value is string => typeof value === 'string' && value.startsWith(NEVER_PREFIX));
  if (never === undefined) throw new Error('not an uncached query of the bench');
  return Number(never.slice(NEVER_PREFIX.length));
}

/** The query the n-th request of a scenario sends. */
export function queryOf({ shape, cache }: Pick<LoadScenario, 'shape' | 'cache'>, n: number): Query {
  const { query, member } = shape;
  if (cache === 'cached') return query;
  if (cache === 'renewQuery') return { ...query, renewQuery: true };
  const never = { member, operator: 'notEquals', values: [neverValue(n)] };
  return { ...query, renewQuery: true, filters: [...((query.filters as unknown[]) ?? []), never] };
}

const last = (dimension: string, dateRange: string, granularity?: string) => [{ dimension, dateRange, ...(granularity ? { granularity } : {}) }];

export const SIMPLE_COUNT: Shape = {
  name: 'simple count',
  member: 'Downloads.country',
  query: { measures: ['Downloads.count'], timeDimensions: last('Downloads.ts', 'last 7 days') },
};

export const GROUPED_100: Shape = {
  name: 'group-by, 100 rows',
  member: 'Downloads.country',
  query: {
    measures: ['Downloads.count'],
    dimensions: ['Downloads.country', 'Downloads.parsed_ua'],
    timeDimensions: last('Downloads.ts', 'last 30 days'),
    order: { 'Downloads.count': 'desc' },
    limit: 100,
  },
};

export const GROUPED_1000: Shape = {
  name: 'group-by by day, 1000 rows',
  member: 'Downloads.country',
  query: {
    measures: ['Downloads.count'],
    dimensions: ['Downloads.country', 'Downloads.parsed_ua'],
    timeDimensions: last('Downloads.ts', 'last 30 days', 'day'),
    limit: 1000,
  },
};

/**
 * The largest answer a client may ask for (QUERY_MAX_LIMIT, 50,000 rows) with
 * a time dimension, whose every row Cube's result transform and the JSON
 * serialisation go through on the event loop.
 */
export const LARGEST: Shape = {
  name: 'largest answer, 50000 rows by day',
  member: 'Downloads.country',
  query: {
    measures: ['Downloads.count'],
    dimensions: ['Downloads.country', 'Downloads.city', 'Downloads.parsed_ua', 'Downloads.os_name'],
    timeDimensions: last('Downloads.ts', 'last 90 days', 'day'),
    limit: 50000,
  },
};

/**
 * The funnel's percentages, which join the raw tables every time (the
 * funnel's conversions by step over a range are in dashboards.ts). Also the
 * mixed run's slow query.
 */
export const FUNNEL_PERCENT: Shape = {
  name: 'funnel percent',
  member: 'WebEventsFromPodcastFunnel.step',
  query: { measures: ['WebEventsFromPodcastFunnel.conversionsPercent'], dimensions: ['WebEventsFromPodcastFunnel.step'] },
};

export const DASHBOARD_SHAPES: Shape[] = [
  GROUPED_1000,
  {
    name: 'raw requests',
    member: 'PodcastEvents.token',
    query: {
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.token', 'PodcastEvents.ipBlacklisted'],
      timeDimensions: last('PodcastEvents.ts', 'last 30 days'),
    },
  },
  FUNNEL_PERCENT,
  {
    name: 'links',
    member: 'LinksDashboard.utmSource',
    query: {
      measures: ['LinksDashboard.linkViewCount', 'LinksDashboard.uniqueLinkViewCount'],
      dimensions: ['LinksDashboard.utmSource'],
      timeDimensions: last('LinksDashboard.timestamp', 'last 30 days'),
    },
  },
  {
    name: 'charts',
    member: 'ChannelRanks.podcastSlug',
    query: {
      measures: ['ChannelRanks.avgRank'],
      dimensions: ['ChannelRanks.podcastSlug'],
      filters: [{ member: 'ChannelRanks.platform', operator: 'equals', values: ['apple'] }],
      limit: 100,
    },
  },
];

/** The rows of the comparison table: each shape through the API and as its SQL on the engine. */
export function loadScenarios(): LoadScenario[] {
  return [
    { shape: SIMPLE_COUNT, key: 'account', cache: 'uncached' },
    { shape: SIMPLE_COUNT, key: 'operator', cache: 'uncached' },
    { shape: SIMPLE_COUNT, key: 'account', cache: 'renewQuery' },
    // The other account, so its cold request is a real cache miss rather than a hit left by the runs above.
    { shape: SIMPLE_COUNT, key: 'otherAccount', cache: 'cached' },
    { shape: GROUPED_100, key: 'account', cache: 'uncached' },
    ...DASHBOARD_SHAPES.map((shape): LoadScenario => ({ shape, key: 'account', cache: 'uncached' })),
  ];
}
