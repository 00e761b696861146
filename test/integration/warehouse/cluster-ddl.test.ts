import {
  addProjectionStatements,
  bookkeepingStatements,
  clusterDdlStatements,
  columnsByTable,
  ddlStatements,
  localTableName,
  projectionsByTable,
  RAW_TABLES,
  TABLES,
} from '../../../src/warehouse/ddl';
import { reduceAddressesStatement, retainedTables, ttlStatement } from '../../../src/warehouse/retention';

/** Every table the DDL makes: the cubes' and the raw rows' (link_events). */
const ALL_TABLES = [...TABLES, ...RAW_TABLES];
import { DATABASE } from '../support/constants';
import { openOracle, type Oracle } from '../support/service';

/**
 * No ClickHouse cluster runs here, so the cluster DDL is checked with
 * ClickHouse's own parser (formatQuery in chDB) and against the single-node
 * DDL the test dataset was built with.
 */

const CLUSTER = 'analytics_cluster';

let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

/** ClickHouse's canonical text of a statement; throws when its parser refuses it. */
async function format(sql: string): Promise<string> {
  const [row] = await oracle.rows<{ f: string }>(`SELECT formatQuery('${sql.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}') AS f`);
  return row.f;
}

/** The lines between the outer parentheses of a formatted CREATE TABLE (columns, then projections, one level deeper). */
function elementsOf(formatted: string): string[] {
  const lines = formatted.split('\n');
  const open = lines.indexOf('(');
  const close = lines.indexOf(')', open);
  if (open < 0 || close < open) throw new Error(`no column list in ${formatted}`);
  return lines.slice(open + 1, close);
}

/** Each projection of a formatted CREATE TABLE, as ClickHouse's parser read it. */
function projectionsOf(formatted: string): string[] {
  const elements = elementsOf(formatted);
  const start = elements.findIndex((line) => /^\s+PROJECTION /.test(line));
  return start < 0
    ? []
    : elements
        .slice(start)
        .join('\n')
        .split(/\n(?=\s{4}PROJECTION )/);
}

/** `name type` of each column of a formatted CREATE TABLE, as ClickHouse's parser read them. */
function columnsOf(formatted: string): string[] {
  const elements = elementsOf(formatted);
  const projections = elements.findIndex((line) => /^\s+PROJECTION /.test(line));
  return elements.slice(0, projections < 0 ? undefined : projections).map((line) => {
    const match = /^\s+`([^`]+)` (.+?),?$/.exec(line);
    if (!match) throw new Error(`not a column: ${line}`);
    return `${match[1]} ${match[2]}`;
  });
}

const createOf = (statements: string[], table: string) => {
  const found = statements.find((s) => new RegExp(`^CREATE TABLE IF NOT EXISTS \`${DATABASE}\`\\.${table}\\b`).test(s));
  if (!found) throw new Error(`no CREATE TABLE for ${table}`);
  return found;
};

describe('cluster DDL', () => {
  const cluster = clusterDdlStatements(DATABASE, CLUSTER);
  const single = ddlStatements(DATABASE);

  it('parses in ClickHouse, every statement ON CLUSTER', async () => {
    // The database, a local and a Distributed table per table, the bookkeeping tables.
    expect(cluster).toHaveLength(1 + 2 * ALL_TABLES.length + bookkeepingStatements(DATABASE).length);
    for (const statement of cluster) expect(await format(statement)).toContain(`ON CLUSTER ${CLUSTER}`);
  });

  it.each(ALL_TABLES)('%s: a ReplicatedMergeTree local table and a Distributed table over it, with the single-node columns', async (table) => {
    const singleColumns = columnsOf(await format(createOf(single, table)));
    const local = await format(createOf(cluster, localTableName(table)));
    const distributed = await format(createOf(cluster, table));
    expect(columnsOf(local)).toEqual(singleColumns);
    expect(columnsOf(distributed)).toEqual(singleColumns);
    expect(local).toMatch(/ENGINE = ReplicatedMergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/\{table\}', '\{replica\}'\)/);
    expect(distributed).toContain(`ENGINE = Distributed('${CLUSTER}', '${DATABASE}', '${localTableName(table)}', `);
    // Projections live in the table holding the rows: the local one, as on a single node; a Distributed table has none.
    expect(projectionsOf(local)).toEqual(projectionsOf(await format(createOf(single, table))));
    expect(projectionsOf(local)).toHaveLength(projectionsByTable().find((t) => t.table === table)?.projections.length ?? 0);
    expect(projectionsOf(distributed)).toEqual([]);
    // The same partitioning and sort key as on a single node.
    const tail = (formatted: string) => formatted.slice(formatted.indexOf('PARTITION BY'));
    expect(tail(local)).toEqual(tail(await format(createOf(single, table))));
  });

  it('adds a missing projection to the local tables ON CLUSTER, and builds it for their rows', async () => {
    for (const { table, projections } of projectionsByTable()) {
      for (const projection of projections) {
        const [add, materialize] = await Promise.all(addProjectionStatements(DATABASE, localTableName(table), projection, CLUSTER).map(format));
        expect(add).toMatch(
          new RegExp(`^ALTER TABLE ${DATABASE}\\.${localTableName(table)} ON CLUSTER ${CLUSTER}\\s+\\(ADD PROJECTION IF NOT EXISTS ${projection.name}`),
        );
        expect(materialize).toContain(`MATERIALIZE PROJECTION ${projection.name}`);
      }
    }
  });

  it('the parsed single-node columns (with their defaults) are those of the tables built from it', async () => {
    for (const table of ALL_TABLES) {
      const built = await oracle.rows<{ c: string }>(
        `SELECT concat(name, ' ', type, if(default_kind = '', '', concat(' ', default_kind, ' ', default_expression))) AS c FROM system.columns WHERE database = '${DATABASE}' AND table = '${table}' ORDER BY position`,
      );
      expect(columnsOf(await format(createOf(single, table)))).toEqual(built.map((row) => row.c));
    }
  });

  it('shards the funnel tables by the columns its joins match, so matching rows share a shard', async () => {
    const shardingKey = async (table: string) => /ENGINE = Distributed\('[^']*', '[^']*', '[^']*', (.+)\)$/m.exec(await format(createOf(cluster, table)))?.[1];
    const funnelTables = ['podcast_events', 'downloads', 'web_events'];
    const keys = await Promise.all(funnelTables.map(shardingKey));
    expect(keys).toEqual(funnelTables.map(() => 'cityHash64(account_id, ip4)'));
    // Every download with a matching web event (account and IPv4, the funnel's
    // user) hashes to the same value, hence the same shard, whatever the shard count.
    const [row] = await oracle.rows<{ matched: string; apart: string }>(`
      SELECT count() AS matched, countIf(cityHash64(d.account_id, d.ip4) != cityHash64(w.account_id, w.ip4)) AS apart
      FROM ${DATABASE}.downloads AS d
      INNER JOIN ${DATABASE}.web_events AS w ON d.account_id = w.account_id AND d.ip4 = w.ip4`);
    expect(Number(row.matched)).toBeGreaterThan(0);
    expect(Number(row.apart)).toBe(0);
  });
});

describe('retention on a cluster', () => {
  it('declares every table, and every table with addresses as holding them', () => {
    const columns = new Map(columnsByTable().map(({ table, columns }) => [table, columns.map((c) => c.split(/\s+/)[0])]));
    expect(
      retainedTables()
        .map((r) => r.table)
        .sort(),
    ).toEqual([...ALL_TABLES].sort());
    for (const { table, addresses } of retainedTables()) {
      const names = columns.get(table) ?? [];
      expect([table, addresses]).toEqual([table, ['ip4', 'ip'].filter((column) => names.includes(column))]);
    }
  });

  it.each(retainedTables())("sets and removes the TTL of $table on every node's local table", async ({ table }) => {
    for (const statement of [ttlStatement(DATABASE, table, 30, undefined, CLUSTER), ttlStatement(DATABASE, table, 0, 'x', CLUSTER)]) {
      const formatted = await format(statement ?? '');
      expect(formatted).toMatch(new RegExp(`^ALTER TABLE ${DATABASE}\\.${localTableName(table)} ON CLUSTER ${CLUSTER}\\n +\\(?(MODIFY|REMOVE) TTL`));
    }
  });

  it.each(retainedTables().filter((r) => r.addresses.length > 0))(
    "reduces the addresses of $table on every node's local table",
    async ({ table, addresses }) => {
      const formatted = await format(reduceAddressesStatement(DATABASE, table, 30, CLUSTER));
      expect(formatted).toMatch(new RegExp(`^ALTER TABLE ${DATABASE}\\.${localTableName(table)} ON CLUSTER ${CLUSTER}\\n +\\(UPDATE ${addresses[0]} = `));
    },
  );
});
