import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * Work Cube 0.33 repeats for every uncached query though its result cannot
 * have changed since the last one, made once (0.1–0.7 ms of the main
 * thread a load, `npm run bench:phases`). Each replacement
 * returns what Cube's own function returns for the same input; each is a
 * member of a module Cube loads at the time of the call, patched once for the
 * process (test/unit/cube/cube-internals.test.ts lists them).
 */

const fromServerCore = createRequire(require.resolve('@cubejs-backend/server-core'));
/** The copies the gateway and the orchestrator use (nested copies of Cube's shared package differ by version). */
const fromGateway = createRequire(fromServerCore.resolve('@cubejs-backend/api-gateway'));
const fromOrchestrator = createRequire(fromServerCore.resolve('@cubejs-backend/query-orchestrator'));

type GetEnv = (key: string, opts?: unknown) => unknown;

/**
 * The gateway's getEnv reads made on every load, with the environment
 * variable each of them reads (@cubejs-backend/shared's env.js): each read
 * goes through env-var, which `require`s its accessors on every call (60–100
 * µs a read in the service, three reads a load).
 */
export const PER_LOAD_ENV: Readonly<Record<string, string>> = {
  devMode: 'CUBEJS_DEV_MODE',
  defaultApiScope: 'CUBEJS_DEFAULT_API_SCOPES',
};

/**
 * Cube's getEnv for PER_LOAD_ENV's keys, called again only when the
 * variable's text differs from the last call's: each is a function of that
 * text alone. A read that throws (a value Cube refuses) is not kept, so it
 * throws every time, as Cube's does. An array comes back as a copy, so a
 * caller changing it changes no later answer.
 */
export function envReadOncePerValue(getEnv: GetEnv): GetEnv {
  const kept = new Map<string, { text: string | undefined; value: unknown }>();
  return function perValue(key: string, opts?: unknown): unknown {
    const variable = PER_LOAD_ENV[key];
    if (variable === undefined || opts !== undefined) return getEnv(key, opts);
    const text = process.env[variable];
    let entry = kept.get(key);
    if (!entry || entry.text !== text) {
      entry = { text, value: getEnv(key) };
      kept.set(key, entry);
    }
    return Array.isArray(entry.value) ? [...(entry.value as unknown[])] : entry.value;
  };
}

/**
 * Cube's query orchestrator hashes a query's key (md5 of its JSON) some
 * thirteen times a load, mostly the same key objects. The JSON is still
 * made each time, and the hash reused only when it is the same text as the
 * one hashed for that object, so a key changed in place is hashed anew.
 */
export function hashOncePerKey(getCacheHash: (queryKey: unknown, processUid?: string) => string, processUidOf: () => string) {
  const hashed = new WeakMap<object, { json: string; md5: string }>();
  return function cacheHash(queryKey: unknown, processUid?: string): string {
    if (typeof queryKey !== 'object' || queryKey === null) return getCacheHash(queryKey, processUid);
    const json = JSON.stringify(queryKey);
    let entry = hashed.get(queryKey);
    if (!entry || entry.json !== json) {
      entry = { json, md5: createHash('md5').update(json).digest('hex') };
      hashed.set(queryKey, entry);
    }
    return (queryKey as { persistent?: unknown }).persistent ? `${entry.md5}@${processUid || processUidOf()}` : entry.md5;
  };
}

interface PromiseTimeout {
  timeout<T>(promise: Promise<T>, ms: number): Promise<T>;
  TimeoutError: new () => Error;
}

/**
 * promise-timeout's timeout, which Cube's OrchestratorApi puts around every
 * query (its continue-wait), with its TimeoutError made when the time is up
 * rather than before: the package makes one for every call and formats its
 * stack at once (140–230 µs a load), to throw it away when the query
 * answers first, as nearly every query does. The error is the same class
 * and message; its stack shows the timer instead of the caller.
 */
export function timeoutErrorWhenDue(TimeoutError: PromiseTimeout['TimeoutError']): PromiseTimeout['timeout'] {
  return function timeout<T>(promise: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const due = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new TimeoutError()), ms);
    });
    return Promise.race([promise, due]).then(
      (value) => {
        clearTimeout(timer);
        return value;
      },
      (err: unknown) => {
        clearTimeout(timer);
        throw err;
      },
    );
  };
}

let installed = false;

/** Puts the three in place of Cube's own, once for the process. */
export function makePerQueryWorkOnce(): void {
  if (installed) return;
  installed = true;
  const env = fromGateway('@cubejs-backend/shared/dist/src/env') as { getEnv: GetEnv };
  env.getEnv = envReadOncePerValue(env.getEnv);
  const utils = fromServerCore('@cubejs-backend/query-orchestrator/dist/src/orchestrator/utils') as {
    getCacheHash: (queryKey: unknown, processUid?: string) => string;
  };
  const { getProcessUid } = fromOrchestrator('@cubejs-backend/shared') as { getProcessUid: () => string };
  utils.getCacheHash = hashOncePerKey(utils.getCacheHash, getProcessUid);
  const promiseTimeout = fromServerCore('promise-timeout') as PromiseTimeout;
  promiseTimeout.timeout = timeoutErrorWhenDue(promiseTimeout.TimeoutError);
}
