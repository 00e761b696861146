import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '..', '..');
/** The settings table, and the page whose table of limits names each limit's setting with its default. */
const CONFIGURATION = 'docs/reference/configuration.md';
const LIMITS = 'docs/guides/operating.md';

/** Every variable parseConfig asks the environment for, found by handing it an environment that records each lookup. */
function variablesRead(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  parseConfig(recording);
  return read;
}

// Some variables are read only when others are set (a ClickHouse server's credentials, an explicit connection cap).
const read = new Set([
  ...variablesRead({}),
  ...variablesRead({ CLICKHOUSE_URL: 'http://clickhouse.example:8123', HTTP_MAX_CONNECTIONS: '100', REDIS_URL: 'redis://localhost:6379' }),
]);

describe('configuration documented', () => {
  it('reads the variables this test knows how to find', () => {
    // Guards the recorder itself: a parseConfig that stopped reading through the env object would pass the checks below vacuously.
    expect([...read]).toEqual(expect.arrayContaining(['PORT', 'QUERY_TIMEOUT_SECONDS', 'CLICKHOUSE_USER', 'HTTP_MAX_CONNECTIONS']));
  });

  it('documents every variable src/config.ts reads in docs/reference/configuration.md', () => {
    const doc = readFileSync(path.join(ROOT, CONFIGURATION), 'utf8');
    const missing = [...read].filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('lists every variable src/config.ts reads in .env.example (set or commented out)', () => {
    const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]));
    const missing = [...read].filter((name) => !listed.has(name));
    expect(missing).toEqual([]);
  });

  /**
   * Defaults the docs state, each set explicitly, configure the service as leaving it unset does: the tables of
   * the configuration (`VAR` | `default`, or `A` / `B` | `a` / `b`) and of the limits (`VAR` (default)) are written by hand.
   */
  it('states each default as src/config.ts has it', () => {
    const doc = [CONFIGURATION, LIMITS].map((page) => readFileSync(path.join(ROOT, page), 'utf8')).join('\n');
    const stated: [string, string][] = [];
    for (const [, a, b, va, vb] of doc.matchAll(/^\| `([A-Z0-9_]+)`(?: \/ `([A-Z0-9_]+)`)? \| `([^`]*)`(?: \/ `([^`]*)`)? \|/gm)) {
      stated.push([a, va]);
      if (b !== undefined && vb !== undefined) stated.push([b, vb]);
    }
    for (const [, name, value] of doc.matchAll(/\| `([A-Z0-9_]+)` \(([0-9][0-9,.]*)\)/g)) stated.push([name, value.replace(/,/g, '')]);
    // A default named by another variable or a placeholder (`CLICKHOUSE_USER`, `<CLICKHOUSE_DATABASE>_rollups`) is no literal value.
    const literal = stated.filter(([, value]) => !/^[A-Z][A-Z0-9_]+$|</.test(value));
    expect(literal.length).toBeGreaterThan(40);
    const unset = parseConfig({});
    const differing = literal.filter(([name, value]) => !isDeepStrictEqual(parseConfig({ [name]: value }), unset)).map(([name, value]) => `${name}=${value}`);
    expect(differing).toEqual([]);
  });
});
