import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

/**
 * Cube's SQL for a load, reused across queries that differ only in filter
 * values. Cube compiles every query afresh (its BaseQuery: members, joins,
 * rollup matching, the SQL text), the largest piece of its per-query CPU
 * (docs/benchmarks.md, "Load requests"), while a dashboard sends the same query
 * again and again with another value in a filter. Cube writes a filter's
 * values as parameters of its SQL, so the text stays and only the parameters
 * change: the text and parameter positions of a query's shape are learnt
 * once and the values bound into them.
 *
 * Learnt from Cube itself, never assumed: the shape is compiled twice more
 * with two sets of values no query holds, and kept only when the two
 * compiles and the query's own agree on everything but the parameters, and
 * each parameter is either the same in all three or, in all three, verbatim
 * one and the same filter value. Anything else (a value Cube transforms, a
 * value written into the text, a value that changes a rollup's choice) is
 * compiled by Cube every time. Values of operators Cube transforms or
 * branches on (dates, LIKE patterns, nulls) are never taken out of the shape:
 * see REBOUND_OPERATORS.
 */

/** Cube's compiled query (CompilerApi.getSql): the SQL and its parameters, and what the gateway and orchestrator read beside them. */
export interface CubeSql {
  sql: [string, unknown[]];
  [field: string]: unknown;
}

/** Cube's normalized query, as the gateway hands it to getSql. */
export type NormalizedQuery = Record<string, unknown> & { filters?: unknown[] };

/** Cube's compile of a query; `requestId` stands in for the request's own in the compiles that learn a shape. */
export type Compile = (query: NormalizedQuery, requestId?: string) => Promise<CubeSql>;

/**
 * Operators whose values Cube (BaseFilter, ClickHouseFilter and the
 * dialect's fixes in dialect.ts) writes as parameters as they are, one per
 * value, branching only on how many there are and whether one is null (both
 * part of the shape). Not here: the date operators (values parsed and
 * converted to the database's zone, and read by timeCondition and timeLowerBound), the LIKE
 * operators (values escaped), set/notSet/measureFilter (no values).
 */
const REBOUND_OPERATORS = new Set(['equals', 'notEquals', 'gt', 'gte', 'lt', 'lte']);

interface Filter {
  operator?: unknown;
  values?: unknown;
  and?: unknown;
  or?: unknown;
}

/**
 * The query with the values of re-boundable filters replaced by their
 * count, and those values in order; undefined when it has none.
 */
export function shapeOf(query: NormalizedQuery): { shape: string; values: string[] } | undefined {
  const values: string[] = [];
  // In the shape, a filter's values are replaced by how many there were.
  const filters = mapFilters(query.filters, (found) => {
    values.push(...found);
    return { slots: found.length };
  });
  if (values.length === 0) return undefined;
  return { shape: JSON.stringify({ ...query, filters }), values };
}

/** The query with the re-boundable filters' values, in shapeOf's order, replaced by `values`. */
export function withValues(query: NormalizedQuery, values: readonly string[]): NormalizedQuery {
  let next = 0;
  const filters = mapFilters(query.filters, (found) => {
    const taken = values.slice(next, next + found.length);
    next += found.length;
    return taken;
  });
  return { ...query, filters: filters as unknown[] };
}

/** Each filter, depth first through and/or, with the values of the re-boundable ones replaced by `replace(values)`. */
function mapFilters<T>(filters: unknown, replace: (values: string[]) => T): unknown {
  if (!Array.isArray(filters)) return filters;
  return filters.map((filter: Filter) => {
    if (filter === null || typeof filter !== 'object') return filter;
    if (Array.isArray(filter.and)) return { ...filter, and: mapFilters(filter.and, replace) };
    if (Array.isArray(filter.or)) return { ...filter, or: mapFilters(filter.or, replace) };
    const { operator, values } = filter;
    if (typeof operator !== 'string' || !REBOUND_OPERATORS.has(operator)) return filter;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) return filter;
    return { ...filter, values: replace(values as string[]) };
  });
}

/** A parameter of a learnt shape: one of the query's values, or the same in every query of the shape. */
type Binding = { slot: number } | { value: unknown };

interface Plan {
  /** The query's own compile: every field but the parameters holds for the shape. */
  template: CubeSql;
  bindings: Binding[];
}

/** Distinct values no query holds, one per slot. */
const sentinels = (count: number) => Array.from({ length: count }, () => `sql-plan-${randomUUID()}`);

/**
 * How the parameters of Cube's compile follow the values, from the query's
 * own compile and two with sentinel values; undefined unless the three
 * agree on all else and each parameter is a constant or verbatim one value.
 */
export function learnBindings(
  own: { sql: CubeSql; values: readonly string[] },
  first: { sql: CubeSql; values: readonly string[] },
  second: { sql: CubeSql; values: readonly string[] },
): Binding[] | undefined {
  const fields = Object.keys(own.sql);
  for (const other of [first.sql, second.sql]) {
    const otherFields = Object.keys(other);
    if (otherFields.length !== fields.length || !fields.every((field) => otherFields.includes(field))) return undefined;
    if (!fields.every((field) => field === 'sql' || isDeepStrictEqual(own.sql[field], other[field]))) return undefined;
  }
  const [text, params] = own.sql.sql;
  const [firstText, firstParams] = first.sql.sql;
  const [secondText, secondParams] = second.sql.sql;
  if (firstText !== text || secondText !== text || firstParams.length !== params.length || secondParams.length !== params.length) return undefined;
  const slotOf = (values: readonly string[]) => {
    const slots = new Map(values.map((value, slot) => [value, slot]));
    return (param: unknown) => (typeof param === 'string' ? slots.get(param) : undefined);
  };
  const firstSlot = slotOf(first.values);
  const secondSlot = slotOf(second.values);
  const used = new Set<number>();
  const bindings: Binding[] = [];
  for (let i = 0; i < params.length; i += 1) {
    const a = firstSlot(firstParams[i]);
    const b = secondSlot(secondParams[i]);
    if (a === undefined && b === undefined) {
      if (!isDeepStrictEqual(firstParams[i], params[i]) || !isDeepStrictEqual(secondParams[i], params[i])) return undefined;
      bindings.push({ value: params[i] });
    } else if (a !== undefined && a === b && params[i] === own.values[a]) {
      used.add(a);
      bindings.push({ slot: a });
    } else {
      return undefined;
    }
  }
  // A value missing from the parameters was written somewhere else, or dropped: not re-boundable.
  return used.size === own.values.length ? bindings : undefined;
}

/** A shape asked once: learnt when it is asked again (see SqlPlans). */
const SEEN = Symbol('seen once');

/**
 * Learnt shapes, per compiled models (one CompilerApi per models version,
 * forgotten with it) and per security context, the least recently used
 * dropped past `maxPlans` per models version; 0 turns reuse off. A shape is
 * learnt the second time it is asked, not the first: learning costs two more
 * of Cube's compiles, and some shapes never come again (a range ending "now"
 * is in the shape as the second it resolved to).
 */
export class SqlPlans {
  private readonly byCompiler = new WeakMap<object, Map<string, Plan | null | typeof SEEN>>();

  constructor(private readonly maxPlans: number) {}

  async sqlOf(compiler: object, contextKey: string, query: NormalizedQuery, compile: Compile): Promise<CubeSql> {
    const shaped = this.maxPlans > 0 ? shapeOf(query) : undefined;
    if (shaped === undefined) return compile(query);
    let plans = this.byCompiler.get(compiler);
    if (plans === undefined) {
      plans = new Map();
      this.byCompiler.set(compiler, plans);
    }
    const key = `${contextKey}\n${shaped.shape}`;
    const plan = plans.get(key);
    if (plan !== undefined && plan !== SEEN) {
      plans.delete(key);
      plans.set(key, plan);
      if (plan === null) return compile(query);
      const params = plan.bindings.map((binding) => ('slot' in binding ? shaped.values[binding.slot] : binding.value));
      return { ...plan.template, sql: [plan.template.sql[0], params] };
    }
    const own = await compile(query);
    const before = plans.get(key);
    if (before === undefined || before === SEEN) {
      const next = before === undefined ? SEEN : await this.learn(query, shaped.values, own, compile);
      // Unless a request of the same shape got there first while this one compiled.
      if (plans.get(key) === before) {
        plans.delete(key);
        plans.set(key, next);
        if (plans.size > this.maxPlans) plans.delete(plans.keys().next().value!);
      }
    }
    return own;
  }

  /** The shape's plan, or null when Cube's compile does not bind the values verbatim (or a sentinel compile fails). */
  private async learn(query: NormalizedQuery, values: string[], own: CubeSql, compile: Compile): Promise<Plan | null> {
    const first = sentinels(values.length);
    const second = sentinels(values.length);
    try {
      const [firstSql, secondSql] = await Promise.all([
        compile(withValues(query, first), `sql-plan-${randomUUID()}`),
        compile(withValues(query, second), `sql-plan-${randomUUID()}`),
      ]);
      const bindings = learnBindings({ sql: own, values }, { sql: firstSql, values: first }, { sql: secondSql, values: second });
      return bindings ? { template: own, bindings } : null;
    } catch {
      return null;
    }
  }
}

/**
 * Model code sees a query's filter values through FILTER_PARAMS (and
 * FILTER_GROUP) and may do anything with them, even branch on a value in a
 * way two sentinels cannot reveal: models that use them are always compiled
 * by Cube. Nothing else in a model sees filter values (SECURITY_CONTEXT is
 * part of a plan's key, and the dialect's own helpers read date filters only).
 */
const FILTER_VALUES_IN_MODELS = /\bFILTER_(PARAMS|GROUP)\b/;

interface CompilerApiLike {
  getSql(query: unknown): Promise<CubeSql>;
  repository: { dataSchemaFiles(): Promise<{ content: string }[]> };
}

interface PlanningGateway {
  getSqlQueriesInternal(context: { requestId: string }, normalizedQueries: NormalizedQuery[]): Promise<CubeSql[]>;
  getCompilerApi(context: unknown): Promise<CompilerApiLike>;
  coerceForSqlQuery(query: NormalizedQuery, context: unknown): unknown;
  securityContextExtractor(context: unknown): unknown;
  log(event: Record<string, unknown>, context: unknown): void;
  duration(started: Date): number;
}

/**
 * The gateway's getSqlQueriesInternal (the SQL of a load, and of its total),
 * as Cube writes it, through `plans`. Cube's `sql` and `dryRun` compile on
 * their own, so they, and the SQL clients see there, are always Cube's
 * compile. The request id given to the compiles that learn a shape is not
 * the request's, so a compile that carried the id would not be kept.
 */
export function reuseSqlPlans(gateway: unknown, plans: SqlPlans): void {
  const target = gateway as PlanningGateway;
  const own = target.getSqlQueriesInternal.bind(target);
  const plannable = new WeakMap<CompilerApiLike, Promise<boolean>>();
  const plannableModels = (compilerApi: CompilerApiLike) => {
    let known = plannable.get(compilerApi);
    if (known === undefined) {
      known = compilerApi.repository.dataSchemaFiles().then((files) => !files.some((file) => FILTER_VALUES_IN_MODELS.test(file.content)));
      plannable.set(compilerApi, known);
    }
    return known;
  };
  target.getSqlQueriesInternal = async (context, normalizedQueries) => {
    const compilerApi = await target.getCompilerApi(context);
    if (!(await plannableModels(compilerApi))) return own(context, normalizedQueries);
    const contextKey = JSON.stringify(target.securityContextExtractor(context) ?? null);
    const compile: Compile = (query, requestId) =>
      compilerApi.getSql(target.coerceForSqlQuery(query, requestId === undefined ? context : { ...context, requestId }));
    return Promise.all(
      normalizedQueries.map(async (normalizedQuery) => {
        const started = new Date();
        const sqlQuery = await plans.sqlOf(compilerApi, contextKey, normalizedQuery, compile);
        target.log({ type: 'Load Request SQL', duration: target.duration(started), query: normalizedQuery, sqlQuery }, context);
        return sqlQuery;
      }),
    );
  };
}
