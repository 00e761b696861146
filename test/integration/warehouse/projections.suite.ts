import { ddlStatements, projectionsByTable } from '../../../src/warehouse/ddl';
import { openWarehouse, type Warehouse } from '../../../src/warehouse/connection';
import { addMissingProjections } from '../../../src/warehouse/setup';
import { API_KEY, DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';
import { cubeSql } from '../support/api';

/**
 * The dashboard shapes are answered from the tables' hourly aggregate
 * projections: the SQL Cube generates for each (from /cubejs-api/v1/sql, as
 * the service runs it, account condition included) reads the projection
 * according to ClickHouse's own EXPLAIN, and gives the same rows as the same
 * SQL with projections switched off, which reads the raw rows. Also with
 * the retention bound every model reads its tables through.
 */
const ACCOUNT = 'northwind-audio';

const SHAPES: Record<string, { query: Record<string, unknown>; projection: string }> = {
  'Downloads.count by country, last 30 days': {
    query: { measures: ['Downloads.count'], dimensions: ['Downloads.country'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 30 days' }] },
    projection: 'hourly',
  },
  'Downloads.count by day, last 90 days': {
    query: { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 90 days' }] },
    projection: 'hourly',
  },
  'PodcastEvents.count by parsedUa, last 30 days': {
    query: {
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.parsedUa'],
      timeDimensions: [{ dimension: 'PodcastEvents.ts', dateRange: 'last 30 days' }],
    },
    projection: 'hourly',
  },
  'LinksDashboard views and unique views by utmSource, last 30 days': {
    query: {
      measures: ['LinksDashboard.linkViewCount', 'LinksDashboard.uniqueLinkViewCount'],
      dimensions: ['LinksDashboard.utmSource'],
      timeDimensions: [{ dimension: 'LinksDashboard.timestamp', dateRange: 'last 30 days' }],
    },
    projection: 'hourly',
  },
  'LinksAdvancedAnalytics conversion rate by utmSource and day in Europe/Berlin, last 30 days': {
    query: {
      measures: ['LinksAdvancedAnalytics.conversionRate', 'LinksAdvancedAnalytics.uniqueLinkViewCount'],
      dimensions: ['LinksAdvancedAnalytics.utmSource'],
      timeDimensions: [{ dimension: 'LinksAdvancedAnalytics.timestamp', granularity: 'day', dateRange: 'last 30 days' }],
      timezone: 'Europe/Berlin',
    },
    projection: 'hourly',
  },
};

let service: TestService;
let oracle: Oracle;
let warehouse: Warehouse;
/** The client the service answers queries with (read-only, its settings appended to each statement), as Cube's driver gets it. */
let serviceClient: ReturnType<Warehouse['queryClient']>;
beforeAll(async () => {
  // Every table's rows read through its retention bound (SQL_UTILS.retained), which must leave the projections usable; 10 years keep every row.
  service = await startService({ RETENTION_RAW_DAYS: '3650', RETENTION_DERIVED_DAYS: '3650' }, { accounts: [ACCOUNT] });
  oracle = openOracle();
  warehouse = await openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  serviceClient = warehouse.queryClient({ timeoutMs: 60_000, maxResultRows: 1_000_000, maxMemoryBytes: 4 * 2 ** 30 });
});
afterAll(async () => {
  await warehouse.close();
  await oracle.close();
  await service.close();
});

/** Rows of a statement run as the service runs it. */
const asService = async (sql: string) => (await serviceClient.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();

const KEYS = [
  ['an account key', () => service.accountKeys[ACCOUNT]],
  ['the operator key', () => API_KEY],
] as const;

/** Cube's SQL for the query under the key, its parameters inlined as string literals and its tables qualified (the oracle's session has no current database). */
async function generatedSql(query: Record<string, unknown>, key: string): Promise<string> {
  const res = await cubeSql(service, query, { key }).expect(200);
  const [text, params] = res.body.sql.sql as [string, unknown[]];
  let next = 0;
  const sql = text.replace(/\?/g, () => `'${String(params[next++]).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
  expect(next).toBe(params.length);
  return sql.replace(/\bFROM (\w+) WHERE/g, `FROM ${DATABASE}.$1 WHERE`);
}

const explain = async (sql: string) => (await asService(`EXPLAIN projections = 1 ${sql}`)).map((row) => row.explain).join('\n');

describe.each(KEYS)('dashboard shapes with %s', (_label, key) => {
  it.each(Object.entries(SHAPES))('%s reads its projection and answers as the raw rows do', async (_name, { query, projection }) => {
    const sql = await generatedSql(query, key());
    const plan = await explain(sql);
    expect(plan).toContain(`ReadFromMergeTree (${projection})`);

    const fromProjection = await asService(sql);
    const fromRows = await oracle.rows(`${sql} SETTINGS optimize_use_projections = 0`);
    const rawPlan = (await oracle.rows<{ explain: string }>(`EXPLAIN projections = 1 ${sql} SETTINGS optimize_use_projections = 0`))
      .map((row) => row.explain)
      .join('\n');
    expect(rawPlan).not.toContain(`ReadFromMergeTree (${projection})`);
    expect(fromRows.length).toBeGreaterThan(0);
    // Rows tied in Cube's ORDER BY may come in either order.
    const sorted = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).sort();
    expect(sorted(fromProjection)).toEqual(sorted(fromRows));
  });
});

describe('a query the projections cannot answer exactly', () => {
  it.each([
    ['a range that does not start on the hour', { dateRange: ['2026-01-01T10:30:00', '2030-01-01T00:00:00'] }, 'UTC'],
    ['day buckets in a half-hour time zone', { granularity: 'day', dateRange: 'last 30 days' }, 'Asia/Kolkata'],
  ] as const)('reads the raw rows: %s', async (_name, timeDimension, timezone) => {
    const query = {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country'],
      timeDimensions: [{ dimension: 'Downloads.ts', ...timeDimension }],
      timezone,
    };
    const plan = await explain(await generatedSql(query, API_KEY));
    expect(plan).not.toContain('ReadFromMergeTree (hourly)');
    expect(plan).toContain(`ReadFromMergeTree (${DATABASE}.downloads)`);
  });
});

describe('tables made before their projections', () => {
  const database = 'projection_migration';
  afterAll(async () => {
    await oracle.rows(`DROP DATABASE IF EXISTS ${database} SYNC`);
  });

  it('get them from the DDL step, built for the rows already there, and then answer from them', async () => {
    // The tables as an earlier version created them: the same DDL without its PROJECTION clauses.
    for (const statement of ddlStatements(database)) await oracle.rows(statement.replace(/,\n\s*PROJECTION \w+ \(.*\)(?=\n\))/g, ''));
    const tables = projectionsByTable().map((t) => t.table);
    for (const table of tables) await oracle.rows(`INSERT INTO ${database}.${table} SELECT * FROM ${DATABASE}.${table}`);
    const projectionParts = () =>
      oracle.rows<{ table: string; rows: string }>(
        `SELECT table, toString(sum(rows)) AS rows FROM system.projection_parts WHERE database = '${database}' AND active GROUP BY table ORDER BY table`,
      );
    expect(await projectionParts()).toEqual([]);

    const added = await addMissingProjections({ ...warehouse, config: { ...warehouse.config, database } });
    expect(added.map((a) => a.table).sort()).toEqual([...tables].sort());
    expect((await projectionParts()).map((p) => p.table)).toEqual([...tables].sort());
    const plan = await explain(`SELECT country, count() FROM ${database}.downloads WHERE toStartOfHour(ts) >= now() - INTERVAL 30 DAY GROUP BY country`);
    expect(plan).toContain('ReadFromMergeTree (hourly)');

    // Once there, nothing more to add.
    expect(await addMissingProjections({ ...warehouse, config: { ...warehouse.config, database } })).toEqual([]);
  });
});
