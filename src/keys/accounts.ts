import { existsSync } from 'node:fs';
// Before chdb: the allocator's options are read when the library loads.
import '../warehouse/allocator';
import { drainPending } from 'chdb';
import type { WarehouseConfig } from '../config';
import { openWarehouse, type Warehouse } from '../warehouse/connection';
import { ACCOUNT_TABLES } from '../warehouse/ddl';

/**
 * Whether an account has rows, so that `keys create` can refuse a key that
 * would read nothing (a misspelt account reads zero rows forever, without
 * an error).
 */
export type AccountCheck = (account: string) => Promise<AccountRows>;

export type AccountRows =
  | { status: 'has-rows' }
  /** No account table holds a row of it; `known` are the accounts that have rows, sorted, with their edit distance to it. */
  | { status: 'no-rows'; known: KnownAccount[] }
  /** The warehouse could not be asked; `reason` says why. */
  | { status: 'unchecked'; reason: string };

export interface KnownAccount {
  account: string;
  distance: number;
}

/** Looks the account up in every table whose rows belong to an account. */
export async function accountRows(warehouse: Warehouse, account: string): Promise<AccountRows> {
  const client = warehouse.client();
  const rows = async <T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> =>
    (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
  try {
    const tables = (
      await rows<{ name: string }>('SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN {tables:Array(String)}', {
        tables: ACCOUNT_TABLES,
      })
    ).map((row) => row.name);
    // account_id leads every account table's sort key, so each probe reads a granule or two.
    for (const table of tables) {
      const found = await rows(`SELECT 1 FROM ${table} WHERE account_id = {account:String} LIMIT 1`, { account });
      if (found.length > 0) return { status: 'has-rows' };
    }
    if (tables.length === 0) return { status: 'no-rows', known: [] };
    const known = await rows<KnownAccount>(
      `SELECT account_id AS account, toUInt32(editDistance(account_id, {account:String})) AS distance
       FROM (${tables.map((table) => `SELECT DISTINCT account_id FROM ${table}`).join(' UNION DISTINCT ')})
       WHERE account_id != '' ORDER BY account_id`,
      { account },
    );
    return { status: 'no-rows', known };
  } finally {
    await client.close();
  }
}

/**
 * The check `npm run keys` makes: through the ClickHouse server when one is
 * configured, else by opening the embedded engine's directory. libchdb lets
 * one process at a time open a directory, so while the service runs on it
 * the check cannot be made, and says so rather than guessing.
 */
export function warehouseAccountCheck(config: WarehouseConfig): AccountCheck {
  return async (account) => {
    // A directory that does not exist holds no rows; opening it would create it.
    if (config.kind === 'chdb' && !existsSync(config.dataDir)) return { status: 'no-rows', known: [] };
    let warehouse: Warehouse;
    try {
      warehouse = await openWarehouse(config);
    } catch (err) {
      return { status: 'unchecked', reason: err instanceof Error ? err.message : String(err) };
    }
    try {
      return await accountRows(warehouse, account);
    } catch (err) {
      return {
        status: 'unchecked',
        reason: `${config.kind === 'server' ? `CLICKHOUSE_URL ${config.url}` : `CHDB_DATA_DIR ${config.dataDir}`}: ${err instanceof Error ? err.message : String(err)}`,
      };
    } finally {
      await warehouse.close();
      if (config.kind === 'chdb') await drainPending();
    }
  };
}

/** The known accounts close enough to `account` to be what a typo meant, closest first, at most three. */
export function nearestAccounts(account: string, known: readonly KnownAccount[]): string[] {
  const limit = Math.max(2, Math.floor(account.length / 4));
  return known
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.account.localeCompare(b.account))
    .slice(0, 3)
    .map(({ account: name }) => name);
}
