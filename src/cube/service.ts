import path from 'node:path';
import { modelMembersOf, type ModelMembers } from '../query/members';
import { admitQueries, refuseMultiOnly } from '../query/admit';
import { pagingOf, withNumericPaging } from '../query/paging';
import { cubeCacheObserver, createCacheFront } from './cache-front';
import { cubeLoadWithoutDescriptions, cubeMetaWithoutDescriptions } from './cube-api-shapes';
import { BoundedCacheDriver } from './engine/cache-driver';
import { createFreshness } from './freshness';
import { funnelStepsSql } from './funnel-steps';
import { warmGeoAtStart } from '../warehouse/geo/load';
import { createEngine, type GatewayMethod, type GatewayReply } from './engine/core';
import { createDriverFactory } from './engine/driver';
import { classifyGatewayError, type GatewayError } from './errors';
import { createModelEngine } from './models/engine';
import { createModels, type ModelContext } from './models/models';
import type { GeneratedSql } from './models/validate';
import { loadTimer } from './query-metrics';
import { toLoadResult, toMultiLoadResult, toSchema, type Schema } from './shapes';
import { Tickets } from './tickets';
import type { CubeService, CubeServiceOptions, Query, RequestContext } from './types';
import { dropExtraRows, markTruncation, queriesWithOneMoreRow, withOneMoreRow, withTruncatedField } from './truncation';

export type { CubeService, CubeServiceOptions, Query, RequestContext } from './types';

export const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'schema');

/**
 * Runs admitted queries through Cube (src/cube/engine/, the one folder that
 * knows Cube's internals): the request's ticket and timings, the result
 * cache, the answers reshaped to the spec's and Cube's clients' shapes, and
 * Cube's errors classified. Admission itself is src/query/'s; the gateway's
 * `meta` and `load` are called directly, so the HTTP layer, not Cube's JWT
 * middleware, decides who gets in.
 */
export function createCubeService(options: CubeServiceOptions): CubeService {
  const { warehouse, query: limits, logger, metrics } = options;
  const { timings } = metrics;
  const observeCache = cubeCacheObserver(metrics);
  const tickets = new Tickets();
  const driverFactory = createDriverFactory(
    warehouse,
    // The row asked for beyond a query's limit is ours, not the client's (truncation.ts checks the rest).
    { ...limits, maxResultRows: limits.maxResultRows + 1 },
    (requestId) => tickets.ticketOf(requestId),
    (requestId, ms) => {
      const timing = timings.of(requestId);
      if (timing) timing.warehouseMs += ms;
    },
    options.rollupBuildLimits,
  );
  // Validation reads the catalog (system.columns, EXPLAIN), which clients'
  // row limit has nothing to do with: read-only still, but no row cap (0).
  const validationDriver = createDriverFactory(warehouse, { ...limits, maxResultRows: 0 }, () => undefined)();
  const models = createModels({
    dir: path.resolve(options.schemaPath ?? SCHEMA_PATH),
    watch: options.watchModels ?? false,
    pollMs: options.modelsPollMs,
    logger,
    engine: createModelEngine({
      compilerApi: (modelVersion) => engine.compilerApi(modelVersion),
      generateSql: (modelVersion, query, accountId) => generateSql(query, { requestId: `models-${modelVersion}`, accountId }, modelVersion),
      query: (sql, params) => validationDriver.query(sql, params),
    }),
  });

  const engine = createEngine({
    warehouse,
    driverFactory,
    cacheDriver: new BoundedCacheDriver(limits.cubeCacheMaxBytes, (bytes) => metrics.cubeCacheBytes.set(bytes)),
    models: { appIdOf: (context) => models.appIdOf(context as ModelContext), repositoryOf: (context) => models.repositoryOf(context as ModelContext) },
    // Cube is asked for one row more than a client may (truncation.ts), and the client's maximum is held there.
    rowLimits: { maxLimit: limits.maxLimit + 1, defaultLimit: limits.defaultLimit },
    sqlPlans: limits.cubeSqlPlans,
    continueWaitSeconds: options.continueWaitSeconds ?? 5,
    funnelSteps: funnelStepsSql(options.funnel),
    rollupRefreshSeconds: options.rollupRefreshSeconds,
    refreshContexts: async () => {
      // The worker's first run waits for the start's catch-up: run beside it, both would build the same rollups.
      await freshness.caughtUp;
      await models.ready();
      return [{ securityContext: {} }, ...(await accountIds()).map((accountId) => ({ securityContext: { accountId } }))];
    },
    log: (message, params) => {
      observeCache(message, params);
      logger.debug(`cube: ${message}`, params);
    },
  });
  const accountIds = async () => {
    const accounts = await validationDriver.query<{ account_id: string }>('SELECT DISTINCT account_id FROM downloads ORDER BY account_id', []);
    // An empty id would mean every account, which the operator's context already is.
    return accounts.map((row) => row.account_id).filter((id) => id !== '');
  };
  const cacheFront = createCacheFront(limits.resultCache, metrics, () => models.version());
  const throughCache = cacheFront.through;
  const forgetAnswers = () => {
    cacheFront.dataChanged();
    engine.forgetCachedResults();
  };

  const freshness = createFreshness({
    modelsReady: () => models.ready(),
    refreshRollups: (accounts) => engine.refreshRollups(accounts),
    accountIds,
    forgetAnswers,
    logger,
  });
  // The IP database's dictionaries are built before ready, not by the first import or query that reads places (npm start
  // has built them before it serves: this builds them for a ClickHouse server and for the tests' and benchmarks' services).
  const caughtUp = Promise.all([freshness.caughtUp, warmGeoAtStart(warehouse, logger)]).then(() => undefined);

  // A request is answered by the models serving when it arrives, whatever reloads meanwhile.
  const call = async (method: GatewayMethod, args: Record<string, unknown>, context: RequestContext, modelVersion?: string) => {
    const version = modelVersion ?? (await models.version());
    const started = performance.now();
    try {
      return await engine.call(method, args, { securityContext: securityContextOf(context), requestId: context.requestId, modelVersion: version });
    } finally {
      const timing = timings.of(context.requestId);
      if (timing) timing.cubeMs += performance.now() - started;
    }
  };

  /** The reply's body, or Cube's error classified and thrown. */
  const bodyOf = (reply: GatewayReply): any => {
    if (reply.status === 200 && !reply.body?.error) return reply.body;
    throw classifyGatewayError(reply.status, reply.body as GatewayError);
  };

  /**
   * Cube answers "Continue wait" while a query is still running; the query
   * keeps running in Cube's queue, so asking again picks it up. Clients
   * never see "Continue wait": we ask again until the load's ticket aborts
   * (query timeout, shutdown).
   */
  const loadUntilDone = async (args: Record<string, unknown>, context: RequestContext): Promise<any> => {
    const issued = tickets.issue(context.requestId, context.lane ?? 'unnamed', limits.timeoutMs);
    try {
      return await Promise.race([caughtUp.then(() => askUntilAnswered(args, context, issued.signal)), issued.aborted]);
    } finally {
      issued.end();
    }
  };
  const askUntilAnswered = async (args: Record<string, unknown>, context: RequestContext, signal: AbortSignal): Promise<any> => {
    for (;;) {
      // The answer went out already; stop asking Cube for it.
      if (signal.aborted) throw signal.reason;
      const reply = await call('load', args, context);
      if (reply.status === 200 && reply.body?.error === 'Continue wait') continue;
      return bodyOf(reply);
    }
  };

  const meta = async (context: RequestContext): Promise<Schema[]> => {
    const version = await models.version();
    const cubes: Record<string, unknown>[] = bodyOf(await call('meta', {}, context, version)).cubes;
    const out = models.unavailable(version);
    return cubes.map((cube) => offered(toSchema(cube), out)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  const generateSql = async (query: Query, context: RequestContext, modelVersion?: string): Promise<GeneratedSql> => {
    const [sql, params] = bodyOf(await call('sql', { query }, context, modelVersion)).sql.sql as [string, unknown[]];
    return { sql, params };
  };

  // Members are read once per model version: a reload brings new ones.
  let members: { version: string; members: Promise<ModelMembers> } | undefined;
  // The serving models' cubes, the only values the query metrics' cube label takes.
  let cubeNames: ReadonlySet<string> = new Set();
  const timed = loadTimer(metrics.queryDuration, () => cubeNames);
  const modelMembers = async (context: RequestContext) => {
    const version = await models.version();
    if (members?.version !== version) {
      const read = Promise.all([meta(context), engine.keyedCubes(version)]).then(([schemas, keyed]) => {
        cubeNames = new Set(schemas.map((schema) => schema.name));
        return { ...modelMembersOf(schemas), unavailable: models.unavailable(version), keyed };
      });
      members = { version, members: read };
      read.catch(() => {
        if (members?.members === read) members = undefined;
      });
    }
    return members.members;
  };
  /** One query, or an array of them to blend: admitted the same way on both APIs. */
  const check = async (query: Query | Query[], context: RequestContext) => admitQueries(query, await modelMembers(context));

  /** sql and dryRun only compile and generate SQL, so Cube never answers them "Continue wait". */
  const generate = async (method: 'sql' | 'dryRun', sent: Query | Query[], context: RequestContext): Promise<unknown> => {
    const query = pagingOf(sent);
    await check(query, context);
    return bodyOf(await call(method, { query }, context));
  };

  return {
    meta,

    load: (sent, context) => {
      refuseMultiOnly(sent);
      const query = withNumericPaging(sent);
      return timed([query], async () => {
        await check(query, context);
        return throughCache('v1', query, context, async () => {
          const { body, truncated } = dropExtraRows(await loadUntilDone({ query: withOneMoreRow(query, limits) }, context), limits);
          return markTruncation(toLoadResult(body, query), truncated);
        });
      });
    },

    loadMulti: (sent, context) => {
      const query = pagingOf(sent);
      return timed(Array.isArray(query) ? query : [query], async () => {
        await check(query, context);
        return throughCache('v1 multi', query, context, async () => {
          const { body, truncated } = dropExtraRows(await loadUntilDone({ query: queriesWithOneMoreRow(query, limits), queryType: 'multi' }, context), limits);
          return markTruncation(toMultiLoadResult(body, query), truncated);
        });
      });
    },

    cubeMeta: async (context) => {
      const version = await models.version();
      const out = models.unavailable(version);
      const { cubes } = cubeMetaWithoutDescriptions(bodyOf(await call('meta', {}, context, version)));
      return { cubes: cubes.map((cube) => offered(cube, out)) };
    },

    cubeLoad: async (sent, multi, context) => {
      const query = pagingOf(sent);
      if (!multi) refuseMultiOnly(query);
      return timed(Array.isArray(query) ? query : [query], async () => {
        await check(query, context);
        return throughCache(multi ? 'cubejs multi' : 'cubejs', query, context, async () => {
          const sent = { query: queriesWithOneMoreRow(query, limits), ...(multi ? { queryType: 'multi' } : {}) };
          const { body, truncated } = dropExtraRows(await loadUntilDone(sent, context), limits);
          return markTruncation(withTruncatedField(cubeLoadWithoutDescriptions(body), truncated), truncated);
        });
      });
    },

    sql: (query, context) => generate('sql', query, context),

    dryRun: (query, context) => generate('dryRun', query, context),

    exportSql: async (sent, limit, context) => {
      const query = withNumericPaging(sent);
      await check(query, context);
      await caughtUp;
      return engine.exportSql(
        { ...query, limit },
        { securityContext: securityContextOf(context), requestId: context.requestId, modelVersion: await models.version() },
      );
    },

    refuseNotStarted: () => tickets.refuseNotStarted(),

    dataChanged: (changes) => freshness.dataChanged(changes),

    caughtUp: () => caughtUp,

    models: {
      ready: () => models.ready(),
      compiled: () => models.compiled(),
      warnings: () => models.warnings(),
      sql: (query, context) => generateSql(query, context),
    },

    close: async () => {
      freshness.stop();
      await engine.stopRefreshWorker();
      models.close();
      await validationDriver.release();
      await engine.shutdown();
    },
  };
}

/** A cube without the members the models' checks found cannot be queried (models/validate.ts): they are not offered. */
function offered<C extends { measures?: { name: string }[]; dimensions?: { name: string }[] }>(cube: C, unavailable: ReadonlyMap<string, string>): C {
  if (unavailable.size === 0) return cube;
  const keep = (members?: { name: string }[]) => members?.filter((member) => !unavailable.has(member.name));
  return { ...cube, measures: keep(cube.measures), dimensions: keep(cube.dimensions) };
}

function securityContextOf({ accountId }: RequestContext): { accountId?: string } {
  if (accountId === null) return {};
  // An empty id would make the models' filter a no-op, i.e. every account.
  if (accountId === '') throw new Error('refusing a query with an empty account id');
  return { accountId };
}
