import { quoteIdentifier } from '../warehouse/sql';
import { warmGeoAtStart } from '../warehouse/geo/load';
import { cubeCacheObserver, createCacheFront } from './cache-front';
import { cubeMetaWithoutDescriptions } from './cube-api-shapes';
import { supersededBuilds } from './engine/build-stamps';
import { resolveDateRange } from './engine/date-parser';
import { createFreshness } from './freshness';
import { createGateway, securityContextOf, type Gateway } from './gateway';
import { InFlight } from './in-flight';
import { createLoads } from './loads';
import { servingMembers } from './model-members';
import type { Models } from './models/models';
import type { GeneratedSql } from './models/validate';
import { queryTimers } from './query-metrics';
import { openRuntime } from './runtime';
import { toSchema, type Schema } from './shapes';
import type { CubeService, CubeServiceOptions, Query, RequestScope } from './types';

export type { CubeService, CubeServiceOptions, Query, RequestScope } from './types';

/**
 * Runs admitted queries through Cube (src/cube/engine/, the one folder that
 * knows Cube's internals): each under its request's scope, through the
 * result cache, the answers reshaped to the spec's and Cube's clients'
 * shapes, Cube's errors classified. Admission itself is src/query/'s, by the
 * serving models this lends it; the gateway's methods are called directly,
 * so the HTTP layer, not Cube's JWT middleware, decides who gets in.
 */
export function createCubeService(options: CubeServiceOptions): CubeService {
  const { warehouse, query: limits, logger, metrics } = options;
  const inFlight = new InFlight();
  const observeCache = cubeCacheObserver(metrics, (requestId) => inFlight.of(requestId)?.timing);
  const runtime = openRuntime(options, {
    loadOf: (requestId) => inFlight.of(requestId),
    generateSql: (query, scope, modelVersion) => generateSql(gateway, query, scope, modelVersion),
    caughtUp: () => freshness.caughtUp,
    log: (message, params) => {
      observeCache(message, params);
      logger.debug(`cube: ${message}`, params);
    },
  });
  const { engine, models } = runtime;
  const cacheFront = createCacheFront(limits.resultCache, metrics, () => models.version());
  const freshness = createFreshness({
    modelsReady: () => models.ready(),
    refreshRollups: (accounts) => engine.refreshRollups(accounts),
    accountIds: runtime.accountIds,
    forgetAnswers: () => {
      cacheFront.dataChanged();
      engine.forgetCachedResults();
    },
    logger,
  });
  // The IP database's dictionaries are built before ready, not by the first import or query that reads places (npm start
  // has built them before it serves: this builds them for a ClickHouse server and for the tests' and benchmarks' services).
  const caughtUp = Promise.all([freshness.caughtUp, warmGeoAtStart(warehouse, logger)]).then(() => undefined);
  const gateway = createGateway(engine, models, inFlight, caughtUp);
  const members = servingMembers(
    models,
    (version) => meta(gateway, models, { requestId: `members-${version}`, accountId: null }),
    (version) => engine.keyedCubes(version),
  );

  return {
    admissionModel: { members: members.members, readDateRange: resolveDateRange },
    queryTimer: queryTimers(metrics.queryDuration, members.cubeNames),
    meta: (scope) => meta(gateway, models, scope),
    ...createLoads(gateway, cacheFront.through, limits),
    cubeMeta: async (scope) => {
      const version = await models.version();
      const out = models.unavailable(version);
      const { cubes } = cubeMetaWithoutDescriptions(await gateway.body('meta', {}, scope, version));
      return { cubes: cubes.map((cube) => offered(cube, out)) };
    },
    // sql and dryRun only compile and generate SQL, so Cube never answers them "Continue wait".
    sql: (query, scope) => gateway.body('sql', { query }, scope),
    dryRun: (query, scope) => gateway.body('dryRun', { query }, scope),
    exportSql: async (query, limit, scope) => {
      await caughtUp;
      const context = { securityContext: securityContextOf(scope), requestId: scope.requestId, modelVersion: await models.version() };
      return engine.exportSql({ ...query, limit }, context);
    },
    refuseNotStarted: () => inFlight.refuseNotStarted(),
    dataChanged: (changes) => freshness.dataChanged(changes),
    dropSupersededRollups: async () => {
      // As the rollup builds' user: the one that may drop tables of the rollup database.
      const client = warehouse.rollupClient({ ...limits, ...options.rollupBuildLimits });
      const database = warehouse.config.rollupDatabase;
      try {
        const result = await client.query({
          query: 'SELECT name FROM system.tables WHERE database = {database:String}',
          query_params: { database },
          format: 'JSONEachRow',
        });
        const superseded = supersededBuilds((await result.json<{ name: string }>()).map((t) => t.name));
        for (const name of superseded) await client.command({ query: `DROP TABLE IF EXISTS ${quoteIdentifier(database)}.${quoteIdentifier(name)} SYNC` });
        return superseded.length;
      } finally {
        await client.close();
      }
    },
    caughtUp: () => caughtUp,
    models: {
      ready: () => models.ready(),
      compiled: () => models.compiled(),
      warnings: () => models.warnings(),
      sql: (query, scope) => generateSql(gateway, query, scope),
    },
    close: async () => {
      freshness.stop();
      await runtime.close();
    },
  };
}

/** The spec's meta: the serving models' cubes in its shape, by name, without the members that cannot be queried. */
async function meta(gateway: Gateway, models: Models, scope: RequestScope): Promise<Schema[]> {
  const version = await models.version();
  const cubes: Record<string, unknown>[] = (await gateway.body('meta', {}, scope, version)).cubes;
  const out = models.unavailable(version);
  return cubes.map((cube) => offered(toSchema(cube), out)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function generateSql(gateway: Gateway, query: Query, scope: RequestScope, modelVersion?: string): Promise<GeneratedSql> {
  const [sql, params] = (await gateway.body('sql', { query }, scope, modelVersion)).sql.sql as [string, unknown[]];
  return { sql, params };
}

/** A cube without the members the models' checks found cannot be queried (models/validate.ts): they are not offered. */
function offered<C extends { measures?: { name: string }[]; dimensions?: { name: string }[] }>(cube: C, unavailable: ReadonlyMap<string, string>): C {
  if (unavailable.size === 0) return cube;
  const keep = (members?: { name: string }[]) => members?.filter((member) => !unavailable.has(member.name));
  return { ...cube, measures: keep(cube.measures), dimensions: keep(cube.dimensions) };
}
