import type { Logger } from '../../log';
import type { Warehouse } from '../connection';
import type { TableName } from '../ddl';
import { layoutOf, mutationTargetSql, tableSql } from '../layout';
import { settingsSql } from '../sql';
import { placeExpressions, type PlaceExpressions } from './places';

/** Each table with places: the column its IP is in, and which place columns it keeps. */
const PLACE_COLUMNS: { table: TableName; ip: string; type: 'IPv6'; columns: (keyof PlaceExpressions)[] }[] = [
  { table: 'downloads', ip: 'ip', type: 'IPv6', columns: ['city', 'country', 'continent', 'timezone', 'org'] },
  // `ip`, not ip4: a request or a visitor over IPv6 has ip4 0.0.0.0, and its places were wiped by a refresh.
  { table: 'podcast_events', ip: 'ip', type: 'IPv6', columns: ['city', 'country'] },
  { table: 'web_events', ip: 'ip', type: 'IPv6', columns: ['city', 'country'] },
];

/**
 * Gives every row the places the loaded IP database has for its address
 * (after an upgrade of the database): one ALTER TABLE … UPDATE per table,
 * which ClickHouse runs as a mutation rewriting those columns of every part
 * (and the projections that hold them), waited for (on a cluster, of every
 * node's `_local` table, ON CLUSTER: every node has the dictionaries). Rows
 * whose address the database does not know get empty places. The
 * dictionaries are the warehouse database's; the tables may be another
 * database's.
 */
export async function refreshPlaces(
  warehouse: Warehouse,
  logger?: Logger,
  tablesDatabase = warehouse.config.database,
): Promise<{ table: string; rows: number; seconds: number }[]> {
  const { database } = warehouse.config;
  const client = warehouse.client();
  const done: { table: string; rows: number; seconds: number }[] = [];
  const layout = await layoutOf(client, tablesDatabase);
  for (const { table, ip, type, columns } of PLACE_COLUMNS) {
    const places = placeExpressions(database, ip, type);
    const started = performance.now();
    await client.command({
      // Waits for the mutation; dictGet counts as non-deterministic for mutations, which a replicated table refuses by default.
      query: `ALTER TABLE ${mutationTargetSql(layout, table)} UPDATE ${columns.map((c) => `${c} = ${places[c]}`).join(', ')} WHERE true${settingsSql({ mutations_sync: 2, allow_nondeterministic_mutations: 1 })}`,
    });
    const seconds = Math.round(performance.now() - started) / 1000;
    const result = await client.query({ query: `SELECT count() AS n FROM ${tableSql(layout, table)}`, format: 'JSONEachRow' });
    const rows = Number((await result.json<{ n: string | number }>())[0].n);
    logger?.info('places refreshed', { table, rows, seconds });
    done.push({ table, rows, seconds });
  }
  return done;
}
