import path from 'node:path';
import dotenv from 'dotenv';

/**
 * The only place that reads the environment. Everything the service can be
 * configured with is here, validated once at start-up; other modules receive
 * the resulting object.
 */

export type WarehouseConfig =
  | { kind: 'chdb'; dataDir: string; database: string }
  | {
      kind: 'server';
      url: string;
      username: string;
      password: string;
      database: string;
      caCertPath?: string;
    };

export interface DemoConfig {
  /** Build demo data when the embedded data directory holds none. */
  enabled: boolean;
  scale: number;
  seed: number;
  days: number;
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
  query: {
    /** How long a load request may take before it answers query_timeout. */
    timeoutMs: number;
    /** Largest `limit` a query may ask for (also Cube's CUBEJS_DB_QUERY_LIMIT). */
    maxLimit: number;
    /** Rows returned when a query gives no `limit`. */
    defaultLimit: number;
    /** Measures, dimensions, time dimensions and segments in one query, together. */
    maxMembers: number;
    /** Filter conditions in one query, counting those inside and/or. */
    maxFilters: number;
    /** Rows ClickHouse may return for one statement (max_result_rows). */
    maxResultRows: number;
    /** Memory one statement may use in ClickHouse (max_memory_usage). */
    maxMemoryBytes: number;
  };
  http: {
    bodyLimitBytes: number;
    shutdownTimeoutMs: number;
    /** Origins allowed to call the API from a browser; none means CORS is off. */
    corsOrigins: string[];
    /**
     * Proxies in front of the service whose X-Forwarded-For is trusted to name
     * the client address (Express's "trust proxy" hop count); 0 trusts none.
     */
    trustProxyHops: number;
  };
  /** Per key; a key over either limit is answered 429. */
  rateLimit: {
    requests: number;
    windowMs: number;
    concurrent: number;
    /** Requests without a valid key per client address and window; valid keys never count. */
    unauthenticated: number;
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
    problems.push(
      'API_KEYS is set with NODE_ENV=production: operator keys read every account, so production refuses them unless ALLOW_OPERATOR_KEYS=true',
    );
  }
  // Production never falls back to the demo key: its keys come from the key file.
  const usingDemoKey = configuredKeys.length === 0 && nodeEnv !== 'production';
  const apiKeys = usingDemoKey ? [DEMO_API_KEY] : configuredKeys;

  const database = read.match('CLICKHOUSE_DATABASE', 'analytics', /^[A-Za-z_][A-Za-z0-9_]*$/, 'a database name of letters, digits and underscores');
  const url = read.optional('CLICKHOUSE_URL');
  let warehouse: WarehouseConfig;
  if (url !== undefined) {
    if (!/^https?:\/\/[^/]+/.test(url)) {
      problems.push(`CLICKHOUSE_URL=${JSON.stringify(url)}: expected an http:// or https:// URL of a ClickHouse server, e.g. http://localhost:8123`);
    }
    warehouse = {
      kind: 'server',
      url,
      username: read.string('CLICKHOUSE_USER', 'default'),
      password: read.string('CLICKHOUSE_PASSWORD', ''),
      database,
      caCertPath: read.optional('CLICKHOUSE_CA_CERT'),
    };
  } else {
    warehouse = { kind: 'chdb', dataDir: path.resolve(read.string('CHDB_DATA_DIR', 'data/chdb')), database };
  }

  const demo: DemoConfig = {
    enabled: read.boolean('DEMO_DATA', warehouse.kind === 'chdb'),
    scale: read.number('DEMO_SCALE', 1, 0.001, 1000),
    seed: read.integer('DEMO_SEED', 20261122, 0, 2 ** 31 - 1),
    days: read.integer('DEMO_DAYS', 90, 7, 3650),
  };

  const maxLimit = read.integer('QUERY_MAX_LIMIT', 50000, 1, 1_000_000);
  const defaultLimit = read.integer('QUERY_DEFAULT_LIMIT', 10000, 1, 1_000_000);
  if (defaultLimit > maxLimit) {
    problems.push(`QUERY_DEFAULT_LIMIT=${defaultLimit}: expected at most QUERY_MAX_LIMIT (${maxLimit})`);
  }

  const corsOrigins = read.list('CORS_ORIGINS');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(`CORS_ORIGINS=${JSON.stringify(read.optional('CORS_ORIGINS'))}: expected * or comma-separated origins such as https://app.example.com (no path), but got ${JSON.stringify(origin)}`);
    }
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
    query: {
      timeoutMs: read.integer('QUERY_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
      maxLimit,
      defaultLimit,
      maxMembers: read.integer('QUERY_MAX_MEMBERS', 50, 1, 1000),
      maxFilters: read.integer('QUERY_MAX_FILTERS', 100, 1, 10_000),
      maxResultRows: read.integer('QUERY_MAX_RESULT_ROWS', 1_000_000, 1, 1_000_000_000),
      maxMemoryBytes: read.integer('QUERY_MAX_MEMORY_MB', 4096, 1, 1_048_576) * 1024 * 1024,
    },
    http: {
      bodyLimitBytes: read.integer('HTTP_BODY_LIMIT_KB', 100, 1, 10240) * 1024,
      shutdownTimeoutMs: read.integer('SHUTDOWN_TIMEOUT_SECONDS', 10, 0, 600) * 1000,
      corsOrigins,
      trustProxyHops: read.integer('TRUST_PROXY_HOPS', 0, 0, 10),
    },
    rateLimit: {
      requests: read.integer('RATE_LIMIT_REQUESTS', 600, 1, 1_000_000),
      windowMs: read.integer('RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400) * 1000,
      concurrent: read.integer('RATE_LIMIT_CONCURRENT', 8, 1, 10_000),
      unauthenticated: read.integer('RATE_LIMIT_UNAUTHENTICATED', 60, 1, 1_000_000),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
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
