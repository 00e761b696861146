import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Every member of Cube 0.33 that src/cube/engine/ relies on without Cube promising it: protected and
 * private methods it calls or overrides, fields it reads or replaces, deep
 * dist paths it imports. An upgrade that removes or renames one fails here,
 * naming it, instead of somewhere in a query at run time. Each module is
 * resolved from the package that loads it in the service, so nested copies
 * are the ones checked.
 */

const fromRoot = createRequire(__filename);
const fromServerCore = createRequire(fromRoot.resolve('@cubejs-backend/server-core'));

interface Expectation {
  /** Where the service uses it. */
  usedBy: string;
  module: string;
  load: () => Record<string, any>;
  exportName: string;
  /** Methods on the class's prototype chain. */
  methods?: string[];
  /** Instance fields, found as assignments `this.<field> =` in the class's compiled source. */
  fields?: string[];
}

const EXPECTED: Expectation[] = [
  {
    usedBy: 'src/cube/engine/core.ts (Core subclass)',
    module: '@cubejs-backend/server-core',
    load: () => fromRoot('@cubejs-backend/server-core'),
    exportName: 'CubejsServerCore',
    methods: ['apiGateway', 'createCompilerApi', 'createOrchestratorApi', 'startScheduledRefreshTimer', 'shutdown', 'getCompilerApi', 'runScheduledRefresh'],
    fields: ['scheduledRefreshTimerInterval', 'orchestratorStorage'],
  },
  {
    usedBy: 'src/cube/engine/core.ts (Core.forgetCachedResults walks the orchestrators)',
    module: '@cubejs-backend/server-core/dist/src/core/OrchestratorStorage',
    load: () => fromRoot('@cubejs-backend/server-core/dist/src/core/OrchestratorStorage'),
    exportName: 'OrchestratorStorage',
    fields: ['storage'],
  },
  {
    usedBy: 'src/cube/engine/core.ts (Core.createOrchestratorApi swaps the cache driver)',
    module: '@cubejs-backend/server-core/dist/src/core/OrchestratorApi',
    load: () => fromRoot('@cubejs-backend/server-core/dist/src/core/OrchestratorApi'),
    exportName: 'OrchestratorApi',
    methods: ['getQueryOrchestrator'],
  },
  {
    usedBy: 'src/cube/engine/core.ts (Core.createOrchestratorApi)',
    module: '@cubejs-backend/query-orchestrator (as server-core loads it)',
    load: () => fromServerCore('@cubejs-backend/query-orchestrator'),
    exportName: 'QueryOrchestrator',
    methods: ['getQueryCache'],
  },
  {
    usedBy: 'src/cube/engine/core.ts (Core.createOrchestratorApi replaces QueryCache.cacheDriver)',
    module: '@cubejs-backend/query-orchestrator (as server-core loads it)',
    load: () => fromServerCore('@cubejs-backend/query-orchestrator'),
    exportName: 'QueryCache',
    fields: ['cacheDriver', 'memoryCache'],
  },
  {
    usedBy: 'src/cube/engine/cache-driver.ts',
    module: '@cubejs-backend/query-orchestrator',
    load: () => fromRoot('@cubejs-backend/query-orchestrator'),
    exportName: 'LocalCacheDriver',
    methods: ['get', 'set', 'remove'],
    fields: ['store'],
  },
  {
    usedBy: 'src/cube/engine/queue-timers.ts (LocalQueueDriverConnection.getResultBlocking replaced)',
    module: '@cubejs-backend/query-orchestrator/dist/src/orchestrator/LocalQueueDriver',
    load: () => fromRoot('@cubejs-backend/query-orchestrator/dist/src/orchestrator/LocalQueueDriver'),
    exportName: 'LocalQueueDriverConnection',
    methods: ['getResultBlocking', 'resultListKey', 'getResultPromise'],
    fields: ['continueWaitTimeout', 'queryDef', 'resultPromises'],
  },
  {
    usedBy: 'src/cube/engine/request-path.ts (reuseVisibleMeta, transformResultsInSlices), row-limits.ts, export-sql.ts and the gateway calls of core.ts',
    module: '@cubejs-backend/api-gateway',
    load: () => fromServerCore('@cubejs-backend/api-gateway'),
    exportName: 'ApiGateway',
    methods: ['filterVisibleItemsInMeta', 'meta', 'load', 'sql', 'dryRun', 'release', 'getNormalizedQueries', 'getSqlQueriesInternal', 'getResultInternal'],
  },
  {
    usedBy: 'src/cube/engine/sql-plans.ts (reuseSqlPlans compiles as getSqlQueriesInternal does)',
    module: '@cubejs-backend/api-gateway',
    load: () => fromServerCore('@cubejs-backend/api-gateway'),
    exportName: 'ApiGateway',
    methods: ['getCompilerApi', 'coerceForSqlQuery', 'log', 'duration'],
    fields: ['securityContextExtractor'],
  },
  {
    usedBy: 'src/cube/engine/request-path.ts (transformResultsInSlices formats each time once)',
    module: '@cubejs-backend/api-gateway/dist/src/helpers/transformValue',
    load: () => fromServerCore('@cubejs-backend/api-gateway/dist/src/helpers/transformValue'),
    exportName: 'transformValue',
  },
  {
    usedBy:
      'src/cube/engine/core.ts (keyedCubes), src/cube/engine/shared-compile.ts, src/cube/models/engine.ts and src/cube/engine/sql-plans.ts (getSql, the models read from repository)',
    module: '@cubejs-backend/server-core/dist/src/core/CompilerApi',
    load: () => fromRoot('@cubejs-backend/server-core/dist/src/core/CompilerApi'),
    exportName: 'CompilerApi',
    methods: ['getCompilers', 'createQueryFactory', 'getSql'],
    fields: [
      'allowNodeRequire',
      'compileContext',
      'allowJsDuplicatePropsInSchema',
      'standalone',
      'nativeInstance',
      'repository',
      'options',
      'schemaVersion',
      'logger',
      'compilers',
      'queryFactory',
      'preAggregationsSchema',
      'allowUngroupedWithoutPrimaryKey',
      'convertTzForRawTimeDimension',
      'sqlCache',
      'dialectClass',
    ],
  },
  {
    usedBy: 'src/cube/engine/schema-compiler.ts (the model checks of src/cube/models/)',
    module: '@cubejs-backend/schema-compiler',
    load: () => fromRoot('@cubejs-backend/schema-compiler'),
    exportName: 'prepareCompiler',
  },
  {
    usedBy: 'src/cube/engine/yaml-expressions.ts (the YAML expressions parsed before are not parsed again)',
    module: '@cubejs-backend/schema-compiler/dist/src/compiler/YamlCompiler',
    load: () => fromServerCore('@cubejs-backend/schema-compiler/dist/src/compiler/YamlCompiler'),
    exportName: 'YamlCompiler',
    methods: ['parsePythonAndTranspileToJs', 'compileYamlFile'],
  },
  {
    usedBy: 'src/cube/engine/normalize-once.ts (the gateway normalizes each query once)',
    module: '@cubejs-backend/api-gateway/dist/src/query',
    load: () => fromServerCore('@cubejs-backend/api-gateway/dist/src/query'),
    exportName: 'normalizeQuery',
  },
  {
    usedBy: 'src/cube/engine/date-parser.ts',
    module: '@cubejs-backend/api-gateway/dist/src/dateParser',
    load: () => fromRoot('@cubejs-backend/api-gateway/dist/src/dateParser'),
    exportName: 'dateParser',
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (WarehouseClickHouseQuery)',
    module: '@cubejs-backend/schema-compiler/dist/src/adapter/ClickHouseQuery',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/adapter/ClickHouseQuery'),
    exportName: 'ClickHouseQuery',
    methods: [
      'parametrizedContextSymbols',
      'newPreAggregations',
      'newFilter',
      'newTimeDimension',
      'getFieldAlias',
      'orderBy',
      'dimensionAliasNames',
      'joinFullKeyQueryAggregate',
      'multipliedJoinRowResult',
      'buildSqlAndParams',
      'timeStampCast',
      'dateTimeCast',
      'preAggregationSchema',
    ],
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (RollupsInOneTimeZone)',
    module: '@cubejs-backend/schema-compiler/dist/src/adapter/PreAggregations',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/adapter/PreAggregations'),
    exportName: 'PreAggregations',
    methods: ['findPreAggregationForQuery'],
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (a measure refused across joins is a UserError: Cube answers it 400)',
    module: '@cubejs-backend/schema-compiler/dist/src/compiler/UserError',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/compiler/UserError'),
    exportName: 'UserError',
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (LocalTimeDimension)',
    module: '@cubejs-backend/schema-compiler/dist/src/adapter/BaseDimension',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/adapter/BaseDimension'),
    exportName: 'BaseDimension',
    methods: ['dimensionSql', 'definition'],
    fields: ['query', 'expression', 'dimension'],
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (HourTimeDimension)',
    module: '@cubejs-backend/schema-compiler/dist/src/adapter/BaseTimeDimension',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/adapter/BaseTimeDimension'),
    exportName: 'BaseTimeDimension',
    methods: ['inDateRangeWhere', 'dimensionSql'],
  },
  {
    usedBy: 'src/cube/engine/dialect.ts (FixedClickHouseFilter)',
    module: '@cubejs-backend/schema-compiler/dist/src/adapter/BaseFilter',
    load: () => fromRoot('@cubejs-backend/schema-compiler/dist/src/adapter/BaseFilter'),
    exportName: 'BaseFilter',
    methods: ['filterParams', 'isDateOperator', 'inDateRangeWhere', 'onTheDateWhere', 'likeIgnoreCase', 'castParameter', 'inDbTimeZoneDateFrom', 'definition'],
  },
  {
    usedBy: 'src/cube/engine/driver.ts (WarehouseDriver, RollupWriter)',
    module: '@cubejs-backend/clickhouse-driver',
    load: () => fromRoot('@cubejs-backend/clickhouse-driver'),
    exportName: 'ClickHouseDriver',
    methods: ['query', 'command', 'release', 'createClient', 'queryResponse', 'withCancel', 'normaliseResponse'],
    fields: ['config'],
  },
  {
    usedBy: 'src/cube/engine/per-query-work.ts (envReadOncePerValue replaces the gateway’s getEnv)',
    module: '@cubejs-backend/shared/dist/src/env (as the gateway loads it)',
    load: () => createRequire(fromServerCore.resolve('@cubejs-backend/api-gateway'))('@cubejs-backend/shared/dist/src/env'),
    exportName: 'getEnv',
  },
  {
    usedBy: 'src/cube/engine/per-query-work.ts (hashOncePerKey replaces getCacheHash)',
    module: '@cubejs-backend/query-orchestrator/dist/src/orchestrator/utils (as server-core loads it)',
    load: () => fromServerCore('@cubejs-backend/query-orchestrator/dist/src/orchestrator/utils'),
    exportName: 'getCacheHash',
  },
  {
    usedBy: 'src/cube/engine/per-query-work.ts (hashOncePerKey appends the process id as Cube does)',
    module: '@cubejs-backend/shared (as the query orchestrator loads it)',
    load: () => createRequire(fromServerCore.resolve('@cubejs-backend/query-orchestrator'))('@cubejs-backend/shared'),
    exportName: 'getProcessUid',
  },
  {
    usedBy: 'src/cube/engine/per-query-work.ts (timeoutErrorWhenDue replaces timeout)',
    module: 'promise-timeout (as server-core loads it)',
    load: () => fromServerCore('promise-timeout'),
    exportName: 'timeout',
  },
  {
    usedBy: 'src/cube/engine/per-query-work.ts (timeoutErrorWhenDue rejects with it)',
    module: 'promise-timeout (as server-core loads it)',
    load: () => fromServerCore('promise-timeout'),
    exportName: 'TimeoutError',
  },
  {
    usedBy: 'src/cube/engine/driver.ts (WarehouseDriver words a failed statement as the driver does)',
    module: '@cubejs-backend/clickhouse-driver/dist/src/utils.js',
    load: () => fromRoot('@cubejs-backend/clickhouse-driver/dist/src/utils.js'),
    exportName: 'formatError',
  },
];

/** The compiled source of a class and its ancestors, where its constructor and methods assign fields. */
function sourceOf(cls: { prototype: object }): string {
  let text = '';
  for (let proto = cls.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    text += String(proto.constructor);
  }
  return text;
}

function loadExport({ module, load, exportName }: Expectation): any {
  let loaded: Record<string, any>;
  try {
    loaded = load();
  } catch (err) {
    throw new Error(`${module} no longer loads (${(err as Error).message}): Cube moved it; update the import in src/cube/engine/`);
  }
  const exported = loaded[exportName];
  if (typeof exported !== 'function') throw new Error(`${module} no longer exports ${exportName}: Cube renamed or removed it`);
  return exported;
}

const CASES: [string, () => void][] = EXPECTED.flatMap((expected) => {
  const { exportName, usedBy, methods = [], fields = [] } = expected;
  return [
    [`${exportName} (${expected.module}), used by ${usedBy}`, () => void loadExport(expected)],
    ...methods.map((method): [string, () => void] => [
      `${exportName}.prototype.${method}`,
      () => {
        if (typeof loadExport(expected).prototype[method] !== 'function') {
          throw new Error(`${exportName}.prototype.${method} is gone: Cube renamed or removed it, and ${usedBy} relies on it`);
        }
      },
    ]),
    ...fields.map((field): [string, () => void] => [
      `${exportName}'s field ${field}`,
      () => {
        if (!new RegExp(`this\\.${field}\\s*=`).test(sourceOf(loadExport(expected)))) {
          throw new Error(`${exportName} no longer assigns this.${field}: Cube renamed or removed the field ${usedBy} reads or replaces`);
        }
      },
    ]),
  ];
});

it.each(CASES)('%s is still there', (_label, check) => check());

it('names every @cubejs-backend module the engine folder imports, so none goes unchecked', () => {
  const checked = new Set(EXPECTED.map(({ module }) => module.replace(/ \(.*$/, '')));
  const dir = `${__dirname}/../../../src/cube/engine`;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => readFileSync(`${dir}/${name}`, 'utf8'));
  const imported = files.flatMap((text) => [...text.matchAll(/from '(@cubejs-backend\/[^']+)'/g)].map((match) => match[1]));
  // @cubejs-backend/shared's formatMySql is a public export.
  const unchecked = imported.filter((name) => !checked.has(name) && name !== '@cubejs-backend/shared');
  expect(unchecked).toEqual([]);
});

it('Cube still stamps a rollup table with the driver’s nowTimestamp in base-32 seconds and answers from the latest stamp (src/cube/engine/build-stamps.ts)', () => {
  const source = readFileSync(fromServerCore.resolve('@cubejs-backend/query-orchestrator/dist/src/orchestrator/PreAggregations.js'), 'utf8');
  const rules: [string, RegExp][] = [
    ['the stamp of a new table is the driver’s nowTimestamp', /client\.nowTimestamp\?\.\(\)/],
    ['a stamp is written as base-32 seconds', /Math\.floor\(time \/ 1000\)\.toString\(32\)/],
    ['tables are ranked by their stamps alone, latest first', /sortBy\(table => -table\.last_updated_at/],
  ];
  const gone = rules.filter(([, pattern]) => !pattern.test(source)).map(([rule]) => rule);
  expect(gone).toEqual([]);
});
