/**
 * Account isolation under random queries (fast-check): over every
 * account-owned table cube, queries with random dimensions, filters (equals
 * and notEquals on values of every account, set/notSet, nested in and/or),
 * orders, limits and ungrouped forms run with one account's key. Each
 * answer must equal the same query written as direct SQL over that
 * account's rows only: a row of another account that contributed anything
 * (a group, a count) would make them differ.
 *
 * RUNS queries per cube; on a failure fast-check prints the seed and the
 * shrunk query.
 */
import fc from 'fast-check';
import { CUBES, type CubeSpec, type Dim } from '../support/catalog';
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load } from '../support/api';

const RUNS = 20;
const db = DATABASE;

type Query = Record<string, unknown>;
type Row = Record<string, string>;
type TableCube = CubeSpec & { table: string };

let service: TestService;
let oracle: Oracle;
let accounts: string[];
/** Per "Cube.dim": values drawn from every account's rows. */
const pools = new Map<string, string[]>();

const cubes = CUBES.filter((c): c is TableCube => c.accountOwned && c.table !== undefined);
const stringDims = (spec: CubeSpec) => spec.dims.filter((d) => d.type === 'string' && !d.nullable);
const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

beforeAll(async () => {
  oracle = openOracle();
  accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.downloads ORDER BY a`)).map((r) => r.a);
  service = await startService({}, { accounts });
  for (const spec of cubes) {
    for (const dim of stringDims(spec)) {
      // Each account's most frequent values, so filters name other accounts' values often.
      const rows = await oracle.rows<{ v: string }>(`
        SELECT v FROM (
          SELECT account_id, ${dim.sql} AS v, count() AS c FROM ${db}.${spec.table} GROUP BY account_id, v
          ORDER BY c DESC, v LIMIT 3 BY account_id)
        ORDER BY v`);
      pools.set(`${spec.cube}.${dim.name}`, [...new Set(rows.map((r) => String(r.v)))]);
    }
  }
});
afterAll(async () => {
  await service.close();
  await oracle.close();
});

interface Leaf {
  dim: Dim;
  operator: 'equals' | 'notEquals' | 'set' | 'notSet';
  values: string[];
}
type Filter = Leaf | { or: Filter[] } | { and: Filter[] };

interface Shape {
  spec: TableCube;
  account: string;
  measure: string | undefined;
  dims: Dim[];
  filters: Filter[];
  order: { dim: Dim; direction: 'asc' | 'desc' } | undefined;
  limit: number | undefined;
}

function leafArb(spec: TableCube): fc.Arbitrary<Leaf> {
  return fc.constantFrom(...stringDims(spec)).chain((dim) => {
    const pool = pools.get(`${spec.cube}.${dim.name}`) ?? [];
    return fc.record({
      dim: fc.constant(dim),
      operator: fc.constantFrom<Leaf['operator']>('equals', 'equals', 'notEquals', 'set', 'notSet'),
      values: fc.subarray(pool, { minLength: 1, maxLength: Math.min(4, pool.length) }),
    });
  });
}

function filterArb(spec: TableCube): fc.Arbitrary<Filter> {
  const { filter } = fc.letrec<{ filter: Filter }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leafArb(spec),
      fc.record({ or: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ and: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }),
    ),
  }));
  return filter;
}

function shapeArb(spec: TableCube): fc.Arbitrary<Shape> {
  return fc
    .record({
      account: fc.constantFrom(...accounts),
      measure: fc.option(fc.constantFrom(...spec.counts), { nil: undefined }),
      dims: fc.subarray(stringDims(spec), { maxLength: Math.min(2, stringDims(spec).length) }),
      filters: fc.array(filterArb(spec), { maxLength: 3 }),
      limit: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
      direction: fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
    })
    .filter((s) => s.measure !== undefined || s.dims.length > 0)
    .map(({ dims, direction, ...rest }) => ({ spec, dims, order: dims.length > 0 ? { dim: dims[0], direction } : undefined, ...rest }));
}

const member = (spec: CubeSpec, dim: Dim) => `${spec.cube}.${dim.name}`;

function toQuery(shape: Shape): Query {
  const { spec } = shape;
  const filter = (f: Filter): unknown =>
    'or' in f
      ? { or: f.or.map(filter) }
      : 'and' in f
        ? { and: f.and.map(filter) }
        : {
            member: member(spec, f.dim),
            operator: f.operator,
            ...(f.operator === 'equals' || f.operator === 'notEquals' ? { values: f.values } : {}),
          };
  return {
    ...(shape.measure ? { measures: [`${spec.cube}.${shape.measure}`] } : {}),
    dimensions: shape.dims.map((d) => member(spec, d)),
    filters: shape.filters.map(filter),
    ...(shape.order ? { order: [[member(spec, shape.order.dim), shape.order.direction]] } : {}),
    ...(shape.limit ? { limit: shape.limit } : {}),
  };
}

/** The same query as SQL over one account's rows, written without Cube. */
function toSql(shape: Shape): string {
  const { spec } = shape;
  const where = (f: Filter): string => {
    if ('or' in f) return `(${f.or.map(where).join(' OR ')})`;
    if ('and' in f) return `(${f.and.map(where).join(' AND ')})`;
    const values = f.values.map(quote).join(', ');
    switch (f.operator) {
      case 'equals':
        return `(${f.dim.sql}) IN (${values})`;
      case 'notEquals':
        return `(${f.dim.sql}) NOT IN (${values})`;
      // Text members only: '' is not set, as NULL is.
      case 'set':
        return `((${f.dim.sql}) IS NOT NULL AND (${f.dim.sql}) != '')`;
      case 'notSet':
        return `((${f.dim.sql}) IS NULL OR (${f.dim.sql}) = '')`;
    }
  };
  const columns = [
    ...shape.dims.map((d) => `toString(${d.sql}) AS \`${member(spec, d)}\``),
    ...(shape.measure ? [`toString(${spec.countSql[shape.measure]}) AS \`${spec.cube}.${shape.measure}\``] : []),
  ];
  const conditions = [`account_id = ${quote(shape.account)}`, ...shape.filters.map(where)];
  const groupBy = shape.dims.length > 0 ? `GROUP BY ${shape.dims.map((d) => d.sql).join(', ')}` : '';
  return `SELECT ${columns.join(', ')} FROM ${db}.${spec.table} WHERE ${conditions.join(' AND ')} ${groupBy}`;
}

const canonical = (rows: Row[]) => rows.map((r) => JSON.stringify(Object.entries(r).sort())).sort();

async function check(shape: Shape): Promise<void> {
  const query = toQuery(shape);
  const res = await load(service, query, { key: service.accountKeys[shape.account] });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(query)}`);
  const got: Row[] = res.body.data;
  const want = await oracle.rows<Row>(toSql(shape));
  if (shape.limit === undefined || want.length <= shape.limit) {
    expect(canonical(got)).toEqual(canonical(want));
  } else {
    // A limited page: the right number of rows, each one of the account's.
    expect(got).toHaveLength(shape.limit);
    const allowed = new Set(canonical(want));
    for (const row of canonical(got)) expect(allowed.has(row)).toBe(true);
  }
}

describe.each(cubes)('$cube with an account key', (spec) => {
  it('answers every random query exactly as SQL over that account alone', async () => {
    await fc.assert(fc.asyncProperty(shapeArb(spec), check), { numRuns: RUNS });
  });
});
