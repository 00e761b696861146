/**
 * Another team's models: the data model and tables of Cube's own ClickHouse
 * driver tests (../shared/conformance/cube-testing-drivers, read here, not
 * copied), served as they are. The start refuses only what makes answers
 * wrong or unsafe; a missing description is a warning, and a member the
 * dialect cannot run (countDistinctApprox: Cube 0.33's ClickHouse dialect has
 * no approximate distinct count, and Cube's own ClickHouse suite skips it) is
 * left out on its own while the rest of its cube serves.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { models, modelDir, problemLines, removeModelDirs } from './support';
import { load, meta } from '../support/api';

// ../shared/conformance beside the repository (one level further up from a git worktree under wt/).
const REPO = path.resolve(__dirname, '..', '..', '..');
const FIXTURES = [path.resolve(REPO, '..'), path.resolve(REPO, '..', '..')]
  .map((parent) => path.join(parent, 'shared', 'conformance', 'cube-testing-drivers'))
  .find((candidate) => existsSync(candidate))!;
const DB = 'cube_testing_drivers';

type Member = { name: string; type?: string } & Record<string, unknown>;
type Cube = { name: string; measures?: Member[]; dimensions?: Member[] } & Record<string, unknown>;
interface Source {
  schemas: { cubes: Cube[]; views?: unknown[] };
  createStatements: { cube: string; table: string; sql: string }[];
  clickhouseFixture: { tables: Record<string, string> };
}
const source: Source = JSON.parse(readFileSync(path.join(FIXTURES, 'source.json'), 'utf8'));

/**
 * Their model as Cube's suite writes it (one file; each cube selects from its
 * table), without what came after Cube 0.33, which the service embeds and
 * whose compiler rejects it: multi-stage measures, custom granularities,
 * time shifts of dimensions, calendar cubes, to_date rolling windows and
 * views of switch dimensions.
 */
function model(): { cubes: Cube[] } {
  const cubes = (JSON.parse(JSON.stringify(source.schemas.cubes)) as Cube[]).map((cube) => {
    const { calendar: _calendar, ...rest } = cube;
    const measures = (cube.measures ?? []).filter(
      (m) => !m.multi_stage && !m.multiStage && ((m.rolling_window ?? m.rollingWindow) as { type?: string } | undefined)?.type !== 'to_date',
    );
    const dimensions = (cube.dimensions ?? []).map(({ granularities: _g, timeShift: _t, time_shift: _ts, ...d }) => d);
    return {
      ...rest,
      sql: `select * from ${source.clickhouseFixture.tables[cube.name.toLowerCase()]}`,
      dimensions,
      ...(measures.length > 0 ? { measures } : {}),
    };
  });
  return { cubes };
}

const served = model();
const measuresOf = (filter: (m: Member) => boolean) => served.cubes.flatMap((c) => (c.measures ?? []).filter(filter).map((m) => `${c.name}.${m.name}`));
const approximate = measuresOf((m) => m.type === 'count_distinct_approx').sort();

let oracle: Oracle;
let dir: string;
const env = () => ({ CLICKHOUSE_DATABASE: DB, CUBE_MODELS_DIR: dir });

beforeAll(async () => {
  oracle = openOracle();
  await oracle.command(`CREATE DATABASE IF NOT EXISTS ${DB}`);
  for (const { table, sql } of source.createStatements) {
    await oracle.command(`DROP TABLE IF EXISTS ${DB}.${table}`);
    await oracle.command(sql.replace(/^CREATE TABLE (\w+)/, `CREATE TABLE ${DB}.$1`));
  }
  // JSON is YAML: the file is their model as it stands.
  dir = modelDir({ 'ecommerce.yaml': JSON.stringify(served, null, 1) });
});
afterAll(async () => {
  await oracle.command(`DROP DATABASE IF EXISTS ${DB}`);
  await oracle.close();
  // After the describes' own hooks, which close the services over the directories.
  removeModelDirs();
});

describe('validate', () => {
  let out: { code: number; stdout: string };
  beforeAll(async () => {
    out = await models(['validate'], env());
  });

  it('passes with warnings, exit 0', () => {
    expect(out.code).toBe(0);
    expect(out.stdout.split('\n')[0]).toBe(
      `${dir}: the models compile and pass every check, with ${measuresOf(() => true).length + approximate.length} warnings:`,
    );
  });

  it('warns of each measure without a description', () => {
    const undescribed = problemLines(out.stdout).filter((line) => line.endsWith('the measure has no description: say what it counts'));
    expect(undescribed.map((line) => /: (\w+\.\w+): /.exec(line)![1]).sort()).toEqual(measuresOf((m) => !m.description).sort());
  });

  it('warns of each approximate distinct count as a member that cannot be queried, not of its cube', () => {
    const unavailable = problemLines(out.stdout).filter((line) => line.includes('cannot be queried'));
    expect(unavailable.map((line) => /: (\w+\.\w+): /.exec(line)![1]).sort()).toEqual(approximate);
    expect(unavailable[0]).toMatch(/Cube cannot generate SQL for the member: Approximate distinct count is not supported by this DB$/);
  });

  it('refuses the warnings under --strict, exit 1', async () => {
    const strict = await models(['validate', '--strict'], env());
    expect(strict.code).toBe(1);
    expect(strict.stdout.split('\n')[0]).toBe(`${dir}: ${measuresOf(() => true).length + approximate.length} problems (warnings, refused under --strict)`);
  });
});

describe('served', () => {
  let service: TestService;
  const lines: string[] = [];
  beforeAll(async () => {
    service = await startService(env(), { log: (line) => lines.push(line) });
  });
  afterAll(() => service.close());

  /** Numbers compared as numbers: sums of floats may differ in the last binary digit between two plans. */
  const numeric = (rows: Record<string, unknown>[]) =>
    rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+(\.\d+)?(e-?\d+)?$/.test(v) ? Number(v) : v])),
    );
  const expectRows = (got: Record<string, unknown>[], want: Record<string, unknown>[]) => {
    expect(got.length).toBe(want.length);
    const [g, w] = [numeric(got), numeric(want)];
    g.forEach((row, i) => {
      for (const [k, v] of Object.entries(w[i])) {
        if (typeof v === 'number') expect(row[k]).toBeCloseTo(v, 6);
        else expect(row[k]).toEqual(v);
      }
      expect(Object.keys(row).sort()).toEqual(Object.keys(w[i]).sort());
    });
  };

  it('starts, logging the warnings once at warn level', () => {
    const logged = lines
      .map((line) => JSON.parse(line) as { level: string; msg: string; warnings?: string[] })
      .filter((line) => line.msg === 'models served with warnings');
    expect(logged).toHaveLength(1);
    expect(logged[0].level).toBe('warn');
    expect(logged[0].warnings).toHaveLength(measuresOf(() => true).length + approximate.length);
  });

  it('answers Products like SQL over products', async () => {
    const res = await load(service, {
      dimensions: ['Products.category', 'Products.subCategory'],
      order: [
        ['Products.category', 'asc'],
        ['Products.subCategory', 'asc'],
      ],
    }).expect(200);
    expectRows(
      res.body.data,
      await oracle.rows(`SELECT DISTINCT category AS \`Products.category\`, sub_category AS \`Products.subCategory\` FROM ${DB}.products ORDER BY 1, 2`),
    );
  });

  it('answers Customers like SQL over customers, its approximate count left out', async () => {
    const res = await load(service, { measures: ['Customers.count'] }).expect(200);
    expectRows(res.body.data, await oracle.rows(`SELECT toString(count(customer_id)) AS \`Customers.count\` FROM ${DB}.customers`));
  });

  it('answers ECommerce like SQL over ecommerce', async () => {
    const res = await load(service, {
      measures: ['ECommerce.totalSales', 'ECommerce.totalQuantity'],
      dimensions: ['ECommerce.city'],
      order: { 'ECommerce.city': 'asc' },
    }).expect(200);
    expectRows(
      res.body.data,
      await oracle.rows(
        `SELECT city AS \`ECommerce.city\`, toString(sum(sales)) AS \`ECommerce.totalSales\`, toString(sum(quantity)) AS \`ECommerce.totalQuantity\` FROM ${DB}.ecommerce GROUP BY city ORDER BY city`,
      ),
    );
  });

  it('answers BigECommerce like SQL over bigecommerce', async () => {
    const res = await load(service, {
      measures: ['BigECommerce.count', 'BigECommerce.totalProfit'],
      dimensions: ['BigECommerce.category'],
      order: { 'BigECommerce.category': 'asc' },
    }).expect(200);
    expectRows(
      res.body.data,
      await oracle.rows(
        `SELECT category AS \`BigECommerce.category\`, toString(count(customer_id)) AS \`BigECommerce.count\`, toString(sum(profit)) AS \`BigECommerce.totalProfit\` FROM ${DB}.bigecommerce GROUP BY category ORDER BY category`,
      ),
    );
  });

  it('answers a rolling window beside a count (subqueries joined on their dimensions) in the order asked, ties by the dimension', async () => {
    const query = { measures: ['ECommerce.count', 'ECommerce.rollingCountByUnbounded'], dimensions: ['ECommerce.city'] };
    const bySql = (orderBy: string) =>
      oracle.rows(
        `SELECT city AS \`ECommerce.city\`, toString(count()) AS \`ECommerce.count\`, \`ECommerce.count\` AS \`ECommerce.rollingCountByUnbounded\`
         FROM ${DB}.ecommerce GROUP BY city ORDER BY ${orderBy}`,
      );
    const cases: [Record<string, string> | undefined, string][] = [
      [{ 'ECommerce.city': 'desc' }, 'city DESC'],
      [{ 'ECommerce.count': 'desc' }, 'count() DESC, city ASC'],
      [undefined, 'count() DESC, city ASC'],
    ];
    for (const [order, orderBy] of cases) {
      const res = await load(service, { ...query, ...(order ? { order } : {}) }).expect(200);
      expectRows(res.body.data, await bySql(orderBy));
    }
  });

  it('answers RetailCalendar like SQL over retailcalendar', async () => {
    const res = await load(service, {
      timeDimensions: [{ dimension: 'RetailCalendar.date_val', granularity: 'year' }],
      order: { 'RetailCalendar.date_val': 'asc' },
    }).expect(200);
    expectRows(
      res.body.data.map((row: Record<string, unknown>) => ({ year: row['RetailCalendar.date_val.year'] })),
      await oracle.rows(`SELECT DISTINCT formatDateTime(toStartOfYear(date_val), '%Y-%m-%dT00:00:00.000') AS year FROM ${DB}.retailcalendar ORDER BY year`),
    );
  });

  it('refuses a query naming an approximate count with a 400 that names it and says why', async () => {
    const res = await load(service, { measures: ['Customers.count', 'Customers.countApproxByCustomer'] }).expect(400);
    expect(res.body).toMatchObject({ code: 'invalid_query' });
    expect(res.body.error).toBe(
      'measures[1]: "Customers.countApproxByCustomer" cannot be queried: Cube cannot generate SQL for the member: Approximate distinct count is not supported by this DB (npm run models -- validate lists such members).',
    );
  });

  it('does not offer the members it refuses in /meta, and offers the rest of their cubes', async () => {
    const res = await meta(service).expect(200);
    const offered = (res.body.schemas as { measures: { name: string }[] }[]).flatMap((s) => s.measures.map((m) => m.name));
    for (const name of approximate) expect(offered).not.toContain(name);
    expect(offered).toEqual(expect.arrayContaining(['Customers.count', 'ECommerce.totalSales', 'BigECommerce.totalProfit']));
  });

  it("does not offer them in Cube's own /cubejs-api/v1/meta either, and refuses them there too", async () => {
    const res = await meta(service, { api: 'cubejs' }).expect(200);
    const offered = (res.body.cubes as { measures: { name: string }[] }[]).flatMap((c) => c.measures.map((m) => m.name));
    for (const name of approximate) expect(offered).not.toContain(name);
    expect(offered).toEqual(expect.arrayContaining(['Customers.count', 'ECommerce.totalSales']));
    const refused = await load(service, { measures: ['ECommerce.countApproxByCustomer'] }, { api: 'cubejs' }).expect(400);
    expect(JSON.stringify(refused.body)).toContain('\\"ECommerce.countApproxByCustomer\\" cannot be queried');
  });
});

describe('a member ClickHouse cannot run, whatever the reason', () => {
  // A column name with a typo: ClickHouse, not Cube, refuses it.
  const TYPO = `cubes:
  - name: Typo
    sql: select * from products
    measures:
      - name: count
        description: Number of products.
        type: count
    dimensions:
      - name: category
        sql: category
        type: string
      - name: subCategory
        sql: sub_categry
        type: string
`;
  let typoDir: string;
  let service: TestService;
  beforeAll(async () => {
    typoDir = modelDir({ 'Typo.yml': TYPO });
    service = await startService({ CLICKHOUSE_DATABASE: DB, CUBE_MODELS_DIR: typoDir });
  });
  afterAll(() => service.close());

  it('is a warning of validate naming the member, exit 0', async () => {
    const { code, stdout } = await models(['validate'], { CLICKHOUSE_DATABASE: DB, CUBE_MODELS_DIR: typoDir });
    expect(problemLines(stdout)).toEqual([
      expect.stringMatching(
        /^ {2}Typo\.yml: Typo\.subCategory: the member cannot be queried, so queries naming it are refused: ClickHouse rejects the member's SQL: .*sub_categry/,
      ),
    ]);
    expect(code).toBe(0);
  });

  it('leaves the rest of the cube serving', async () => {
    const res = await load(service, { measures: ['Typo.count'], dimensions: ['Typo.category'], order: { 'Typo.category': 'asc' } }).expect(200);
    expect(res.body.data).toEqual(
      await oracle.rows(`SELECT category AS \`Typo.category\`, toString(count()) AS \`Typo.count\` FROM ${DB}.products GROUP BY category ORDER BY category`),
    );
  });

  it('refuses a filter on the member with a 400 naming it', async () => {
    const res = await load(service, { measures: ['Typo.count'], filters: [{ member: 'Typo.subCategory', operator: 'equals', values: ['Tables'] }] }).expect(
      400,
    );
    expect(res.body.error).toMatch(/^filters\[0\]\.member: "Typo\.subCategory" cannot be queried: ClickHouse rejects the member's SQL: .*sub_categry/);
  });
});
