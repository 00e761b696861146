import { ConfigError, DEMO_API_KEY, parseConfig } from '../src/config';

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

  it('keeps answers in front of Cube for at most its 10 s refresh key, and can turn that off', () => {
    expect(parseConfig({}).query.resultCache).toEqual({ maxBytes: 32 * 1024 * 1024, windowMs: 10_000 });
    expect(parseConfig({ RESULT_CACHE_MB: '8', RESULT_CACHE_SECONDS: '0.5' }).query.resultCache).toEqual({ maxBytes: 8 * 1024 * 1024, windowMs: 500 });
    expect(parseConfig({ RESULT_CACHE_MB: '0' }).query.resultCache.maxBytes).toBe(0);
    expect(problemsOf({ RESULT_CACHE_SECONDS: '11' })[0]).toMatch(/^RESULT_CACHE_SECONDS="11": expected a number from 0 to 10/);
    expect(problemsOf({ RESULT_CACHE_MB: '-1' })[0]).toMatch(/^RESULT_CACHE_MB="-1": expected an integer from 0/);
  });

  it('refuses a CORS origin with a path, naming it', () => {
    expect(problemsOf({ CORS_ORIGINS: 'https://a.example/app' })[0]).toMatch(/^CORS_ORIGINS="https:\/\/a.example\/app": expected \* or comma-separated origins/);
  });

  it('names the variable, its value and the expected form', () => {
    expect(problemsOf({ PORT: 'eighty' })).toEqual(['PORT="eighty": expected an integer from 1 to 65535']);
    expect(problemsOf({ CLICKHOUSE_URL: 'localhost:8123' })[0]).toMatch(/^CLICKHOUSE_URL="localhost:8123": expected an http/);
    expect(problemsOf({ CLICKHOUSE_DATABASE: 'a-b' })[0]).toMatch(/^CLICKHOUSE_DATABASE="a-b": expected/);
    expect(problemsOf({ QUERY_TIMEOUT_SECONDS: '0' })[0]).toMatch(/^QUERY_TIMEOUT_SECONDS="0"/);
    expect(problemsOf({ LOG_LEVEL: 'loud' })[0]).toMatch(/^LOG_LEVEL="loud": expected one of debug, info, warn, error/);
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
      caCertPath: undefined,
    });
    expect(config.demo.enabled).toBe(false);
  });
});
