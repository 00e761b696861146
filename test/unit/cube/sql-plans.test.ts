import path from 'node:path';
import fc from 'fast-check';
import { ApiGateway } from '@cubejs-backend/api-gateway';
import { normalizeQuery, remapToQueryAdapterFormat } from '@cubejs-backend/api-gateway/dist/src/query';
import { CompilerApi } from '@cubejs-backend/server-core/dist/src/core/CompilerApi';
import { parseConfig } from '../../../src/config';
import { warehouseDialect } from '../../../src/cube/engine/dialect';
import { funnelStepsSql } from '../../../src/cube/funnel-steps';
import { retainedRowsSql } from '../../../src/warehouse/retention';
import { learnBindings, reuseSqlPlans, SqlPlans, type CubeSql, type NormalizedQuery } from '../../../src/cube/engine/sql-plans';
import { readSnapshot, type ModelFile } from '../../../src/cube/models/snapshot';
import { DATE_OPERATOR_VALUES } from '../../../src/query/dates';
import { FILTER_OPERATORS } from '../../../src/query/members';

/**
 * The SQL of a load through the plans (src/cube/engine/sql-plans.ts) against
 * Cube's own: Cube's gateway method getSqlQueriesInternal and Cube's
 * CompilerApi over this project's models and dialect, with and without the
 * plans. For every cube and every filter operator Cube takes, a query is
 * compiled through the plans with one set of filter values and then with
 * another (in the same or another security context), and each must come out
 * exactly as Cube compiles it: SQL text, parameters and every other field
 * the gateway and orchestrator read. Values include those Cube transforms
 * (dates, LIKE patterns, numbers and booleans, nulls, several values, empty
 * strings, quotes, backslashes, arrays).
 */

type Query = Record<string, unknown>;
interface Member {
  name: string;
  type: string;
}
interface CubeMeta {
  name: string;
  measures: Member[];
  dimensions: Member[];
}
interface Context {
  securityContext: { accountId?: string };
  requestId: string;
  modelVersion: string;
}

// Cube 0.33's operators, every one, and its date operators (the admission module lists both).
const OPERATORS = FILTER_OPERATORS;
const DATE_OPERATORS = new Set(Object.keys(DATE_OPERATOR_VALUES));
const NO_VALUES = new Set(['set', 'notSet', 'measureFilter']);

const logger = () => {};
/** Cube's own gateway methods on an object holding what they read: a gateway without a server. */
function gatewayOver(apis: Map<string, CompilerApi>) {
  const proto = ApiGateway.prototype as any;
  return {
    getSqlQueriesInternal: proto.getSqlQueriesInternal,
    coerceForSqlQuery: proto.coerceForSqlQuery,
    duration: proto.duration,
    securityContextExtractor: proto.createSecurityContextExtractor.call({ logger }, undefined),
    getCompilerApi: async (context: Context) => apis.get(context.modelVersion)!,
    log: () => {},
  } as { getSqlQueriesInternal(context: Context, queries: NormalizedQuery[]): Promise<CubeSql[]> };
}

// The dialect the service compiles with, from the default settings: the models call its SQL_UTILS.
const defaults = parseConfig({});
const dialect = warehouseDialect({ funnelSteps: funnelStepsSql(defaults.funnel), retained: retainedRowsSql(defaults.retention) });

function compilerApiOf(files: ModelFile[]): CompilerApi {
  return new CompilerApi({ localPath: () => '', dataSchemaFiles: async () => files } as never, async () => 'clickhouse', {
    dialectClass: () => dialect,
    logger,
    preAggregationsSchema: 'analytics_rollups',
    allowUngroupedWithoutPrimaryKey: true,
    sqlCache: true,
  } as never);
}

/** As the gateway normalizes a load (getNormalizedQueries, with Cube's default queryRewrite). */
const normalized = (query: Query): NormalizedQuery => remapToQueryAdapterFormat(normalizeQuery(normalizeQuery(query, false), false)) as NormalizedQuery;

const settle = (run: () => Promise<CubeSql[]>) =>
  run().then(
    (sql) => ({ sql }),
    (err: Error) => ({ error: String(err?.message ?? err) }),
  );

let files: ModelFile[];
let cube: CompilerApi;
let cubes: CubeMeta[];

beforeAll(async () => {
  files = (await readSnapshot(path.resolve(__dirname, '..', '..', '..', 'schema'))).files;
  cube = compilerApiOf(files);
  const meta = (await cube.metaConfig({ requestId: 'meta' })) as { config: CubeMeta }[];
  cubes = meta.map((entry) => entry.config);
});

/** The models' Downloads cube alone. */
const downloadsOnly = () => files.filter((file) => file.fileName === 'Downloads.yml');

/** A string value a client may send, leaning to those Cube or ClickHouse treat specially. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '%', '_', '\\', "'", '"', '?', '$0$', 'a%b_c\\', 'ünï ☃', 'US', '2026-11-01', '12', '-3.5', 'null', 'true'),
);
/** A non-null value as sent: strings, numbers or booleans (Cube turns all of them into strings). */
const sentValue = fc.oneof(
  { weight: 4, arbitrary: text },
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.boolean(),
);
const dateValue = fc.oneof(
  fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 23)),
  fc.constantFrom('2026-11-01T10:30:00', 'not a date'),
);

/** A filter on a member of `meta`, with two sets of values of the same length (nulls kept in place): the query sent first and the one after. */
/** The same filter (or group) in the first query and in the second. */
type Pair = [Query, Query];

function filterOf(meta: CubeMeta, operators: readonly string[], members: Member[] = [...meta.dimensions, ...meta.measures]): fc.Arbitrary<Pair> {
  return fc
    .record({
      operator: fc.constantFrom(...operators),
      member: fc.constantFrom(...members),
      // Date operators mostly on time members, where Cube reads their values as dates.
      timeMember: fc.option(fc.constantFrom(...(members.some((m) => m.type === 'time') ? members.filter((m) => m.type === 'time') : members)), { freq: 4 }),
      count: fc.integer({ min: 1, max: 3 }),
      nulls: fc.array(
        fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
        { minLength: 3, maxLength: 3 },
      ),
    })
    .chain(({ operator, timeMember, count, nulls, ...picked }): fc.Arbitrary<Pair> => {
      const member = DATE_OPERATORS.has(operator) && timeMember !== null ? timeMember : picked.member;
      const isMeasure = meta.measures.includes(member);
      const name = operator === 'measureFilter' && !isMeasure && meta.measures.length > 0 ? meta.measures[0].name : member.name;
      if (NO_VALUES.has(operator))
        return fc.constant<Pair>([
          { member: name, operator },
          { member: name, operator },
        ]);
      const one = DATE_OPERATORS.has(operator) ? dateValue : sentValue;
      const values = fc.tuple(...Array.from({ length: count }, (_, i) => (nulls[i] && !DATE_OPERATORS.has(operator) ? fc.constant(null) : one)));
      return fc.tuple(values, values).map(([first, second]): Pair => [
        { member: name, operator, values: first },
        { member: name, operator, values: second },
      ]);
    });
}

/** Filters, some inside or/and groups (of dimensions or of measures: Cube takes no mix), as two queries' filters with the same members and operators. */
function filtersOf(meta: CubeMeta, operators: readonly string[]) {
  const one = filterOf(meta, operators);
  const kinds = [meta.dimensions, meta.measures].filter((members) => members.length > 0).map((members) => filterOf(meta, operators, members));
  const group = fc.constantFrom(...kinds).chain((kind) => fc.tuple(fc.constantFrom('or', 'and'), kind, kind));
  const item: fc.Arbitrary<Pair> = fc.oneof(
    { weight: 3, arbitrary: one },
    group.map(([name, a, b]): Pair => [{ [name]: [a[0], b[0]] }, { [name]: [a[1], b[1]] }]),
  );
  return fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => [items.map((i) => i[0]), items.map((i) => i[1])]);
}

/** Two load queries of one cube that differ in their filters' values only. */
function queriesOf(meta: CubeMeta, operators: readonly string[]) {
  const times = meta.dimensions.filter((d) => d.type === 'time');
  const plain = meta.dimensions.filter((d) => d.type !== 'time').map((d) => d.name);
  return fc
    .record({
      measures: fc.subarray(
        meta.measures.map((m) => m.name),
        { maxLength: Math.min(2, meta.measures.length) },
      ),
      dimensions: fc.subarray(plain, { maxLength: Math.min(2, plain.length) }),
      time:
        times.length > 0
          ? fc.option(
              fc.record({
                dimension: fc.constantFrom(...times.map((t) => t.name)),
                dateRange: fc.oneof(
                  fc.constantFrom('last 7 days', 'this month', 'yesterday'),
                  fc.tuple(dateValue, dateValue).map(([a, b]) => [a, b]),
                ),
                granularity: fc.option(fc.constantFrom('hour', 'day', 'month'), { nil: undefined }),
              }),
              { nil: undefined },
            )
          : fc.constant(undefined),
      filters: filtersOf(meta, operators),
      timezone: fc.option(fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata'), { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
      renewQuery: fc.option(fc.boolean(), { nil: undefined }),
      total: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map(({ measures, dimensions, time, filters, ...rest }) => {
      const none = measures.length + dimensions.length === 0;
      const base: Query = {
        measures: none && meta.measures.length > 0 ? [meta.measures[0].name] : measures,
        dimensions: none && meta.measures.length === 0 ? [plain[0]] : dimensions,
        ...(time ? { timeDimensions: [time.granularity ? time : { dimension: time.dimension, dateRange: time.dateRange }] } : {}),
        ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
      };
      return [
        { ...base, filters: filters[0] },
        { ...base, filters: filters[1] },
      ];
    });
}

const context = fc.constantFrom<Context['securityContext']>({}, { accountId: 'northwind-audio' }, { accountId: 'harbor-lane-media' });
/** The first and second query's security contexts: mostly the same one, where the second may be answered from the first's plan. */
const contexts = fc.oneof({ weight: 3, arbitrary: context.map((c) => [c, c] as const) }, fc.tuple(context, context));

/**
 * Compiles the first query through the plans twice, then the second, each in its
 * context, and compares both with Cube's compile; counts the second queries
 * answered from a plan (no compile of Cube's at all).
 */
async function checkPair(
  first: Query,
  second: Query,
  firstContext: Context['securityContext'],
  secondContext: Context['securityContext'],
  hits: { count: number },
) {
  const apis = new Map([['v1', cube]]);
  const own = gatewayOver(apis);
  const planned = gatewayOver(apis);
  reuseSqlPlans(planned, new SqlPlans(100));
  const compiles = countCompiles(planned, cube);
  const context = (securityContext: Context['securityContext']): Context => ({ securityContext, requestId: 'req-1', modelVersion: 'v1' });
  // A shape is learnt when it is asked again: the first query twice, then the second.
  for (const [query, securityContext] of [
    [first, firstContext],
    [first, firstContext],
    [second, secondContext],
  ] as const) {
    let normal: NormalizedQuery;
    try {
      normal = normalized(query);
    } catch {
      // The gateway refuses it before any SQL: nothing to compare.
      continue;
    }
    const expected = await settle(() => own.getSqlQueriesInternal(context(securityContext), [normal]));
    compiles.count = 0;
    const actual = await settle(() => planned.getSqlQueriesInternal(context(securityContext), [normal]));
    expect(actual).toStrictEqual(expected);
    if (query === second && compiles.count === 0) hits.count += 1;
  }
}

/** The gateway's compiler, counting the compiles the gateway asks of it. */
function countCompiles(gateway: unknown, api: CompilerApi): { count: number } {
  const compiles = { count: 0 };
  const counting = Object.create(api) as CompilerApi;
  counting.getSql = (...args: Parameters<CompilerApi['getSql']>) => {
    compiles.count += 1;
    return api.getSql(...args);
  };
  (gateway as any).getCompilerApi = async () => counting;
  return compiles;
}

describe('Cube SQL through the plans', () => {
  it('is Cube’s own for every cube and every operator, with values of every kind', async () => {
    const hits = { count: 0 };
    // A seed of its own for each cube and operator (fast-check prints the one that fails): with one seed for all,
    // every pair drew alike, and the plans' hits ranged from 4 to 74 between seeds.
    let seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    for (const meta of cubes) {
      for (const operator of OPERATORS) {
        await fc.assert(
          fc.asyncProperty(queriesOf(meta, [operator]), contexts, async ([first, second], [a, b]) => checkPair(first, second, a, b, hits)),
          { numRuns: 2, seed: seed++ % 2 ** 31 },
        );
      }
    }
    // Without reuse the comparison above proves nothing: some second queries must come from a plan.
    expect(hits.count).toBeGreaterThan(cubes.length);
  });

  it('is Cube’s own for queries mixing operators, groups and contexts', async () => {
    const hits = { count: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cubes).chain((meta) => queriesOf(meta, OPERATORS)),
        contexts,
        async ([first, second], [a, b]) => checkPair(first, second, a, b, hits),
      ),
      { numRuns: 75 },
    );
  });

  it('learns a shape when it is asked again, not the first time, and answers the third from the plan', async () => {
    const planned = gatewayOver(new Map([['v1', cube]]));
    reuseSqlPlans(planned, new SqlPlans(100));
    const compiles = countCompiles(planned, cube);
    // A context of its own per request, as the service makes them (Cube marks the security context it has read).
    const context = () => ({ securityContext: {}, requestId: 'r', modelVersion: 'v1' });
    const query = (value: string) =>
      normalized({ measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'equals', values: [value] }] });
    const counts: number[] = [];
    for (const value of ['US', 'DE', 'FR']) {
      compiles.count = 0;
      const [sql] = await planned.getSqlQueriesInternal(context(), [query(value)]);
      expect(sql.sql[1]).toContain(value);
      counts.push(compiles.count);
    }
    // Cube's compile; then Cube's and the two that learn the shape; then none.
    expect(counts).toEqual([1, 3, 0]);
  });

  it('reuses the compile of a value filter, and only within its context and models', async () => {
    // The queries read Downloads only: compiling that one file keeps the test's second compile short.
    const other = compilerApiOf(
      downloadsOnly().map((file) => ({ ...file, content: file.content.replace('SELECT * FROM downloads WHERE', 'SELECT * FROM downloads_other WHERE') })),
    );
    const apis = new Map([
      ['v1', cube],
      ['v2', other],
    ]);
    const own = gatewayOver(apis);
    const planned = gatewayOver(apis);
    reuseSqlPlans(planned, new SqlPlans(100));
    const query = (value: string) =>
      normalized({
        measures: ['Downloads.count'],
        timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 7 days' }],
        filters: [{ member: 'Downloads.country', operator: 'notEquals', values: [value] }],
      });
    const account = { securityContext: { accountId: 'northwind-audio' }, requestId: 'r', modelVersion: 'v1' };
    const cases: [Context, string][] = [
      [account, 'first'],
      [account, "o'ther"],
      [{ ...account, securityContext: { accountId: 'harbor-lane-media' } }, 'third'],
      [{ ...account, modelVersion: 'v2' }, 'fourth'],
      [{ ...account, securityContext: {} }, 'fifth'],
    ];
    for (const [context, value] of cases) {
      const [sql] = await planned.getSqlQueriesInternal(context, [query(value)]);
      const [expected] = await own.getSqlQueriesInternal(context, [query(value)]);
      expect(sql).toStrictEqual(expected);
      expect(sql.sql[1]).toContain(value);
    }
    expect((await planned.getSqlQueriesInternal(cases[3][0], [query('x')]))[0].sql[0]).toContain('downloads_other');
  });
});

describe('learning a shape', () => {
  /** A compile standing for Cube's: text and parameters made from the values by `write`, with one more field. */
  const compiled = (values: string[], write: (values: string[]) => [string, unknown[]], extra: unknown = 'same') => ({
    sql: { sql: write(values), order: [{ id: 'A.x', desc: false }], extra } as CubeSql,
    values,
  });
  const own = ['US', 'US'];
  const first = ['s1', 's2'];
  const second = ['t1', 't2'];
  const learn = (write: (values: string[]) => [string, unknown[]], extra?: (values: string[]) => unknown) =>
    learnBindings(compiled(own, write, extra?.(own)), compiled(first, write, extra?.(first)), compiled(second, write, extra?.(second)));

  it('binds values written verbatim as parameters, and keeps the constants', () => {
    expect(learn((v) => ['a IN (?, ?) AND b = ?', [v[1], v[0], 'acct']])).toEqual([{ slot: 1 }, { slot: 0 }, { value: 'acct' }]);
  });

  it('refuses a value Cube transforms, writes into the text, or that changes another field', () => {
    expect(learn((v) => ['a LIKE ? AND b = ?', [`%${v[0]}%`, v[1]]])).toBeUndefined();
    expect(learn((v) => [`a = '${v[0]}' AND b = ?`, [v[1]]])).toBeUndefined();
    expect(
      learn(
        (v) => ['a = ? AND b = ?', v],
        (v) => v[0].startsWith('U'),
      ),
    ).toBeUndefined();
  });

  it('refuses a value left out of the parameters, and a parameter that is not the query’s own value', () => {
    expect(learn((v) => ['a = ?', [v[0]]])).toBeUndefined();
    expect(
      learnBindings(
        compiled(own, (v) => ['a = ? AND b = ?', [v[0], 'x']]),
        compiled(first, (v) => ['a = ? AND b = ?', v]),
        compiled(second, (v) => ['a = ? AND b = ?', v]),
      ),
    ).toBeUndefined();
  });

  it('is off for models that read filter values themselves (FILTER_PARAMS)', async () => {
    const withFilterParams = compilerApiOf(
      downloadsOnly().map((file) => ({
        ...file,
        content: file.content.replace(
          "{SECURITY_CONTEXT.accountId.filter('account_id')}",
          "{SECURITY_CONTEXT.accountId.filter('account_id')} AND {FILTER_PARAMS.Downloads.country.filter('country')}",
        ),
      })),
    );
    const planned = gatewayOver(new Map([['v1', withFilterParams]]));
    reuseSqlPlans(planned, new SqlPlans(100));
    const compiles = countCompiles(planned, withFilterParams);
    const context = { securityContext: {}, requestId: 'r', modelVersion: 'v1' };
    for (const value of ['a', 'b', 'c']) {
      const [sql] = await planned.getSqlQueriesInternal(context, [
        normalized({ measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'equals', values: [value] }] }),
      ]);
      expect(sql.sql[0]).toContain('country = ?');
    }
    expect(compiles.count).toBe(3);
  });
});
