import { randomBytes } from 'node:crypto';
import { CubejsServerCore, type CreateOptions } from '@cubejs-backend/server-core';
import type { Warehouse } from '../../warehouse/connection';
import type { BoundedCacheDriver } from './cache-driver';
import { ROLLUP_TIME_ZONE, warehouseDialect, type ModelSettings } from './dialect';
import type { createDriverFactory } from './driver';
import { generateExportSql, type ExportSql, type SqlGateway } from './export-sql';
import { restoreNativeStackTraces, reuseVisibleMeta, transformResultsInSlices } from './request-path';
import { normalizeEachQueryOnce } from './normalize-once';
import { ownRowLimits, type GatewayRowLimits } from './row-limits';
import { shareCompiledModels } from './shared-compile';
import { makePerQueryWorkOnce } from './per-query-work';
import { reuseSqlPlans, SqlPlans } from './sql-plans';
import { clearContinueWaitTimers } from './queue-timers';
import { unrefIntervals } from './unref-intervals';
import { cacheYamlExpressions } from './yaml-expressions';

// Once for the process, before any of Cube's queues waits (queue-timers.ts).
clearContinueWaitTimers();
// Once for the process, before the first query (per-query-work.ts).
makePerQueryWorkOnce();
// Once for the process, before any core compiles its models (yaml-expressions.ts).
cacheYamlExpressions();

/** More than the statements that can be in flight (keys × RATE_LIMIT_CONCURRENT in practice). */
const CHDB_CUBE_CONCURRENCY = 10_000;

/** Cube keeps its gateway accessor and its orchestrator's cache protected; this is the one place that opens them. */
class Core extends CubejsServerCore {
  private readonly cacheDriver: BoundedCacheDriver;

  constructor(options: CreateOptions, cacheDriver: BoundedCacheDriver) {
    // Cube's constructor starts an interval it never clears (unref-intervals.ts).
    const restoreIntervals = unrefIntervals();
    try {
      super(options);
    } finally {
      restoreIntervals();
    }
    this.cacheDriver = cacheDriver;
  }

  gateway() {
    return this.apiGateway();
  }

  /**
   * Cube 0.33's shutdown() leaves the refresh worker's timer running: it would go on querying a closed warehouse. A
   * run under way is waited for: left running, it goes on building rollups after the service closed, and a table it
   * finishes from data read before a change is newer than the next service's build and would be served instead.
   */
  async stopRefreshWorker(): Promise<void> {
    await this.scheduledRefreshTimerInterval?.cancel(true);
    this.scheduledRefreshTimerInterval = null;
  }

  /**
   * Forgets Cube's cached results and refresh-key values (its SQL_QUERY_RESULT
   * entries), in its cache driver and its in-memory copy of refresh keys.
   * (Its lists of rollup tables are never kept: cache-driver.ts.)
   */
  forgetCachedResults(): void {
    this.cacheDriver.removeStartingWith('SQL_QUERY_RESULT_');
    for (const api of this.orchestratorApis())
      (api.getQueryOrchestrator().getQueryCache() as unknown as { memoryCache: { reset(): void } }).memoryCache.reset();
  }

  /**
   * Builds the rollups of each account given ('' for the operator's) whose
   * refresh keys changed, as the refresh worker does, and waits for them:
   * Cube answers "Continue wait" while a build outlasts continueWaitTimeout,
   * and the run is repeated until the build is done.
   */
  async refreshRollups(accounts: readonly string[]): Promise<void> {
    for (const accountId of accounts) {
      const context = { securityContext: accountId === '' ? {} : { accountId } };
      for (;;) {
        try {
          await this.runScheduledRefresh(context, { timezones: [ROLLUP_TIME_ZONE], throwErrors: true });
          break;
        } catch (err) {
          if ((err as { error?: unknown }).error !== 'Continue wait') throw err;
        }
      }
    }
  }

  private orchestratorApis(): { getQueryOrchestrator(): { getQueryCache(): unknown } }[] {
    return [...(this as unknown as { orchestratorStorage: { storage: Map<string, never> } }).orchestratorStorage.storage.values()];
  }

  protected override createCompilerApi(...args: Parameters<CubejsServerCore['createCompilerApi']>) {
    return shareCompiledModels(super.createCompilerApi(...args));
  }

  protected override createOrchestratorApi(...args: Parameters<CubejsServerCore['createOrchestratorApi']>) {
    const api = super.createOrchestratorApi(...args);
    (api.getQueryOrchestrator().getQueryCache() as unknown as { cacheDriver: BoundedCacheDriver }).cacheDriver = this.cacheDriver;
    return api;
  }
}

/** What Cube's gateway is told about a request: whose rows, which request, which models. */
export interface GatewayContext {
  /** `{}` for an operator (every account). */
  securityContext: { accountId?: string };
  requestId: string;
  modelVersion: string;
}

export type GatewayMethod = 'meta' | 'load' | 'sql' | 'dryRun';

/** What the gateway hands its `res` callback: a body (Cube's answer or `{ error }`) and a status. */
export interface GatewayReply {
  body: any;
  status: number;
}

/** The security contexts the model versions are compiled for; Cube calls these with its request context. */
export interface ModelApps {
  appIdOf(context: unknown): string;
  repositoryOf(context: unknown): CreateOptions['repositoryFactory'] extends ((context: any) => infer R) | undefined ? R : never;
}

export interface EngineOptions {
  warehouse: Warehouse;
  driverFactory: ReturnType<typeof createDriverFactory>;
  cacheDriver: BoundedCacheDriver;
  models: ModelApps;
  rowLimits: GatewayRowLimits;
  /** Query shapes per models version whose compiled SQL is reused with other filter values (sql-plans.ts); 0: off. */
  sqlPlans: number;
  /** Seconds one gateway call waits before Cube answers "Continue wait". */
  continueWaitSeconds: number;
  /** The funnel's steps and the tables' retention, which the models read as SQL_UTILS.funnelStep and SQL_UTILS.retained (dialect.ts). */
  modelSettings: ModelSettings;
  /** How often Cube's refresh worker builds the rollups, in seconds; 0 or absent: never. */
  rollupRefreshSeconds?: number;
  /** Every security context the refresh worker builds rollups for. */
  refreshContexts(): Promise<{ securityContext: { accountId?: string } }[]>;
  log(message: string, params: Record<string, unknown>): void;
}

/** Cube's server core, reached only through these. */
export interface Engine {
  /** One of the gateway's request methods, answered through its `res` callback. */
  call(method: GatewayMethod, args: Record<string, unknown>, context: GatewayContext): Promise<GatewayReply>;
  /** Cube's CompilerApi of a model version (models/engine.ts). */
  compilerApi(modelVersion: string): Promise<unknown>;
  /** The cubes of a model version that declare a primary key (not in /meta). */
  keyedCubes(modelVersion: string): Promise<ReadonlySet<string>>;
  /** Cube's SQL for one query with `query.limit` rows at most, for an export (export-sql.ts). */
  exportSql(query: Record<string, unknown>, context: GatewayContext): Promise<ExportSql>;
  /** Forgets Cube's cached results and refresh-key values; its rollup bookkeeping stays. */
  forgetCachedResults(): void;
  /** Builds the rollups of these accounts ('' for the operator) whose refresh keys turned, and waits for them. */
  refreshRollups(accounts: readonly string[]): Promise<void>;
  /** Cube 0.33's shutdown() leaves the refresh worker's timer running: stopped first, before what it queries closes. */
  stopRefreshWorker(): Promise<void>;
  shutdown(): Promise<void>;
}

export function createEngine(options: EngineOptions): Engine {
  const core = new Core(coreOptions(options), options.cacheDriver);

  const gateway = core.gateway();
  reuseVisibleMeta(gateway);
  transformResultsInSlices(gateway);
  reuseSqlPlans(gateway, new SqlPlans(options.sqlPlans));
  ownRowLimits(gateway, options.rowLimits);
  restoreNativeStackTraces();
  normalizeEachQueryOnce();

  const compilerApi = (modelVersion: string) => core.getCompilerApi({ modelVersion, securityContext: {} } as never);
  // Cube's compiled models of a version (cached by Cube per app): every valid cube has an entry, with or without keys.
  const primaryKeys = async (modelVersion: string) => {
    const api = (await compilerApi(modelVersion)) as unknown as {
      getCompilers(options: { requestId: string }): Promise<{ cubeEvaluator: { primaryKeys: Record<string, string[]> } }>;
    };
    const { cubeEvaluator } = await api.getCompilers({ requestId: `keys-${modelVersion}` });
    return cubeEvaluator.primaryKeys;
  };

  return {
    call: (method, args, context) =>
      new Promise<GatewayReply>((resolve, reject) => {
        const request = { ...args, context, res: (body: unknown, opts?: { status?: number }) => resolve({ body, status: opts?.status ?? 200 }) };
        (gateway[method] as (r: typeof request) => Promise<void>)(request).catch(reject);
      }),

    compilerApi,

    keyedCubes: async (modelVersion) =>
      new Set(
        Object.entries(await primaryKeys(modelVersion))
          .filter(([, keys]) => keys.length > 0)
          .map(([cube]) => cube),
      ),

    exportSql: (query, context) => generateExportSql(gateway as unknown as SqlGateway, query, { ...context }),

    forgetCachedResults: () => core.forgetCachedResults(),
    refreshRollups: (accounts) => core.refreshRollups(accounts),
    stopRefreshWorker: () => core.stopRefreshWorker(),
    shutdown: () => core.shutdown(),
  };
}

/** The options Cube's core runs with. */
function coreOptions(options: EngineOptions): CreateOptions {
  const { warehouse, models } = options;
  const orchestratorId = `service_${randomBytes(8).toString('hex')}`;
  const dialect = warehouseDialect(options.modelSettings);
  return {
    dbType: 'clickhouse',
    // Each model version is an app of its own, compiled from its snapshot (see models/models.ts).
    contextToAppId: (context) => models.appIdOf(context),
    repositoryFactory: (context) => models.repositoryOf(context),
    // The serving version, the one being validated, and one or two a request may still hold.
    compilerCacheSize: 4,
    // The 1.7 driver brings a newer copy of Cube's BaseDriver than 0.33's
    // typings know; the two agree at run time.
    driverFactory: options.driverFactory as unknown as CreateOptions['driverFactory'],
    // Cube calls dialectFactory for a dialect class; its typings say instance.
    dialectFactory: (() => dialect) as unknown as CreateOptions['dialectFactory'],
    // Never checked: requests reach the gateway's methods, not its routes.
    apiSecret: randomBytes(32).toString('hex'),
    devServer: false,
    // Records are listed without naming their key (PodcastEvents keeps it hidden); cubes without one are refused in query/ungrouped.ts.
    allowUngroupedWithoutPrimaryKey: true,
    telemetry: false,
    cacheAndQueueDriver: 'memory',
    // Cube's in-memory queue keeps its queries, results and locks in one object per process, by this id (by default
    // the same for every core): a service started after another in the same process (tests do; a reload of models
    // does not make a new core) must not take the results of statements the first left queued, such as a rollup's
    // refresh key read before the data changed.
    contextToOrchestratorId: () => orchestratorId,
    // Rollup tables live apart from the data, the one database the service writes to (driver.ts).
    preAggregationsSchema: warehouse.config.rollupDatabase,
    // The refresh worker builds every rollup for each account and for the
    // operator: the account is in a rollup's SQL, so each has its own table.
    // It runs in the background; a query arriving before a build builds the
    // table itself, in the query's own lane, and waits for it.
    scheduledRefreshTimer: options.rollupRefreshSeconds ? options.rollupRefreshSeconds : false,
    scheduledRefreshContexts: options.refreshContexts,
    // The one zone rollups serve (a query in another reads the raw tables).
    scheduledRefreshTimeZones: [ROLLUP_TIME_ZONE],
    // Cube 0.33 validates and uses continueWaitTimeout here; its typings omit it.
    orchestratorOptions: {
      continueWaitTimeout: options.continueWaitSeconds,
      // Cube's queue sends at most `concurrency` statements to the driver at
      // once and holds the rest in FIFO order, blind to keys. chDB runs one
      // statement at a time in our fair statement queue, which can only be
      // fair among the statements it holds: so for chDB, Cube passes them all
      // on. A server runs statements in parallel; there Cube's default (the
      // ClickHouse driver's 10) bounds the load we put on it.
      ...(warehouse.config.kind === 'chdb' ? { queryCacheOptions: { queueOptions: { concurrency: CHDB_CUBE_CONCURRENCY } } } : {}),
    } as CreateOptions['orchestratorOptions'],
    logger: options.log,
  };
}
