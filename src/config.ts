import path from 'node:path';
import dotenv from 'dotenv';

/**
 * The only place that reads the environment. Everything the service can be
 * configured with is here, validated once at start-up; other modules receive
 * the resulting object.
 */

export type WarehouseConfig =
  | { kind: 'chdb'; dataDir: string; database: string; rollupDatabase: string }
  | {
      kind: 'server';
      url: string;
      username: string;
      password: string;
      database: string;
      /** Cube's rollup tables; the only database the service ever writes to while serving. */
      rollupDatabase: string;
      /** The user that builds rollups: it needs CREATE, INSERT and DROP on rollupDatabase (and nothing else). */
      rollupUsername: string;
      rollupPassword: string;
      caCertPath?: string;
    };

export interface DemoConfig {
  /** Build demo data when the embedded data directory holds none. */
  enabled: boolean;
  scale: number;
  seed: number;
  days: number;
}

/** The published rules that turn requests into downloads (src/warehouse/derive/rules.ts writes them in SQL). */
export const DOWNLOAD_RULES = ['iab', 'op3'] as const;
export type DownloadRules = (typeof DOWNLOAD_RULES)[number];
/** IAB v2.3's three dedup windows (calendar, first-touch rolling, last-touch rolling). */
export const DOWNLOAD_WINDOWS = ['calendar', 'first-touch', 'last-touch'] as const;
export type DownloadWindow = (typeof DOWNLOAD_WINDOWS)[number];

export interface DownloadsConfig {
  /** Which published rules turn requests into downloads (src/warehouse/derive/rules.ts). */
  rules: DownloadRules;
  /** IAB's dedup window; OP3 always uses the UTC calendar day. */
  window: DownloadWindow;
  /** The src/ folder of opawg/user-agents-v2, read when downloads are derived; the built-in pattern set when unset. */
  userAgentsDir?: string;
  /** Imported request URLs start with it, then the show's token, '/', and the media host and path. */
  trackingPrefix: string;
}

/**
 * A kind of website event (a row of web_events): page views (`page_view`,
 * the events without a category), or structured events of a category, and
 * of an action of it when one is given (`<category>/<action>`).
 */
export type WebEventKind = { pageViews: true } | { category: string; action?: string };

/** What the funnel (schema/WebEventsFromPodcastFunnel.js) counts as its steps after a download: a web event of any of these kinds. */
export interface FunnelConfig {
  visit: WebEventKind[];
  conversion: WebEventKind[];
}

/**
 * How long rows are kept, in days; 0 keeps them for ever. Which tables each
 * setting covers is src/warehouse/retention.ts's table.
 */
export interface RetentionConfig {
  /** Requests and website events as they were logged. */
  rawDays: number;
  /** Downloads and link views, derived from the raw rows. */
  derivedDays: number;
  /** The charts' daily ranks. */
  chartsDays: number;
  /** How long listeners' and visitors' addresses are kept whole before they are cut to their network (/24, /48). */
  addressDays: number;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  logLevel: LogLevel;
  /**
   * Operator keys from API_KEYS: they read every account. DEMO_API_KEY when
   * none are set outside production.
   */
  apiKeys: string[];
  /** True when apiKeys holds only the built-in demo key. */
  usingDemoKey: boolean;
  keys: {
    /** JSON file of account keys (hashes only), managed with `npm run keys`. */
    file: string;
    /** How often the running service looks for changes to the file. */
    reloadIntervalMs: number;
  };
  warehouse: WarehouseConfig;
  demo: DemoConfig;
  downloads: DownloadsConfig;
  funnel: FunnelConfig;
  retention: RetentionConfig;
  /** Where imports write the lines they rejected (owner-only files, removed after retention.addressDays). */
  rejectsDir: string;
  geo: {
    /** GEO_DB_DIR: newer IP database files than the npm packages' (src/warehouse/geo/sources.ts); undefined: the packages'. */
    dir: string | undefined;
  };
  models: {
    /** Folder of Cube model files; watched for changes outside production. */
    dir: string;
  };
  rollups: {
    /** How often Cube's refresh worker checks and builds rollups, per account; 0: never (the first query that needs a rollup builds it). */
    refreshSeconds: number;
    /** How long one rollup build may run, and the memory it may use: a build joins all of an account's rows, which no client query may. */
    buildTimeoutMs: number;
    buildMaxMemoryBytes: number;
  };
  /**
   * How often the service looks for imports another process made (the
   * import command against a ClickHouse server) and makes its answers follow
   * them; 0: never. An import handed to the service itself is followed at once.
   */
  dataRefreshSeconds: number;
  /**
   * Rows one statement of an import the service runs (its inbox, on chDB)
   * takes at most, so that queries go between them; the import command run
   * alone takes the file in one statement.
   */
  importStatementRows: number;
  query: {
    /** How long a load request may take before it answers query_timeout. */
    timeoutMs: number;
    /** Largest `limit` a query may ask for (Cube's gateway is given it plus one: src/cube/engine/row-limits.ts). */
    maxLimit: number;
    /** Rows returned when a query gives no `limit`. */
    defaultLimit: number;
    /** Measures, dimensions, time dimensions and segments in one query, together. */
    maxMembers: number;
    /** Filter conditions in one query, counting those inside and/or. */
    maxFilters: number;
    /**
     * Queries one request makes Cube run: each query of an array and each
     * range of a compareDateRange is one. Cube copies the whole query once per
     * range, so its work grows with the square of the ranges.
     */
    maxQueries: number;
    /** Filter values over every filter of every query the request runs. */
    maxFilterValues: number;
    /** Characters of one filter value or date range string. */
    maxValueLength: number;
    /** Time buckets (date range ÷ granularity) over every time dimension and range of the request. */
    maxTimeBuckets: number;
    /** How deep a query's JSON may nest (objects and arrays), counting nested and/or filters. */
    maxDepth: number;
    /** Rows ClickHouse may return for one statement (max_result_rows). */
    maxResultRows: number;
    /** Memory one statement may use in ClickHouse (max_memory_usage). */
    maxMemoryBytes: number;
    /** Answers kept in front of Cube for repeated queries; 0 bytes or 0 ms turns it off. */
    resultCache: {
      maxBytes: number;
      /** How long after Cube computed an answer it may be served again; at most Cube's 10 s refresh key. */
      windowMs: number;
    };
    /** Bytes of results and refresh keys Cube's own cache keeps, beneath resultCache (see src/cube/engine/cache-driver.ts). */
    cubeCacheMaxBytes: number;
    /** Query shapes per models version whose SQL is learnt from Cube's compile and reused with other filter values; 0: off (see src/cube/engine/sql-plans.ts). */
    cubeSqlPlans: number;
  };
  /** POST /v1/data/export: its own caps, above a load's limit; reaching one is always said. */
  exports: {
    /** Rows one export writes at most. */
    maxRows: number;
    /** Bytes one export writes at most, as the engine writes them. */
    maxBytes: number;
  };
  http: {
    bodyLimitBytes: number;
    /** After SIGTERM, how long requests are still taken (readiness already says 503) so a load balancer can notice. */
    shutdownDrainMs: number;
    /** After the drain, how long running requests may finish before they are cut off. At least the query timeout. */
    shutdownTimeoutMs: number;
    /** Open connections at most; undefined: derived from the open-file limit (src/http/server.ts). */
    maxConnections: number | undefined;
    /** Time a client has to send its request headers, and its whole request. */
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    /** Origins allowed to call the API from a browser; none means CORS is off. */
    corsOrigins: string[];
    /**
     * Proxies in front of the service whose X-Forwarded-For is trusted to name
     * the client address (Express's "trust proxy" hop count); 0 trusts none.
     */
    trustProxyHops: number;
  };
  /** Per key; a key over either limit is answered 429. */
  /** Event-loop delay above this is logged as a warning: one piece of work held every request up. */
  eventLoopWarnMs: number;
  /** GET /explore serves the query explorer page (docs/reference/api.md); off in production unless set. */
  explorer: boolean;
  rateLimit: {
    requests: number;
    windowMs: number;
    concurrent: number;
    /** Requests without a valid key per client address and window; valid keys never count. */
    unauthenticated: number;
    /** Redis that holds the counters, so they hold across instances; in memory when unset. */
    redisUrl?: string;
  };
  /** The Prometheus endpoint, on its own listener so it is never served on the API port. */
  metrics: {
    host: string;
    /** 0 turns the endpoint off. */
    port: number;
  };
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEMO_API_KEY = 'demo-key-not-for-production';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads `.env` (without overriding the real environment), then validates. */
export function loadConfig(): Config {
  const fromFile: Env = {};
  dotenv.config({ processEnv: fromFile, quiet: true });
  return parseConfig({ ...fromFile, ...process.env });
}

export function parseConfig(env: Env): Config {
  const problems: string[] = [];
  const read = new Reader(env, problems);

  const nodeEnv = read.oneOf('NODE_ENV', ['development', 'production', 'test'], 'development');
  const host = read.string('HOST', '0.0.0.0');
  const port = read.integer('PORT', 4000, 1, 65535);
  const logLevel = read.oneOf('LOG_LEVEL', LOG_LEVELS, nodeEnv === 'test' ? 'warn' : 'info');

  const configuredKeys = read.list('API_KEYS');
  const allowOperatorKeys = read.boolean('ALLOW_OPERATOR_KEYS', false);
  if (nodeEnv === 'production' && configuredKeys.length > 0 && !allowOperatorKeys) {
    problems.push('API_KEYS is set with NODE_ENV=production: operator keys read every account, so production refuses them unless ALLOW_OPERATOR_KEYS=true');
  }
  // Production never falls back to the demo key: its keys come from the key file.
  const usingDemoKey = configuredKeys.length === 0 && nodeEnv !== 'production';
  const apiKeys = usingDemoKey ? [DEMO_API_KEY] : configuredKeys;

  const database = read.match('CLICKHOUSE_DATABASE', 'analytics', /^[A-Za-z_][A-Za-z0-9_]*$/, 'a database name of letters, digits and underscores');
  const rollupDatabase = read.match(
    'CUBE_ROLLUP_DATABASE',
    `${database}_rollups`,
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'a database name of letters, digits and underscores',
  );
  if (rollupDatabase === database) {
    problems.push(
      `CUBE_ROLLUP_DATABASE=${rollupDatabase}: expected a database other than CLICKHOUSE_DATABASE (${database}); rollups are written, the data never is`,
    );
  }
  const url = read.optional('CLICKHOUSE_URL');
  let warehouse: WarehouseConfig;
  if (url !== undefined) {
    if (!/^https?:\/\/[^/]+/.test(url)) {
      problems.push(`CLICKHOUSE_URL=${JSON.stringify(url)}: expected an http:// or https:// URL of a ClickHouse server, e.g. http://localhost:8123`);
    }
    const username = read.string('CLICKHOUSE_USER', 'default');
    const password = read.string('CLICKHOUSE_PASSWORD', '');
    warehouse = {
      kind: 'server',
      url,
      username,
      password,
      database,
      rollupDatabase,
      rollupUsername: read.string('CLICKHOUSE_ROLLUP_USER', username),
      rollupPassword: read.string('CLICKHOUSE_ROLLUP_PASSWORD', password),
      caCertPath: read.optional('CLICKHOUSE_CA_CERT'),
    };
  } else {
    warehouse = { kind: 'chdb', dataDir: path.resolve(read.string('CHDB_DATA_DIR', 'data/chdb')), database, rollupDatabase };
  }

  const demo: DemoConfig = {
    enabled: read.boolean('DEMO_DATA', warehouse.kind === 'chdb'),
    scale: read.number('DEMO_SCALE', 1, 0.001, 1000),
    seed: read.integer('DEMO_SEED', 20261122, 0, 2 ** 31 - 1),
    days: read.integer('DEMO_DAYS', 90, 7, 3650),
  };

  const downloads: DownloadsConfig = {
    rules: read.oneOf('DOWNLOAD_RULES', DOWNLOAD_RULES, 'iab'),
    window: read.oneOf('DOWNLOAD_WINDOW', DOWNLOAD_WINDOWS, 'calendar'),
    userAgentsDir: read.optional('USER_AGENTS_DIR') === undefined ? undefined : path.resolve(read.string('USER_AGENTS_DIR', '')),
    trackingPrefix: read.match('TRACKING_PREFIX', 'https://pfx.example-analytics.net/e/', /^https?:\/\/[^\s/]+\/(\S*\/)?$/, 'an http(s) URL ending in /'),
  };

  const maxLimit = read.integer('QUERY_MAX_LIMIT', 50000, 1, 1_000_000);
  const defaultLimit = read.integer('QUERY_DEFAULT_LIMIT', 10000, 1, 1_000_000);
  if (defaultLimit > maxLimit) {
    problems.push(`QUERY_DEFAULT_LIMIT=${defaultLimit}: expected at most QUERY_MAX_LIMIT (${maxLimit})`);
  }

  const queryTimeoutSeconds = read.integer('QUERY_TIMEOUT_SECONDS', 60, 1, 3600);
  // A running query must be able to finish at shutdown; a few seconds more
  // for Cube to hand its answer back.
  const shutdownTimeoutSeconds = read.integer('SHUTDOWN_TIMEOUT_SECONDS', queryTimeoutSeconds + 5, 0, 7200);
  if (shutdownTimeoutSeconds < queryTimeoutSeconds) {
    problems.push(
      `SHUTDOWN_TIMEOUT_SECONDS=${shutdownTimeoutSeconds}: expected at least QUERY_TIMEOUT_SECONDS (${queryTimeoutSeconds}), so that a running query can finish at shutdown`,
    );
  }
  const headersTimeoutSeconds = read.integer('HTTP_HEADERS_TIMEOUT_SECONDS', 10, 1, 300);
  const requestTimeoutSeconds = read.integer('HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600);
  if (requestTimeoutSeconds < headersTimeoutSeconds) {
    problems.push(`HTTP_REQUEST_TIMEOUT_SECONDS=${requestTimeoutSeconds}: expected at least HTTP_HEADERS_TIMEOUT_SECONDS (${headersTimeoutSeconds})`);
  }
  const maxConnections = read.optional('HTTP_MAX_CONNECTIONS') === undefined ? undefined : read.integer('HTTP_MAX_CONNECTIONS', 1000, 1, 1_000_000);

  const corsOrigins = read.list('CORS_ORIGINS');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(
        `CORS_ORIGINS=${JSON.stringify(read.optional('CORS_ORIGINS'))}: expected * or comma-separated origins such as https://app.example.com (no path), but got ${JSON.stringify(origin)}`,
      );
    }
  }

  const redisUrl = read.optional('REDIS_URL');
  if (redisUrl !== undefined && !isRedisUrl(redisUrl)) {
    // The URL may carry a password; the message may end up in a log.
    const shown = redisUrl.replace(/:[^:@/]*@/, ':***@');
    problems.push(
      `REDIS_URL=${JSON.stringify(shown)}: expected a redis:// or rediss:// URL such as redis://localhost:6379 or rediss://user:password@redis.example:6380/0`,
    );
  }
  const metricsPort = read.integer('METRICS_PORT', 9464, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) {
    problems.push(`METRICS_PORT=${metricsPort}: expected a port other than PORT (${port}), so that /metrics is never served on the API port`);
  }

  const config: Config = {
    env: nodeEnv,
    host,
    port,
    logLevel,
    apiKeys,
    usingDemoKey,
    keys: {
      file: path.resolve(read.string('API_KEYS_FILE', 'data/api-keys.json')),
      reloadIntervalMs: read.integer('API_KEYS_RELOAD_MS', 1000, 100, 60_000),
    },
    warehouse,
    demo,
    downloads,
    funnel: { visit: read.webEventKinds('FUNNEL_VISIT', 'page_view'), conversion: read.webEventKinds('FUNNEL_CONVERSION', 'conversion') },
    retention: {
      rawDays: read.integer('RETENTION_RAW_DAYS', 0, 0, 36_500),
      derivedDays: read.integer('RETENTION_DERIVED_DAYS', 0, 0, 36_500),
      chartsDays: read.integer('RETENTION_CHARTS_DAYS', 0, 0, 36_500),
      addressDays: read.integer('ADDRESS_RETENTION_DAYS', 0, 0, 36_500),
    },
    rejectsDir: path.resolve(read.string('REJECTS_DIR', 'data/rejects')),
    geo: { dir: read.optional('GEO_DB_DIR') === undefined ? undefined : path.resolve(read.string('GEO_DB_DIR', '')) },
    models: { dir: path.resolve(read.string('CUBE_MODELS_DIR', 'schema')) },
    rollups: {
      refreshSeconds: read.integer('CUBE_ROLLUP_REFRESH_SECONDS', 60, 0, 86_400),
      buildTimeoutMs: read.integer('CUBE_ROLLUP_BUILD_TIMEOUT_SECONDS', 600, 1, 86_400) * 1000,
      buildMaxMemoryBytes: read.integer('CUBE_ROLLUP_BUILD_MAX_MEMORY_MB', 8192, 1, 1_048_576) * 1024 * 1024,
    },
    dataRefreshSeconds: read.integer('DATA_REFRESH_SECONDS', 10, 0, 3600),
    importStatementRows: read.integer('IMPORT_STATEMENT_ROWS', 50_000, 1, 100_000_000),
    query: {
      timeoutMs: queryTimeoutSeconds * 1000,
      maxLimit,
      defaultLimit,
      maxMembers: read.integer('QUERY_MAX_MEMBERS', 50, 1, 1000),
      maxFilters: read.integer('QUERY_MAX_FILTERS', 100, 1, 10_000),
      maxQueries: read.integer('QUERY_MAX_QUERIES', 20, 1, 1000),
      maxFilterValues: read.integer('QUERY_MAX_FILTER_VALUES', 1000, 1, 100_000),
      maxValueLength: read.integer('QUERY_MAX_VALUE_LENGTH', 1000, 1, 1_000_000),
      maxTimeBuckets: read.integer('QUERY_MAX_TIME_BUCKETS', 20_000, 1, 100_000_000),
      maxDepth: read.integer('QUERY_MAX_DEPTH', 64, 4, 1000),
      maxResultRows: read.integer('QUERY_MAX_RESULT_ROWS', 1_000_000, 1, 1_000_000_000),
      maxMemoryBytes: read.integer('QUERY_MAX_MEMORY_MB', 4096, 1, 1_048_576) * 1024 * 1024,
      resultCache: {
        maxBytes: read.integer('RESULT_CACHE_MB', 32, 0, 65_536) * 1024 * 1024,
        // Cube's default refresh key renews answers every 10 s; a longer window would outlive it.
        windowMs: Math.round(read.number('RESULT_CACHE_SECONDS', 10, 0, 10) * 1000),
      },
      cubeCacheMaxBytes: read.integer('CUBE_CACHE_MB', 16, 1, 65_536) * 1024 * 1024,
      cubeSqlPlans: read.integer('CUBE_SQL_PLANS', 1000, 0, 100_000),
    },
    exports: {
      maxRows: read.integer('EXPORT_MAX_ROWS', 1_000_000, 1, 100_000_000),
      maxBytes: read.integer('EXPORT_MAX_BYTES', 1024 * 1024 * 1024, 1024, 1024 ** 4),
    },
    http: {
      bodyLimitBytes: read.integer('HTTP_BODY_LIMIT_KB', 100, 1, 10240) * 1024,
      shutdownDrainMs: read.number('SHUTDOWN_DRAIN_SECONDS', 5, 0, 300) * 1000,
      shutdownTimeoutMs: shutdownTimeoutSeconds * 1000,
      maxConnections,
      headersTimeoutMs: headersTimeoutSeconds * 1000,
      requestTimeoutMs: requestTimeoutSeconds * 1000,
      corsOrigins,
      trustProxyHops: read.integer('TRUST_PROXY_HOPS', 0, 0, 10),
    },
    eventLoopWarnMs: read.integer('EVENT_LOOP_WARN_MS', 500, 10, 600_000),
    explorer: read.boolean('EXPLORER', nodeEnv !== 'production'),
    rateLimit: {
      requests: read.integer('RATE_LIMIT_REQUESTS', 600, 1, 1_000_000),
      windowMs: read.integer('RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400) * 1000,
      concurrent: read.integer('RATE_LIMIT_CONCURRENT', 8, 1, 10_000),
      unauthenticated: read.integer('RATE_LIMIT_UNAUTHENTICATED', 60, 1, 1_000_000),
      redisUrl,
    },
    metrics: {
      host: read.string('METRICS_HOST', '127.0.0.1'),
      port: metricsPort,
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '' && /^(\/\d*)?$/.test(url.pathname);
  } catch {
    return false;
  }
}

/** Typed accessors that record a problem naming the variable instead of throwing at the first one. */
class Reader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  optional(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  list(name: string): string[] {
    return (this.optional(name) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }

  /** A comma-separated list of web event kinds (WebEventKind): `page_view`, `<category>` or `<category>/<action>`. */
  webEventKinds(name: string, fallback: string): WebEventKind[] {
    const parse = (item: string): WebEventKind | undefined => {
      if (item === 'page_view') return { pageViews: true };
      const [category, action, more] = item.split('/').map((part) => part.trim());
      return category === '' || action === '' || more !== undefined ? undefined : { category, ...(action === undefined ? {} : { action }) };
    };
    const given = this.list(name);
    const kinds = given.map(parse);
    if (given.length === 0 || kinds.includes(undefined)) {
      if (given.length > 0) {
        this.problems.push(
          `${name}=${JSON.stringify(this.optional(name))}: expected a comma-separated list of page_view, <category> or <category>/<action>, e.g. conversion,shop/purchase`,
        );
      }
      return [parse(fallback) as WebEventKind];
    }
    return kinds as WebEventKind[];
  }

  match(name: string, fallback: string, pattern: RegExp, expected: string): string {
    const value = this.string(name, fallback);
    if (!pattern.test(value)) this.problems.push(`${name}=${JSON.stringify(value)}: expected ${expected}`);
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.optional(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}=${JSON.stringify(value)}: expected one of ${allowed.join(', ')}`);
    return fallback;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.optional(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name}=${JSON.stringify(value)}: expected true or false`);
    return fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    return this.numeric(name, fallback, min, max, true);
  }

  number(name: string, fallback: number, min: number, max: number): number {
    return this.numeric(name, fallback, min, max, false);
  }

  private numeric(name: string, fallback: number, min: number, max: number, integer: boolean): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    const ok = /^-?\d+(\.\d+)?$/.test(raw) && (!integer || Number.isInteger(value)) && value >= min && value <= max;
    if (!ok) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }
}
