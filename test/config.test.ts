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

  it('refuses to start in production without keys, saying why', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([expect.stringMatching(/^API_KEYS .*NODE_ENV=production/)]);
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
