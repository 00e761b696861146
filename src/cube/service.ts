import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { CubejsServerCore, type CreateOptions } from '@cubejs-backend/server-core';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/registry';
import type { Warehouse } from '../warehouse/connection';
import { BoundedCacheDriver } from './engine/cache-driver';
import { cubeCacheObserver, createCacheFront } from './cache-front';
import { ROLLUP_TIME_ZONE, WarehouseClickHouseQuery } from './engine/dialect';
import { unrefIntervals } from './engine/unref-intervals';
import { createDriverFactory } from './engine/driver';
import { generateExportSql, type ExportSql, type SqlGateway } from './export-sql';
import { cubeLoadWithoutDescriptions, cubeMetaWithoutDescriptions } from './cube-api-shapes';
import { classifyGatewayError, CubeFailure, type GatewayError } from './errors';
import { checkMembers, modelMembersOf, type ModelMembers } from '../query/members';
import { createModelEngine } from './models/engine';
import { createModels, type ModelContext } from './models/models';
import type { ModelProblem } from './models/problems';
import type { GeneratedSql } from './models/validate';
import { withNumericPaging } from '../query/paging';
import { guardBlending, guardQuery } from '../query/guard';
import { checkQueryDates } from '../query/dates';
import { checkUngrouped } from '../query/ungrouped';
import { loadTimer } from './query-metrics';
import { restoreNativeStackTraces, reuseVisibleMeta } from './engine/request-path';
import { Tickets } from './tickets';
import { dropExtraRows, markTruncation, queriesWithOneMoreRow, withOneMoreRow, withTruncatedField } from './truncation';
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
  /**
   * The SQL Cube generates for one query under the context's account, with
   * at most `limit` rows, for an export to run (export-sql.ts); checked like
   * a load, nothing runs.
   */
  exportSql(query: Query, limit: number, context: RequestContext): Promise<ExportSql>;
  /** Cube's normalized queries, query type and pivot query; nothing runs. */
  dryRun(query: Query | Query[], context: RequestContext): Promise<unknown>;
  /**
   * Shutdown: loads not yet running in the warehouse answer `shutting_down`
   * now, new ones at once; loads with a statement running go on.
   */
  refuseNotStarted(): void;
  /**
   * Rows of these accounts were added (an import): forgets every answer
   * cached before (ours and Cube's, refresh keys too) and rebuilds the
   * rollups of these accounts and the operator's whose refresh keys turned.
   * Once it resolves, every answer through both APIs includes the rows.
   */
  dataChanged(accounts: readonly string[]): Promise<void>;
  models: {
    /**
     * Settles once the models are compiled and validated (the service is
     * ready to answer); rejects with ModelsInvalid, whose problems say why.
     */
    ready(): Promise<void>;
    /** Whether compiled, validated models are serving now. */
    compiled(): boolean;
    /** What the serving models were found to lack, short of a problem (`npm run models -- validate`). */
    warnings(): readonly ModelProblem[];
    /** The SQL and parameters Cube generates for a query (`npm run models -- sql`). */
    sql(query: Query, context: RequestContext): Promise<GeneratedSql>;
  };
  close(): Promise<void>;
}

export type Query = Record<string, unknown>;

export interface RequestContext {
  /**
   * The server's own id of the request (src/http/auth.ts requestKeyOf),
   * unique per request: its ticket, timings and cache lookups are keyed by
   * it. Never the client's x-request-id, which two requests may share.
   */
  requestId: string;
  /**
   * The account whose rows the query may read, or null for an operator,
   * who reads every account. Cube puts it in the SQL it generates (the
   * models' SECURITY_CONTEXT.accountId filters), and its SQL and result
   * caches are keyed by it.
   */
  accountId: string | null;
  /**
   * Whose turn it is in the warehouse's statement queue, taken round-robin
   * (the API key's id). Loads without one share a lane.
   */
  lane?: string;
}

export interface CubeServiceOptions {
  warehouse: Warehouse;
  query: Config['query'];
  logger: Logger;
  metrics: Metrics;
  /** Folder of model files (CUBE_MODELS_DIR); the repository's schema/ by default. */
  schemaPath?: string;
  /** Recompile when the model files change (outside production); otherwise they compile once. */
  watchModels?: boolean;
  /** Seconds one gateway call waits before Cube answers "Continue wait". */
  continueWaitSeconds?: number;
  /** How often Cube's refresh worker builds the rollups, in seconds (CUBE_ROLLUP_REFRESH_SECONDS); 0 or absent: never. */
  rollupRefreshSeconds?: number;
  /** Time and memory of one rollup build (CUBE_ROLLUP_BUILD_*); the query limits when absent. */
  rollupBuildLimits?: { timeoutMs: number; maxMemoryBytes: number };
}

export const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'schema');

/** More than the statements that can be in flight (keys × RATE_LIMIT_CONCURRENT in practice). */
const CHDB_CUBE_CONCURRENCY = 10_000;

type Reply = { body: any; status: number };

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

  /** Cube 0.33's shutdown() leaves the refresh worker's timer running: it would go on querying a closed warehouse. A build under way is not waited for. */
  async stopRefreshWorker(): Promise<void> {
    await this.scheduledRefreshTimerInterval?.cancel(false);
    this.scheduledRefreshTimerInterval = null;
  }

  /** Forgets Cube's cached results and refresh-key values (its SQL_QUERY_RESULT entries), in its cache driver and its in-memory copy of refresh keys. */
  forgetCachedResults(): void {
    this.cacheDriver.removeStartingWith('SQL_QUERY_RESULT_');
    for (const api of this.orchestratorApis()) (api.getQueryOrchestrator().getQueryCache() as unknown as { memoryCache: { reset(): void } }).memoryCache.reset();
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

  protected override createOrchestratorApi(...args: Parameters<CubejsServerCore['createOrchestratorApi']>) {
    const api = super.createOrchestratorApi(...args);
    (api.getQueryOrchestrator().getQueryCache() as unknown as { cacheDriver: BoundedCacheDriver }).cacheDriver = this.cacheDriver;
    return api;
  }
}

export function createCubeService(options: CubeServiceOptions): CubeService {
  const { warehouse, query: limits, logger, metrics } = options;
  const { timings } = metrics;
  const observeCache = cubeCacheObserver(metrics);
  const tickets = new Tickets();
  // Cube 0.33 reads its row limits from the environment only; it is asked
  // for one row more than a client may (truncation.ts), and the client's
  // maximum is held there.
  process.env.CUBEJS_DB_QUERY_LIMIT = String(limits.maxLimit + 1);
  process.env.CUBEJS_DB_QUERY_DEFAULT_LIMIT = String(limits.defaultLimit);

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
    logger,
    engine: createModelEngine({
      compilerApi: (modelVersion) => core.getCompilerApi({ modelVersion, securityContext: {} } as never),
      generateSql: (modelVersion, query, accountId) => generateSql(query, { requestId: `models-${modelVersion}`, accountId }, modelVersion),
      query: (sql, params) => validationDriver.query(sql, params),
    }),
  });

  const core = new Core({
    dbType: 'clickhouse',
    // Each model version is an app of its own, compiled from its snapshot (see models/models.ts).
    contextToAppId: (context) => models.appIdOf(context as ModelContext),
    repositoryFactory: (context) => models.repositoryOf(context as ModelContext),
    // The serving version, the one being validated, and one or two a request may still hold.
    compilerCacheSize: 4,
    // The 1.7 driver brings a newer copy of Cube's BaseDriver than 0.33's
    // typings know; the two agree at run time.
    driverFactory: driverFactory as unknown as CreateOptions['driverFactory'],
    // Cube calls dialectFactory for a dialect class; its typings say instance.
    dialectFactory: (() => WarehouseClickHouseQuery) as unknown as CreateOptions['dialectFactory'],
    // Never checked: requests reach the gateway's methods, not its routes.
    apiSecret: randomBytes(32).toString('hex'),
    devServer: false,
    // Records are listed without naming their key (PodcastEvents keeps it hidden); cubes without one are refused in query/ungrouped.ts.
    allowUngroupedWithoutPrimaryKey: true,
    telemetry: false,
    cacheAndQueueDriver: 'memory',
    // Rollup tables live apart from the data, the one database the service writes to (driver.ts).
    preAggregationsSchema: warehouse.config.rollupDatabase,
    // The refresh worker builds every rollup for each account and for the
    // operator: the account is in a rollup's SQL, so each has its own table.
    // It runs in the background; a query arriving before a build builds the
    // table itself, in the query's own lane, and waits for it.
    scheduledRefreshTimer: options.rollupRefreshSeconds ? options.rollupRefreshSeconds : false,
    scheduledRefreshContexts: async () => {
      await models.ready();
      const accounts = await validationDriver.query<{ account_id: string }>('SELECT DISTINCT account_id FROM downloads ORDER BY account_id', []);
      // An empty id would mean every account, which the operator's context already is.
      const ids = accounts.map((row) => row.account_id).filter((id) => id !== '');
      return [{ securityContext: {} }, ...ids.map((accountId) => ({ securityContext: { accountId } }))];
    },
    // The one zone rollups serve (a query in another reads the raw tables).
    scheduledRefreshTimeZones: [ROLLUP_TIME_ZONE],
    // Cube 0.33 validates and uses continueWaitTimeout here; its typings omit it.
    orchestratorOptions: {
      continueWaitTimeout: options.continueWaitSeconds ?? 5,
      // Cube's queue sends at most `concurrency` statements to the driver at
      // once and holds the rest in FIFO order, blind to keys. chDB runs one
      // statement at a time in our fair statement queue, which can only be
      // fair among the statements it holds: so for chDB, Cube passes them all
      // on. A server runs statements in parallel; there Cube's default (the
      // ClickHouse driver's 10) bounds the load we put on it.
      ...(warehouse.config.kind === 'chdb' ? { queryCacheOptions: { queueOptions: { concurrency: CHDB_CUBE_CONCURRENCY } } } : {}),
    } as CreateOptions['orchestratorOptions'],
    logger: (message: string, params: Record<string, unknown>) => {
      observeCache(message, params);
      logger.debug(`cube: ${message}`, params);
    },
  }, new BoundedCacheDriver(limits.cubeCacheMaxBytes, (bytes) => metrics.cubeCacheBytes.set(bytes)));

  const gateway = core.gateway();
  const cacheFront = createCacheFront(limits.resultCache, metrics, () => models.version());
  const throughCache = cacheFront.through;
  const forgetAnswers = () => {
    cacheFront.dataChanged();
    core.forgetCachedResults();
  };
  reuseVisibleMeta(gateway);
  restoreNativeStackTraces();

  // A request is answered by the models serving when it arrives, whatever reloads meanwhile.
  const call = async (method: 'meta' | 'load' | 'sql' | 'dryRun', args: Record<string, unknown>, context: RequestContext, modelVersion?: string) => {
    const version = modelVersion ?? (await models.version());
    const started = performance.now();
    try {
      return await new Promise<Reply>((resolve, reject) => {
        const request = {
          ...args,
          context: { securityContext: securityContextOf(context), requestId: context.requestId, modelVersion: version },
          res: (body: unknown, opts?: { status?: number }) => resolve({ body, status: opts?.status ?? 200 }),
        };
        (gateway[method] as (r: typeof request) => Promise<void>)(request).catch(reject);
      });
    } finally {
      const timing = timings.of(context.requestId);
      if (timing) timing.cubeMs += performance.now() - started;
    }
  };

  const failed = (reply: Reply): CubeFailure | undefined =>
    reply.status === 200 && !reply.body?.error ? undefined : classifyGatewayError(reply.status, reply.body as GatewayError);

  /**
   * Cube answers "Continue wait" while a query is still running; the query
   * keeps running in Cube's queue, so asking again picks it up. Clients
   * never see "Continue wait": we ask again until the load's ticket aborts
   * (query timeout, shutdown).
   */
  const loadUntilDone = async (args: Record<string, unknown>, context: RequestContext): Promise<any> => {
    const issued = tickets.issue(context.requestId, context.lane ?? 'unnamed', limits.timeoutMs);
    try {
      return await Promise.race([askUntilAnswered(args, context, issued.signal), issued.aborted]);
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
      const failure = failed(reply);
      if (failure) throw failure;
      return reply.body;
    }
  };

  const meta = async (context: RequestContext): Promise<Schema[]> => {
    const version = await models.version();
    const reply = await call('meta', {}, context, version);
    const failure = failed(reply);
    if (failure) throw failure;
    const cubes: Record<string, unknown>[] = reply.body.cubes;
    const out = models.unavailable(version);
    return cubes.map((cube) => offered(toSchema(cube), out)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  const generateSql = async (query: Query, context: RequestContext, modelVersion?: string): Promise<GeneratedSql> => {
    const reply = await call('sql', { query }, context, modelVersion);
    const failure = failed(reply);
    if (failure) throw failure;
    const [sql, params] = reply.body.sql.sql as [string, unknown[]];
    return { sql, params };
  };

  // Cube's compiled models of a version (cached by Cube per app); primary keys are not in /meta.
  const keyedCubes = async (modelVersion: string): Promise<ReadonlySet<string>> => {
    const api = (await core.getCompilerApi({ modelVersion, securityContext: {} } as never)) as unknown as {
      getCompilers(options: { requestId: string }): Promise<{ cubeEvaluator: { primaryKeys: Record<string, string[]> } }>;
    };
    const { cubeEvaluator } = await api.getCompilers({ requestId: `keys-${modelVersion}` });
    return new Set(Object.entries(cubeEvaluator.primaryKeys).filter(([, keys]) => keys.length > 0).map(([cube]) => cube));
  };

  // Members are read once per model version: a reload brings new ones.
  let members: { version: string; members: Promise<ModelMembers> } | undefined;
  // The serving models' cubes, the only values the query metrics' cube label takes.
  let cubeNames: ReadonlySet<string> = new Set();
  const timed = loadTimer(metrics.queryDuration, () => cubeNames);
  const modelMembers = async (context: RequestContext) => {
    const version = await models.version();
    if (members?.version !== version) {
      const read = Promise.all([meta(context), keyedCubes(version)]).then(([schemas, keyed]) => {
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
  const check = async (queries: Query[], context: RequestContext) => {
    const known = await modelMembers(context);
    for (const query of queries) {
      checkMembers(query, known);
      checkTimezone(query);
      guardQuery(query, known);
      checkQueryDates(query);
      checkUngrouped(query, known.keyed ?? new Set());
    }
  };

  /** One query, or an array of them to blend: checked the same way on both APIs. */
  const checkCubeQuery = async (query: Query | Query[], context: RequestContext) => {
    await check(Array.isArray(query) ? query : [query], context);
    if (Array.isArray(query)) guardBlending(query);
  };

  /** sql and dryRun only compile and generate SQL, so Cube never answers them "Continue wait". */
  const generate = async (method: 'sql' | 'dryRun', sent: Query | Query[], context: RequestContext): Promise<unknown> => {
    const query = pagingOf(sent);
    await checkCubeQuery(query, context);
    const reply = await call(method, { query }, context);
    const failure = failed(reply);
    if (failure) throw failure;
    return reply.body;
  };

  return {
    meta,

    load: (sent, context) => {
      refuseMultiOnly(sent);
      const query = withNumericPaging(sent);
      return timed([query], async () => {
        await check([query], context);
        return throughCache('v1', query, context, async () => {
          const { body, truncated } = dropExtraRows(await loadUntilDone({ query: withOneMoreRow(query, limits) }, context), limits);
          return markTruncation(toLoadResult(body, query), truncated);
        });
      });
    },

    loadMulti: (sent, context) => {
      const query = pagingOf(sent);
      return timed(Array.isArray(query) ? query : [query], async () => {
        await checkCubeQuery(query, context);
        return throughCache('v1 multi', query, context, async () => {
          const { body, truncated } = dropExtraRows(await loadUntilDone({ query: queriesWithOneMoreRow(query, limits), queryType: 'multi' }, context), limits);
          return markTruncation(toMultiLoadResult(body, query), truncated);
        });
      });
    },

    cubeMeta: async (context) => {
      const version = await models.version();
      const reply = await call('meta', {}, context, version);
      const failure = failed(reply);
      if (failure) throw failure;
      const out = models.unavailable(version);
      const { cubes } = cubeMetaWithoutDescriptions(reply.body);
      return { cubes: cubes.map((cube) => offered(cube, out)) };
    },

    cubeLoad: async (sent, multi, context) => {
      const query = pagingOf(sent);
      if (!multi) refuseMultiOnly(query);
      return timed(Array.isArray(query) ? query : [query], async () => {
        await checkCubeQuery(query, context);
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
      await check([query], context);
      const gatewayContext = { securityContext: securityContextOf(context), requestId: context.requestId, modelVersion: await models.version() };
      return generateExportSql(gateway as unknown as SqlGateway, { ...query, limit }, gatewayContext);
    },

    refuseNotStarted: () => tickets.refuseNotStarted(),

    dataChanged: async (accounts) => {
      // Raw-table answers follow at once; a rollup query meanwhile gets the rollup from before (whole, never mixed
      // with new rows) until its rebuild, after which answers computed meanwhile are forgotten too.
      forgetAnswers();
      await models.ready();
      await core.refreshRollups(['', ...accounts.filter((a) => a !== '')]);
      forgetAnswers();
    },

    models: {
      ready: () => models.ready(),
      compiled: () => models.compiled(),
      warnings: () => models.warnings(),
      sql: (query, context) => generateSql(query, context),
    },

    close: async () => {
      await core.stopRefreshWorker();
      models.close();
      await validationDriver.release();
      await core.shutdown();
    },
  };
}

/** A cube without the members the models' checks found cannot be queried (models/validate.ts): they are not offered. */
function offered<C extends { measures?: { name: string }[]; dimensions?: { name: string }[] }>(cube: C, unavailable: ReadonlyMap<string, string>): C {
  if (unavailable.size === 0) return cube;
  const keep = (members?: { name: string }[]) => members?.filter((member) => !unavailable.has(member.name));
  return { ...cube, measures: keep(cube.measures), dimensions: keep(cube.dimensions) };
}

/** `limit` and `offset` sent as digit strings are read as numbers, in every query of an array too. */
function pagingOf<Q extends Query | Query[]>(query: Q): Q {
  return (Array.isArray(query) ? query.map(withNumericPaging) : withNumericPaging(query)) as Q;
}

const ADD_MULTI = 'add "queryType": "multi" next to "query" (on GET, the URL parameter queryType=multi)';

/** Queries whose answer is one result per query or per range, which only Cube's multi shape holds. */
function refuseMultiOnly(query: Query | Query[]): void {
  if (Array.isArray(query)) throw new CubeFailure('invalid_query', `An array of queries answers one result per query: ${ADD_MULTI}.`);
  const { timeDimensions } = query;
  if (!Array.isArray(timeDimensions)) return;
  const i = timeDimensions.findIndex((td) => typeof td === 'object' && td !== null && 'compareDateRange' in td);
  if (i >= 0) throw new CubeFailure('invalid_query', `timeDimensions[${i}].compareDateRange answers one result per range: ${ADD_MULTI}.`);
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
  let known: string;
  try {
    known = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw new CubeFailure('invalid_query', `Unknown time zone ${JSON.stringify(timezone)}: expected an IANA name such as "America/New_York".`);
  }
  // Intl ignores case; ClickHouse does not ("utc" fails the query).
  if (known !== timezone && known.toLowerCase() === timezone.toLowerCase()) {
    throw new CubeFailure('invalid_query', `Unknown time zone ${JSON.stringify(timezone)}: time zone names are case-sensitive; did you mean ${JSON.stringify(known)}?`);
  }
}
