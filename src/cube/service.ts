import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { CubejsServerCore, type CreateOptions } from '@cubejs-backend/server-core';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Warehouse } from '../warehouse/connection';
import { WarehouseClickHouseQuery } from './dialect';
import { createDriverFactory } from './driver';
import { cubeLoadWithoutDescriptions, cubeMetaWithoutDescriptions } from './cube-api-shapes';
import { classifyGatewayError, CubeFailure, type GatewayError } from './errors';
import { ResultCache } from './result-cache';
import { asksRenewal, cacheKey, refreshedAt } from './result-key';
import { restoreNativeStackTraces, reuseVisibleMeta } from './request-path';
import { guardBlending, guardQuery, memberKindsOf, type MemberKinds } from './query-guard';
import { toLoadResult, toMultiLoadResult, toSchema, type LoadResult, type MultiLoadResult, type Schema } from './shapes';

/**
 * The only code that talks to Cube. It creates Cube's server core around our
 * warehouse and calls its API gateway's `meta` and `load` directly, so the
 * HTTP layer, not Cube's JWT middleware, decides who gets in.
 */
export interface CubeService {
  meta(context: RequestContext): Promise<Schema[]>;
  /** One regular query, answered in the documented shape (spec 2.5). */
  load(query: Query, context: RequestContext): Promise<LoadResult>;
  /** Any query Cube accepts, including compareDateRange and arrays of queries, as Cube's clients expect it. */
  loadMulti(query: Query | Query[], context: RequestContext): Promise<MultiLoadResult>;
  /** Cube's own REST API (/cubejs-api/v1): Cube's meta, `{ cubes }`. */
  cubeMeta(context: RequestContext): Promise<{ cubes: Record<string, unknown>[] }>;
  /**
   * Cube's load answer. Only `multi` answers compareDateRange queries and
   * arrays of queries (Cube's multi shape); otherwise Cube's single result.
   */
  cubeLoad(query: Query | Query[], multi: boolean, context: RequestContext): Promise<Record<string, unknown>>;
  /** The SQL and parameters Cube generates for the query under the context's account; nothing runs. */
  sql(query: Query | Query[], context: RequestContext): Promise<unknown>;
  /** Cube's normalized queries, query type and pivot query; nothing runs. */
  dryRun(query: Query | Query[], context: RequestContext): Promise<unknown>;
  close(): Promise<void>;
}

export type Query = Record<string, unknown>;

export interface RequestContext {
  requestId: string;
  /**
   * The account whose rows the query may read, or null for an operator,
   * who reads every account. Cube puts it in the SQL it generates (the
   * models' SECURITY_CONTEXT.accountId filters), and its SQL and result
   * caches are keyed by it.
   */
  accountId: string | null;
}

export interface CubeServiceOptions {
  warehouse: Warehouse;
  query: Config['query'];
  logger: Logger;
  /** Folder of model files; the repository's schema/ by default. */
  schemaPath?: string;
  /** Seconds one gateway call waits before Cube answers "Continue wait". */
  continueWaitSeconds?: number;
  /**
   * Names the compiled models; kept answers are keyed by it, so a reload that
   * changes it stops older answers from being served. Constant by default:
   * the models are compiled once per process.
   */
  modelsVersion?: () => string;
}

export const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'schema');

type Reply = { body: any; status: number };

/** Cube keeps its gateway accessor protected; this is the one place that opens it. */
class Core extends CubejsServerCore {
  gateway() {
    return this.apiGateway();
  }
}

export function createCubeService(options: CubeServiceOptions): CubeService {
  const { warehouse, query: limits, logger } = options;
  // Cube 0.33 reads its row limits from the environment only.
  process.env.CUBEJS_DB_QUERY_LIMIT = String(limits.maxLimit);
  process.env.CUBEJS_DB_QUERY_DEFAULT_LIMIT = String(limits.defaultLimit);

  const core = new Core({
    dbType: 'clickhouse',
    // Cube joins schemaPath to the working directory, whatever its form.
    schemaPath: path.relative(process.cwd(), options.schemaPath ?? SCHEMA_PATH),
    // The 1.7 driver brings a newer copy of Cube's BaseDriver than 0.33's
    // typings know; the two agree at run time.
    driverFactory: createDriverFactory(warehouse, limits) as unknown as CreateOptions['driverFactory'],
    // Cube calls dialectFactory for a dialect class; its typings say instance.
    dialectFactory: (() => WarehouseClickHouseQuery) as unknown as CreateOptions['dialectFactory'],
    // Never checked: requests reach the gateway's methods, not its routes.
    apiSecret: randomBytes(32).toString('hex'),
    devServer: false,
    telemetry: false,
    cacheAndQueueDriver: 'memory',
    scheduledRefreshTimer: false,
    // Cube 0.33 validates and uses continueWaitTimeout here; its typings omit it.
    orchestratorOptions: { continueWaitTimeout: options.continueWaitSeconds ?? 5 } as CreateOptions['orchestratorOptions'],
    logger: (message: string, params: Record<string, unknown>) => logger.debug(`cube: ${message}`, params),
  });
  const gateway = core.gateway();
  const cache = new ResultCache(limits.resultCache);
  const modelsVersion = options.modelsVersion ?? (() => '');
  reuseVisibleMeta(gateway);
  restoreNativeStackTraces();

  const call = (method: 'meta' | 'load' | 'sql' | 'dryRun', args: Record<string, unknown>, context: RequestContext) =>
    new Promise<Reply>((resolve, reject) => {
      const request = {
        ...args,
        context: { securityContext: securityContextOf(context), requestId: context.requestId },
        res: (body: unknown, opts?: { status?: number }) => resolve({ body, status: opts?.status ?? 200 }),
      };
      (gateway[method] as (r: typeof request) => Promise<void>)(request).catch(reject);
    });

  const failed = (reply: Reply): CubeFailure | undefined =>
    reply.status === 200 && !reply.body?.error ? undefined : classifyGatewayError(reply.status, reply.body as GatewayError);

  /**
   * Cube answers "Continue wait" while a query is still running; the query
   * keeps running in Cube's queue, so asking again picks it up. Clients
   * never see "Continue wait": we ask again until the query timeout.
   */
  const loadUntilDone = async (args: Record<string, unknown>, context: RequestContext): Promise<any> => {
    const deadline = Date.now() + limits.timeoutMs;
    for (;;) {
      const reply = await call('load', args, context);
      if (reply.status === 200 && reply.body?.error === 'Continue wait') {
        if (Date.now() >= deadline) {
          throw new CubeFailure('query_timeout', `The query did not finish within ${limits.timeoutMs / 1000} s.`);
        }
        continue;
      }
      const failure = failed(reply);
      if (failure) throw failure;
      return reply.body;
    }
  };

  const meta = async (context: RequestContext): Promise<Schema[]> => {
    const reply = await call('meta', {}, context);
    const failure = failed(reply);
    if (failure) throw failure;
    const cubes: Record<string, unknown>[] = reply.body.cubes;
    return cubes.map(toSchema).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  // The models are compiled once per process, so their members are read once.
  let kinds: Promise<MemberKinds> | undefined;
  const memberKinds = (context: RequestContext) =>
    (kinds ??= meta(context).then(memberKindsOf, (err: unknown) => {
      kinds = undefined;
      throw err;
    }));
  const check = async (queries: Query[], context: RequestContext) => {
    const known = await memberKinds(context);
    for (const query of queries) {
      checkTimezone(query);
      guardQuery(query, known);
    }
  };

  /** A query of Cube's own API is checked as /v1 checks its queries. */
  const checkCubeQuery = async (query: Query | Query[], context: RequestContext) => {
    await check(Array.isArray(query) ? query : [query], context);
    if (Array.isArray(query)) guardBlending(query);
  };

  /** sql and dryRun only compile and generate SQL, so Cube never answers them "Continue wait". */
  const generate = async (method: 'sql' | 'dryRun', query: Query | Query[], context: RequestContext): Promise<unknown> => {
    await checkCubeQuery(query, context);
    const reply = await call(method, { query }, context);
    const failure = failed(reply);
    if (failure) throw failure;
    return reply.body;
  };

  /** Loads Cube is answering now for a missed key: later requests for the key wait for the same answer. */
  const pending = new Map<string, Promise<unknown>>();

  /**
   * Answers a load from the result cache when it holds one for the same key,
   * else from Cube, keeping Cube's answer. renewQuery asks Cube itself.
   */
  const throughCache = async <T>(route: string, query: Query | Query[], context: RequestContext, compute: () => Promise<T>): Promise<T> => {
    const key = cache.enabled ? cacheKey(route, query, context, modelsVersion()) : undefined;
    if (key === undefined) return compute();
    const renew = asksRenewal(query);
    if (!renew) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit as T;
      const waiting = pending.get(key);
      if (waiting !== undefined) return waiting as Promise<T>;
    }
    const answer = compute().then((result) => {
      const computedAt = refreshedAt(result);
      if (computedAt !== undefined) cache.set(key, result, computedAt, JSON.stringify(result).length);
      return result;
    });
    if (renew) return answer;
    pending.set(key, answer);
    try {
      return await answer;
    } finally {
      pending.delete(key);
    }
  };

  return {
    meta,

    load: async (query, context) => {
      await check([query], context);
      return throughCache('v1', query, context, async () => toLoadResult(await loadUntilDone({ query }, context), query));
    },

    loadMulti: async (query, context) => {
      await check(Array.isArray(query) ? query : [query], context);
      if (Array.isArray(query)) guardBlending(query);
      return throughCache('v1 multi', query, context, async () => toMultiLoadResult(await loadUntilDone({ query, queryType: 'multi' }, context), query));
    },

    cubeMeta: async (context) => {
      const reply = await call('meta', {}, context);
      const failure = failed(reply);
      if (failure) throw failure;
      return cubeMetaWithoutDescriptions(reply.body);
    },

    cubeLoad: async (query, multi, context) => {
      if (!multi && (Array.isArray(query) || hasCompareDateRange(query))) {
        throw new CubeFailure('invalid_query', 'Arrays of queries and compareDateRange queries need queryType "multi".');
      }
      await checkCubeQuery(query, context);
      return throughCache(multi ? 'cubejs multi' : 'cubejs', query, context, async () =>
        cubeLoadWithoutDescriptions(await loadUntilDone({ query, ...(multi ? { queryType: 'multi' } : {}) }, context)),
      );
    },

    sql: (query, context) => generate('sql', query, context),

    dryRun: (query, context) => generate('dryRun', query, context),

    close: () => core.shutdown(),
  };
}

function hasCompareDateRange(query: Query): boolean {
  const { timeDimensions } = query;
  return Array.isArray(timeDimensions) && timeDimensions.some((td) => typeof td === 'object' && td !== null && 'compareDateRange' in td);
}

function securityContextOf({ accountId }: RequestContext): { accountId?: string } {
  if (accountId === null) return {};
  // An empty id would make the models' filter a no-op, i.e. every account.
  if (accountId === '') throw new Error('refusing a query with an empty account id');
  return { accountId };
}

/**
 * Cube 0.33 takes any string as `timezone` and leaves it to the database,
 * which fails the query as if it were our fault; a name the IANA database
 * does not know is the client's mistake.
 */
function checkTimezone(query: Query): void {
  const { timezone } = query;
  if (typeof timezone !== 'string') return;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new CubeFailure('invalid_query', `Unknown time zone ${JSON.stringify(timezone)}: expected an IANA name such as "America/New_York".`);
  }
}
