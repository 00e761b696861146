import path from 'node:path';
import { BoundedCacheDriver } from './engine/cache-driver';
import { createEngine, type Engine } from './engine/core';
import { createDriverFactory, type StatementsOf } from './engine/driver';
import { createModelEngine } from './models/engine';
import { createModels, type ModelContext, type Models } from './models/models';
import type { GeneratedSql } from './models/validate';
import type { CubeServiceOptions, Query, RequestScope } from './types';
import { funnelStepsSql } from './funnel-steps';
import { retainedRowsSql } from '../warehouse/retention';

const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'schema');

/** What the parts of Cube hand back to the service that runs them. */
export interface RuntimeHooks {
  /** The load in flight that Cube names by its request id (in-flight.ts). */
  loadOf(requestId: string | undefined): StatementsOf | undefined;
  /** The SQL Cube generates for a query (the models' checks ask for it). */
  generateSql(query: Query, scope: RequestScope, modelVersion: string): Promise<GeneratedSql>;
  /** Settles once the start's catch-up is done: the refresh worker's first run waits for it. */
  caughtUp(): Promise<void>;
  /** Each of Cube's log events. */
  log(message: string, params: Record<string, unknown>): void;
}

export interface Runtime {
  engine: Engine;
  models: Models;
  /** Every account with downloads, read on the validation driver. */
  accountIds(): Promise<string[]>;
  /** Stops the refresh worker and the models' watch, then releases the drivers and Cube's core. */
  close(): Promise<void>;
}

/**
 * Cube's parts, wired once: the driver that hands statements to the
 * warehouse under their load's ticket, the models (snapshots, validation,
 * hot reload), and Cube's core over both (src/cube/engine/core.ts).
 */
export function openRuntime(options: CubeServiceOptions, hooks: RuntimeHooks): Runtime {
  const { warehouse, query: limits, logger, metrics } = options;
  const driverFactory = createDriverFactory(
    warehouse,
    // The row asked for beyond a query's limit is ours, not the client's (truncation.ts checks the rest).
    { ...limits, maxResultRows: limits.maxResultRows + 1 },
    hooks.loadOf,
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
      generateSql: (modelVersion, query, accountId) => hooks.generateSql(query, { requestId: `models-${modelVersion}`, accountId }, modelVersion),
      query: (sql, params) => validationDriver.query(sql, params),
    }),
  });
  const accountIds = async () => {
    const accounts = await validationDriver.query<{ account_id: string }>('SELECT DISTINCT account_id FROM downloads ORDER BY account_id', []);
    // An empty id would mean every account, which the operator's context already is.
    return accounts.map((row) => row.account_id).filter((id) => id !== '');
  };
  const engine = createEngine({
    warehouse,
    driverFactory,
    cacheDriver: new BoundedCacheDriver(limits.cubeCacheMaxBytes, (bytes) => metrics.cubeCacheBytes.set(bytes)),
    models: { appIdOf: (context) => models.appIdOf(context as ModelContext), repositoryOf: (context) => models.repositoryOf(context as ModelContext) },
    // Cube is asked for one row more than a client may (truncation.ts), and the client's maximum is held there.
    rowLimits: { maxLimit: limits.maxLimit + 1, defaultLimit: limits.defaultLimit },
    sqlPlans: limits.cubeSqlPlans,
    continueWaitSeconds: options.continueWaitSeconds ?? 5,
    modelSettings: { funnelSteps: funnelStepsSql(options.funnel), retained: retainedRowsSql(options.retention) },
    rollupRefreshSeconds: options.rollupRefreshSeconds,
    refreshContexts: async () => {
      // The worker's first run waits for the start's catch-up: run beside it, both would build the same rollups.
      await hooks.caughtUp();
      await models.ready();
      return [{ securityContext: {} }, ...(await accountIds()).map((accountId) => ({ securityContext: { accountId } }))];
    },
    log: hooks.log,
  });
  return {
    engine,
    models,
    accountIds,
    close: async () => {
      await engine.stopRefreshWorker();
      models.close();
      await validationDriver.release();
      await engine.shutdown();
    },
  };
}
