import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { envReadOncePerValue, hashOncePerKey, makePerQueryWorkOnce, PER_LOAD_ENV, timeoutErrorWhenDue } from '../../../src/cube/engine/per-query-work';

// The copies the service's gateway and orchestrator load; Cube's own functions taken before the change.
const fromServerCore = createRequire(require.resolve('@cubejs-backend/server-core'));
const fromGateway = createRequire(fromServerCore.resolve('@cubejs-backend/api-gateway'));
const fromOrchestrator = createRequire(fromServerCore.resolve('@cubejs-backend/query-orchestrator'));
type GetEnv = (key: string, opts?: unknown) => unknown;
const env = fromGateway('@cubejs-backend/shared/dist/src/env') as { getEnv: GetEnv };
const utils = fromServerCore('@cubejs-backend/query-orchestrator/dist/src/orchestrator/utils') as { getCacheHash: (key: unknown, uid?: string) => string };
const promiseTimeout = fromServerCore('promise-timeout') as { timeout<T>(p: Promise<T>, ms: number): Promise<T>; TimeoutError: new () => Error };
const cubeGetEnv = env.getEnv;
const cubeHash = utils.getCacheHash;
const cubeTimeout = promiseTimeout.timeout;
const { getProcessUid } = fromOrchestrator('@cubejs-backend/shared') as { getProcessUid: () => string };

/** What a call gives: its answer, or the error it throws (class and message). */
function outcome(run: () => unknown): unknown {
  try {
    return { answer: run() };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

describe("Cube's env reads of every load (envReadOncePerValue)", () => {
  const saved = Object.fromEntries(Object.values(PER_LOAD_ENV).map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  // Texts Cube reads differently: unset, empty, its booleans, ones it refuses, lists with spaces and empty items.
  const texts = [undefined, '', 'true', 'false', 'TRUE', 'yes', '1', 'data', 'meta,data', ' meta , data ', 'graphql,,meta', ','];

  it('answers as Cube’s getEnv after any sequence of changes to the variables, throwing when Cube throws', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...Object.keys(PER_LOAD_ENV)), fc.constantFrom(...texts), fc.boolean()), { minLength: 1, maxLength: 30 }),
        (steps) => {
          const ours = envReadOncePerValue(cubeGetEnv);
          for (const [key, text, change] of steps) {
            const variable = PER_LOAD_ENV[key];
            if (change) {
              if (text === undefined) delete process.env[variable];
              else process.env[variable] = text;
            }
            expect(outcome(() => ours(key))).toStrictEqual(outcome(() => cubeGetEnv(key)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives each caller its own list, and passes other keys and calls with options to Cube', () => {
    process.env.CUBEJS_DEFAULT_API_SCOPES = 'meta,data';
    const ours = envReadOncePerValue(cubeGetEnv);
    (ours('defaultApiScope') as string[]).push('graphql');
    expect(ours('defaultApiScope')).toStrictEqual(['meta', 'data']);
    process.env.CUBEJS_DB_QUERY_DEFAULT_LIMIT = '77';
    expect(ours('dbQueryDefaultLimit')).toBe(cubeGetEnv('dbQueryDefaultLimit'));
    process.env.CUBEJS_DB_QUERY_DEFAULT_LIMIT = '78';
    expect(ours('dbQueryDefaultLimit')).toBe(78);
    delete process.env.CUBEJS_DB_QUERY_DEFAULT_LIMIT;
    expect(outcome(() => ours('noSuchVariable'))).toStrictEqual(outcome(() => cubeGetEnv('noSuchVariable')));
  });

  it('names the variable each key reads in Cube’s own env.js', () => {
    const source = readFileSync(fromGateway.resolve('@cubejs-backend/shared/dist/src/env'), 'utf8');
    for (const [key, variable] of Object.entries(PER_LOAD_ENV)) expect(source).toContain(`${key}: () => (0, env_var_1.get)('${variable}')`);
  });
});

describe("Cube's query-key hash (hashOncePerKey)", () => {
  const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });
  const keys = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.array(json, { maxLength: 4 }),
    fc.record({ persistent: fc.boolean(), sql: fc.string(), values: fc.array(fc.string(), { maxLength: 3 }) }),
    fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 4 }),
  );

  it('hashes every key as Cube does, the same objects again and after they changed in place', () => {
    fc.assert(
      fc.property(
        fc.array(keys, { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.option(fc.uuid(), { nil: undefined }), json), { maxLength: 20 }),
        (generated, uses) => {
          // Changed in place below: a copy, so fast-check's own values stay as it made them.
          const made = structuredClone(generated);
          const ours = hashOncePerKey(cubeHash, getProcessUid);
          for (const key of made) expect(ours(key)).toBe(cubeHash(key));
          for (const [at, uid, value] of uses) {
            const key = made[at % made.length];
            // Every other use changes an object key in place first.
            if (at % 2 === 1 && typeof key === 'object' && key !== null) {
              if (Array.isArray(key)) key.push(value);
              else (key as Record<string, unknown>).changed = value;
            }
            expect(ours(key, uid)).toBe(cubeHash(key, uid));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the continue-wait timeout around each query (timeoutErrorWhenDue)', () => {
  const ours = timeoutErrorWhenDue(promiseTimeout.TimeoutError);
  const settled = (promise: Promise<unknown>) =>
    promise.then(
      (value) => ({ value }),
      (err: unknown) => ({ error: err instanceof promiseTimeout.TimeoutError ? 'TimeoutError' : String(err), message: (err as Error).message }),
    );

  it.each([
    ['resolves with the query’s answer', () => new Promise((resolve) => setTimeout(() => resolve([{ n: 1 }]), 5)), 200],
    ['rejects with the query’s error', () => new Promise((_r, reject) => setTimeout(() => reject(new Error('boom')), 5)), 200],
    // A query that never answers: one that answered later raced promise-timeout, which makes its error (stack
    // formatted, source maps under jest) before it sets its timer, and once took longer than the query's 200 ms.
    ['rejects with a TimeoutError when the time is up first', () => new Promise(() => undefined), 5],
    ['answers a settled promise at once', () => Promise.resolve('now'), 0],
  ])('%s, as promise-timeout does', async (_name, query, ms) => {
    expect(await settled(ours(query(), ms))).toStrictEqual(await settled(cubeTimeout(query(), ms)));
  });

  it('leaves no timer behind once the query answered', async () => {
    const before = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    await ours(Promise.resolve(1), 60_000);
    await ours(Promise.reject(new Error('x')), 60_000).catch(() => undefined);
    expect(process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length).toBe(before);
  });
});

describe('makePerQueryWorkOnce', () => {
  it('replaces the functions the gateway, the orchestrator and OrchestratorApi call, once', () => {
    makePerQueryWorkOnce();
    const replaced = [env.getEnv, utils.getCacheHash, promiseTimeout.timeout];
    makePerQueryWorkOnce();
    expect([env.getEnv, utils.getCacheHash, promiseTimeout.timeout]).toStrictEqual(replaced);
    expect(replaced).not.toContain(cubeGetEnv);
    expect(replaced).not.toContain(cubeHash);
    expect(replaced).not.toContain(cubeTimeout);
    // As Cube's modules reach them: the gateway through its copy of shared's index, the queue drivers through ./utils.
    expect((fromGateway('@cubejs-backend/shared') as { getEnv: GetEnv }).getEnv).toBe(env.getEnv);
    const baseQueueDriver = fromServerCore('@cubejs-backend/query-orchestrator/dist/src/orchestrator/BaseQueueDriver') as {
      BaseQueueDriver: new () => { redisHash(key: unknown): string };
    };
    const key = ['SELECT 1', []];
    expect(new baseQueueDriver.BaseQueueDriver().redisHash(key)).toBe(cubeHash(key));
  });

  it('is reached as Cube’s modules call them: through their module objects at the time of the call', () => {
    const source = (module: string) => readFileSync(fromServerCore.resolve(module), 'utf8');
    expect(source('@cubejs-backend/server-core/dist/src/core/OrchestratorApi')).toContain('promise_timeout_1.default.timeout(');
    expect(source('@cubejs-backend/api-gateway/dist/src/gateway')).toContain("(0, shared_1.getEnv)('devMode')");
    expect(source('@cubejs-backend/api-gateway/dist/src/gateway')).toContain("(0, shared_1.getEnv)('defaultApiScope')");
    expect(source('@cubejs-backend/query-orchestrator/dist/src/orchestrator/QueryCache')).toContain('(0, utils_1.getCacheHash)(');
  });
});
