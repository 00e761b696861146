import type { Warehouse } from '../warehouse/connection';
import { accountDigest } from '../warehouse/forget';
import { quoteIdentifier } from '../warehouse/sql';
import { readKeyFile, writeKeyFile } from './store';

/**
 * Revokes the keys of every account erased (`npm run warehouse -- forget
 * --account`) that were made before its erasure, so they are refused from
 * then on, as any revoked key is. The erasures table records an account by
 * the SHA-256 of its id (src/warehouse/forget.ts, accountDigest), which is
 * matched here against each key's account. A key made after the erasure (the account
 * taken on again) stands. Returns the keys revoked.
 */
export async function revokeErasedKeys(warehouse: Warehouse, file: string, now = new Date()): Promise<number> {
  const client = warehouse.client();
  const { database } = warehouse.config;
  const exists = await client.query({
    query: "SELECT count() AS n FROM system.tables WHERE database = {database:String} AND name = 'erasures'",
    query_params: { database },
    format: 'JSONEachRow',
  });
  if (Number((await exists.json<{ n: string }>())[0].n) === 0) return 0;
  const result = await client.query({
    query: `SELECT account_hash, toInt64(max(at)) AS at FROM ${quoteIdentifier(database)}.erasures WHERE kind = 'account' GROUP BY account_hash`,
    format: 'JSONEachRow',
  });
  const erased = new Map((await result.json<{ account_hash: string; at: string }>()).map((row) => [row.account_hash, Number(row.at)]));
  if (erased.size === 0) return 0;
  const keys = await readKeyFile(file);
  // `at` is whole seconds: a key made within the erasure's second counts as made before it.
  const revoked = keys.map((record) => {
    const at = erased.get(accountDigest(record.account));
    const before = at !== undefined && Date.parse(record.createdAt) < (at + 1) * 1000;
    return before && record.revokedAt === null ? { ...record, revokedAt: now.toISOString() } : record;
  });
  const count = revoked.filter((record, i) => record !== keys[i]).length;
  if (count > 0) await writeKeyFile(file, revoked);
  return count;
}
