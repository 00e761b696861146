import type { ClickHouseClient } from '@clickhouse/client';
import { localTableName, type TableName } from './ddl';
import { quoteIdentifier } from './sql';

/**
 * Where a write's statements go: one node (chDB or a server), or a cluster
 * made by `init --cluster`, whose tables the models read are Distributed
 * tables over a ReplicatedMergeTree `<table>_local` on every node.
 * ClickHouse refuses a mutation of a Distributed table, so on a cluster a
 * mutation names the local table and the cluster; reads and inserts name
 * the Distributed table, which fans them out.
 */
export interface Layout {
  database: string;
  cluster?: string;
}

/** ` ON CLUSTER <name>` on a cluster, nothing on one node. */
export function onClusterSql(layout: Layout): string {
  return layout.cluster === undefined ? '' : ` ON CLUSTER ${quoteIdentifier(layout.cluster)}`;
}

/** The table a read or insert names: the Distributed one on a cluster. */
export function tableSql(layout: Layout, table: string): string {
  return `${quoteIdentifier(layout.database)}.${quoteIdentifier(table)}`;
}

/** What `ALTER TABLE` names to mutate a table's rows: on a cluster, every node's local table. */
export function mutationTargetSql(layout: Layout, table: TableName): string {
  if (layout.cluster === undefined) return tableSql(layout, table);
  return `${tableSql(layout, localTableName(table))}${onClusterSql(layout)}`;
}

/**
 * The layout the database's tables have: a cluster when podcast_events is a
 * Distributed table (its engine names the cluster first), else one node.
 */
export async function layoutOf(client: ClickHouseClient, database: string): Promise<Layout> {
  const result = await client.query({
    query:
      "SELECT extract(engine_full, '^Distributed\\\\(\\'([^\\']+)\\'') AS cluster FROM system.tables WHERE database = {database:String} AND name = 'podcast_events'",
    query_params: { database },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ cluster: string }>();
  return row === undefined || row.cluster === '' ? { database } : { database, cluster: row.cluster };
}
