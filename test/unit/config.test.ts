import path from 'node:path';
import { ConfigError, DEMO_API_KEY, parseConfig } from '../../src/config';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('parseConfig', () => {
  it('serves the embedded demo with the demo key when nothing is configured', () => {
    const config = parseConfig({});
    expect(config.port).toBe(4000);
    expect(config.apiKeys).toEqual([DEMO_API_KEY]);
    expect(config.usingDemoKey).toBe(true);
    expect(config.warehouse.kind).toBe('chdb');
    expect(config.demo.enabled).toBe(true);
  });

  it('reads models from schema/ by default, or from CUBE_MODELS_DIR, as an absolute path', () => {
    expect(parseConfig({}).models.dir).toBe(path.resolve('schema'));
    expect(parseConfig({ CUBE_MODELS_DIR: 'their/models' }).models.dir).toBe(path.resolve('their/models'));
    expect(parseConfig({ CUBE_MODELS_DIR: '/srv/models' }).models.dir).toBe('/srv/models');
  });

  it('reads a comma-separated API_KEYS list', () => {
    const config = parseConfig({ API_KEYS: ' key-one-0123456789 ,key-two-0123456789,, ' });
    expect(config.apiKeys).toEqual(['key-one-0123456789', 'key-two-0123456789']);
    expect(config.usingDemoKey).toBe(false);
  });

  it('never falls back to the demo key in production: keys come from the key file', () => {
    const config = parseConfig({ NODE_ENV: 'production' });
    expect(config.apiKeys).toEqual([]);
    expect(config.usingDemoKey).toBe(false);
  });

  it('serves the explorer page outside production, and in production only when EXPLORER=true', () => {
    expect(parseConfig({}).explorer).toBe(true);
    expect(parseConfig({ EXPLORER: 'false' }).explorer).toBe(false);
    expect(parseConfig({ NODE_ENV: 'production' }).explorer).toBe(false);
    expect(parseConfig({ NODE_ENV: 'production', EXPLORER: 'true' }).explorer).toBe(true);
    expect(problemsOf({ EXPLORER: 'maybe' })).toEqual(['EXPLORER="maybe": expected true or false']);
  });

  it('refuses operator keys in production unless ALLOW_OPERATOR_KEYS=true, saying why', () => {
    expect(problemsOf({ NODE_ENV: 'production', API_KEYS: 'operator-key-0123456789' })).toEqual([
      expect.stringMatching(/^API_KEYS is set with NODE_ENV=production: .*ALLOW_OPERATOR_KEYS=true/),
    ]);
    const config = parseConfig({ NODE_ENV: 'production', API_KEYS: 'operator-key-0123456789', ALLOW_OPERATOR_KEYS: 'true' });
    expect(config.apiKeys).toEqual(['operator-key-0123456789']);
  });

  it('reads the key file path, limits and CORS origins', () => {
    const config = parseConfig({
      API_KEYS_FILE: '/etc/analytics/keys.json',
      RATE_LIMIT_REQUESTS: '5',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      RATE_LIMIT_CONCURRENT: '2',
      RATE_LIMIT_UNAUTHENTICATED: '7',
      TRUST_PROXY_HOPS: '1',
      QUERY_MAX_MEMORY_MB: '512',
      CORS_ORIGINS: 'https://a.example, https://b.example:8443',
    });
    expect(config.keys.file).toBe('/etc/analytics/keys.json');
    expect(config.rateLimit).toEqual({ requests: 5, windowMs: 10_000, concurrent: 2, unauthenticated: 7 });
    expect(config.http.trustProxyHops).toBe(1);
    expect(parseConfig({}).rateLimit.unauthenticated).toBe(60);
    expect(parseConfig({}).http.trustProxyHops).toBe(0);
    expect(config.query.maxMemoryBytes).toBe(512 * 1024 * 1024);
    expect(config.http.corsOrigins).toEqual(['https://a.example', 'https://b.example:8443']);
    expect(parseConfig({}).http.corsOrigins).toEqual([]);
  });

  it('reads the amplification limits and the event-loop threshold, refusing zero', () => {
    const config = parseConfig({
      QUERY_MAX_QUERIES: '5',
      QUERY_MAX_FILTER_VALUES: '50',
      QUERY_MAX_VALUE_LENGTH: '200',
      QUERY_MAX_TIME_BUCKETS: '1000',
      EVENT_LOOP_WARN_MS: '100',
    });
    expect(config.query).toMatchObject({ maxQueries: 5, maxFilterValues: 50, maxValueLength: 200, maxTimeBuckets: 1000 });
    expect(config.eventLoopWarnMs).toBe(100);
    expect(parseConfig({}).eventLoopWarnMs).toBe(500);
    const maxima = { QUERY_MAX_QUERIES: 1000, QUERY_MAX_FILTER_VALUES: 100_000, QUERY_MAX_VALUE_LENGTH: 1_000_000, QUERY_MAX_TIME_BUCKETS: 100_000_000 };
    for (const [name, max] of Object.entries(maxima)) {
      expect(problemsOf({ [name]: '0' })).toEqual([`${name}="0": expected an integer from 1 to ${max}`]);
    }
  });

  it('keeps answers in front of Cube for at most its 10 s refresh key, and can turn that off', () => {
    expect(parseConfig({}).query.resultCache).toEqual({ maxBytes: 32 * 1024 * 1024, windowMs: 10_000 });
    expect(parseConfig({ RESULT_CACHE_MB: '8', RESULT_CACHE_SECONDS: '0.5' }).query.resultCache).toEqual({ maxBytes: 8 * 1024 * 1024, windowMs: 500 });
    expect(parseConfig({ RESULT_CACHE_MB: '0' }).query.resultCache.maxBytes).toBe(0);
    expect(problemsOf({ RESULT_CACHE_SECONDS: '11' })[0]).toMatch(/^RESULT_CACHE_SECONDS="11": expected a number from 0 to 10/);
    expect(problemsOf({ RESULT_CACHE_MB: '-1' })[0]).toMatch(/^RESULT_CACHE_MB="-1": expected an integer from 0/);
  });

  it('refuses a CORS origin with a path, naming it', () => {
    expect(problemsOf({ CORS_ORIGINS: 'https://a.example/app' })[0]).toMatch(
      /^CORS_ORIGINS="https:\/\/a.example\/app": expected \* or comma-separated origins/,
    );
  });

  it('names the variable, its value and the expected form', () => {
    expect(problemsOf({ PORT: 'eighty' })).toEqual(['PORT="eighty": expected an integer from 1 to 65535']);
    expect(problemsOf({ CLICKHOUSE_URL: 'localhost:8123' })[0]).toMatch(/^CLICKHOUSE_URL="localhost:8123": expected an http/);
    expect(problemsOf({ CLICKHOUSE_DATABASE: 'a-b' })[0]).toMatch(/^CLICKHOUSE_DATABASE="a-b": expected/);
    expect(problemsOf({ QUERY_TIMEOUT_SECONDS: '0' })[0]).toMatch(/^QUERY_TIMEOUT_SECONDS="0"/);
    expect(problemsOf({ LOG_LEVEL: 'loud' })[0]).toMatch(/^LOG_LEVEL="loud": expected one of debug, info, warn, error/);
  });

  it('counts downloads by IAB v2.3 on the UTC calendar day unless DOWNLOAD_RULES / DOWNLOAD_WINDOW say otherwise', () => {
    expect(parseConfig({}).downloads).toMatchObject({ rules: 'iab', window: 'calendar', trackingPrefix: 'https://pfx.example-analytics.net/e/' });
    expect(parseConfig({ DOWNLOAD_RULES: 'op3', DOWNLOAD_WINDOW: 'last-touch', USER_AGENTS_DIR: '/srv/ua/src' }).downloads).toMatchObject({
      rules: 'op3',
      window: 'last-touch',
      userAgentsDir: '/srv/ua/src',
    });
    expect(problemsOf({ DOWNLOAD_RULES: 'nielsen' })).toEqual(['DOWNLOAD_RULES="nielsen": expected one of iab, op3']);
    expect(problemsOf({ DOWNLOAD_WINDOW: 'weekly' })).toEqual(['DOWNLOAD_WINDOW="weekly": expected one of calendar, first-touch, last-touch']);
    expect(problemsOf({ TRACKING_PREFIX: 'pfx.example/e' })[0]).toMatch(/^TRACKING_PREFIX="pfx.example\/e": expected an http\(s\) URL ending in \//);
  });

  it('counts page views as funnel visits and structured events of category conversion as conversions unless FUNNEL_VISIT / FUNNEL_CONVERSION say otherwise', () => {
    expect(parseConfig({}).funnel).toEqual({ visit: [{ pageViews: true }], conversion: [{ category: 'conversion' }] });
    expect(parseConfig({ FUNNEL_VISIT: 'page_view, player/play', FUNNEL_CONVERSION: 'conversion,shop/purchase' }).funnel).toEqual({
      visit: [{ pageViews: true }, { category: 'player', action: 'play' }],
      conversion: [{ category: 'conversion' }, { category: 'shop', action: 'purchase' }],
    });
    for (const value of ['shop/', '/purchase', 'a/b/c', 'conversion,,x/']) {
      expect(problemsOf({ FUNNEL_CONVERSION: value })).toEqual([
        `FUNNEL_CONVERSION=${JSON.stringify(value)}: expected a comma-separated list of page_view, <category> or <category>/<action>, e.g. conversion,shop/purchase`,
      ]);
    }
  });

  it('keeps rows and whole addresses for ever unless RETENTION_*_DAYS / ADDRESS_RETENTION_DAYS say otherwise, and writes rejects to data/rejects', () => {
    expect(parseConfig({}).retention).toEqual({ rawDays: 0, derivedDays: 0, chartsDays: 0, addressDays: 0 });
    expect(parseConfig({}).rejectsDir).toBe(path.resolve('data/rejects'));
    const set = parseConfig({
      RETENTION_RAW_DAYS: '90',
      RETENTION_DERIVED_DAYS: '400',
      RETENTION_CHARTS_DAYS: '30',
      ADDRESS_RETENTION_DAYS: '7',
      REJECTS_DIR: '/var/lib/rejects',
    });
    expect(set.retention).toEqual({ rawDays: 90, derivedDays: 400, chartsDays: 30, addressDays: 7 });
    expect(set.rejectsDir).toBe('/var/lib/rejects');
    expect(problemsOf({ RETENTION_RAW_DAYS: '-1', ADDRESS_RETENTION_DAYS: '1.5' })).toEqual([
      'RETENTION_RAW_DAYS="-1": expected an integer from 0 to 36500',
      'ADDRESS_RETENTION_DAYS="1.5": expected an integer from 0 to 36500',
    ]);
  });

  it('reports every problem at once', () => {
    expect(problemsOf({ PORT: '0', DEMO_SCALE: 'big', LOG_LEVEL: 'loud' })).toHaveLength(3);
  });

  it('points at a ClickHouse server when CLICKHOUSE_URL is set, without demo data', () => {
    const config = parseConfig({ CLICKHOUSE_URL: 'https://ch.example:8443', CLICKHOUSE_USER: 'reader', CLICKHOUSE_PASSWORD: 'pw' });
    expect(config.warehouse).toEqual({
      kind: 'server',
      url: 'https://ch.example:8443',
      username: 'reader',
      password: 'pw',
      database: 'analytics',
      rollupDatabase: 'analytics_rollups',
      rollupUsername: 'reader',
      rollupPassword: 'pw',
      caCertPath: undefined,
    });
    expect(config.demo.enabled).toBe(false);
  });

  it('loads the IP database from the npm packages unless GEO_DB_DIR names a directory', () => {
    expect(parseConfig({}).geo).toEqual({ dir: undefined });
    expect(parseConfig({ GEO_DB_DIR: ' ' }).geo).toEqual({ dir: undefined });
    expect(parseConfig({ GEO_DB_DIR: 'geo/2026-11' }).geo).toEqual({ dir: path.resolve('geo/2026-11') });
  });

  it('builds rollups in their own database, as CLICKHOUSE_ROLLUP_USER when set, refreshing every 60 s unless told otherwise', () => {
    const config = parseConfig({});
    expect(config.warehouse).toMatchObject({ database: 'analytics', rollupDatabase: 'analytics_rollups' });
    expect(config.rollups).toEqual({ refreshSeconds: 60, buildTimeoutMs: 600_000, buildMaxMemoryBytes: 8192 * 2 ** 20 });
    expect(parseConfig({ CUBE_ROLLUP_BUILD_TIMEOUT_SECONDS: '1200', CUBE_ROLLUP_BUILD_MAX_MEMORY_MB: '12288' }).rollups).toMatchObject({
      buildTimeoutMs: 1_200_000,
      buildMaxMemoryBytes: 12288 * 2 ** 20,
    });
    expect(parseConfig({ CLICKHOUSE_DATABASE: 'podcasts', CUBE_ROLLUP_REFRESH_SECONDS: '0' })).toMatchObject({
      warehouse: { rollupDatabase: 'podcasts_rollups' },
      rollups: { refreshSeconds: 0 },
    });
    const server = parseConfig({
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_USER: 'reader',
      CLICKHOUSE_ROLLUP_USER: 'rollups',
      CLICKHOUSE_ROLLUP_PASSWORD: 'w',
      CUBE_ROLLUP_DATABASE: 'cube_rollups',
    });
    expect(server.warehouse).toMatchObject({ username: 'reader', rollupUsername: 'rollups', rollupPassword: 'w', rollupDatabase: 'cube_rollups' });
  });

  it('refuses a rollup database that is the data database or not a plain name, naming the variable', () => {
    expect(problemsOf({ CUBE_ROLLUP_DATABASE: 'analytics' })).toEqual([
      expect.stringMatching(/^CUBE_ROLLUP_DATABASE=analytics: .*other than CLICKHOUSE_DATABASE/),
    ]);
    expect(problemsOf({ CUBE_ROLLUP_DATABASE: 'a.b' })).toEqual([expect.stringMatching(/^CUBE_ROLLUP_DATABASE=/)]);
    expect(problemsOf({ CUBE_ROLLUP_REFRESH_SECONDS: '-1' })).toEqual([expect.stringMatching(/^CUBE_ROLLUP_REFRESH_SECONDS=/)]);
    expect(problemsOf({ CUBE_ROLLUP_BUILD_MAX_MEMORY_MB: '0' })).toEqual([
      expect.stringMatching(/^CUBE_ROLLUP_BUILD_MAX_MEMORY_MB="0": expected an integer from 1/),
    ]);
  });

  it('gives running queries the whole query timeout at shutdown: the default covers it, a shorter one is refused', () => {
    expect(parseConfig({}).http).toMatchObject({ shutdownDrainMs: 5000, shutdownTimeoutMs: 65_000 });
    expect(parseConfig({ QUERY_TIMEOUT_SECONDS: '120' }).http.shutdownTimeoutMs).toBe(125_000);
    expect(parseConfig({ QUERY_TIMEOUT_SECONDS: '20', SHUTDOWN_TIMEOUT_SECONDS: '20' }).http.shutdownTimeoutMs).toBe(20_000);
    expect(problemsOf({ SHUTDOWN_TIMEOUT_SECONDS: '10' })).toEqual([
      'SHUTDOWN_TIMEOUT_SECONDS=10: expected at least QUERY_TIMEOUT_SECONDS (60), so that a running query can finish at shutdown',
    ]);
    expect(parseConfig({ SHUTDOWN_DRAIN_SECONDS: '0.5' }).http.shutdownDrainMs).toBe(500);
  });

  it('reads the connection cap and the header and request timeouts, the request timeout no shorter than the header one', () => {
    expect(parseConfig({}).http).toMatchObject({ maxConnections: undefined, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(parseConfig({ HTTP_MAX_CONNECTIONS: '500' }).http.maxConnections).toBe(500);
    expect(problemsOf({ HTTP_MAX_CONNECTIONS: '0' })[0]).toMatch(/^HTTP_MAX_CONNECTIONS="0": expected an integer from 1/);
    expect(problemsOf({ HTTP_HEADERS_TIMEOUT_SECONDS: '20', HTTP_REQUEST_TIMEOUT_SECONDS: '10' })).toEqual([
      'HTTP_REQUEST_TIMEOUT_SECONDS=10: expected at least HTTP_HEADERS_TIMEOUT_SECONDS (20)',
    ]);
  });

  it('serves metrics on loopback port 9464 unless told otherwise; 0 turns them off', () => {
    expect(parseConfig({}).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseConfig({ METRICS_HOST: '0.0.0.0', METRICS_PORT: '0' }).metrics).toEqual({ host: '0.0.0.0', port: 0 });
    expect(problemsOf({ METRICS_PORT: '70000' })).toEqual(['METRICS_PORT="70000": expected an integer from 0 to 65535']);
  });

  it('refuses METRICS_PORT equal to PORT: /metrics is never served on the API port', () => {
    expect(problemsOf({ PORT: '9000', METRICS_PORT: '9000' })).toEqual([
      'METRICS_PORT=9000: expected a port other than PORT (9000), so that /metrics is never served on the API port',
    ]);
  });

  it('counts rate limits in memory without REDIS_URL, and reads a redis:// or rediss:// URL', () => {
    expect(parseConfig({}).rateLimit.redisUrl).toBeUndefined();
    expect(parseConfig({ REDIS_URL: 'redis://localhost:6379' }).rateLimit.redisUrl).toBe('redis://localhost:6379');
    expect(parseConfig({ REDIS_URL: 'rediss://user:secret@redis.example:6380/2' }).rateLimit.redisUrl).toBe('rediss://user:secret@redis.example:6380/2');
  });

  it('refuses a REDIS_URL that is not a redis URL, without printing its password', () => {
    for (const bad of ['localhost:6379', 'http://redis.example:6379', 'redis://', 'redis://host:6379/db-one']) {
      expect(problemsOf({ REDIS_URL: bad })).toEqual([expect.stringMatching(/^REDIS_URL=".*": expected a redis:\/\/ or rediss:\/\/ URL/)]);
    }
    const [problem] = problemsOf({ REDIS_URL: 'https://user:hunter2@redis.example:6379' });
    expect(problem).toMatch(/^REDIS_URL="https:\/\/user:\*\*\*@redis.example:6379": expected/);
    expect(problem).not.toContain('hunter2');
  });
});
