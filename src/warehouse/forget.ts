import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { ClickHouseClient } from '@clickhouse/client';
import { ACCOUNT_TABLES, addressTables, type TableName } from './ddl';
import { ensureImportTables } from './import/import';
import { mutationTargetSql, onClusterSql, tableSql, type Layout } from './layout';
import { settingsSql, sqlLiteral } from './sql';

/**
 * What `npm run warehouse -- forget` erases: every row of an account, or a
 * listener's or visitor's rows (of one account, or of all).
 */
export type Erasure = { kind: 'account'; account: string } | { kind: 'address'; address: string; account?: string };

export interface ErasureSummary {
  /** The erasure's record in the `erasures` table. */
  id: string;
  kind: Erasure['kind'];
  /** Rows removed, by table (every table the erasure looked in, 0 where it found none). */
  removed: Record<string, number>;
  /** The accounts whose rows were removed: their answers change. */
  accounts: string[];
  /**
   * An account's import records: removed where the file held only its rows (the same file can be imported again),
   * and the account taken out of those of files that held other accounts' rows too (kept, so that their rows are not
   * imported twice).
   */
  imports?: { removed: number; kept: number };
  seconds: number;
}

/** An erasure asked for wrongly (an address that is none); nothing was erased. */
export class ErasureRefused extends Error {}

/** The erasure the command's arguments ask for, checked before anything is erased. */
export function checkedErasure(erasure: Erasure): Erasure {
  if (erasure.account !== undefined && erasure.account.trim() === '') throw new ErasureRefused('--account: expected an account id');
  if (erasure.kind === 'address' && isIP(erasure.address) === 0) {
    throw new ErasureRefused(`--address: expected an IPv4 or IPv6 address, not ${JSON.stringify(erasure.address)}`);
  }
  return erasure;
}

/**
 * The rows of an address in a column of addresses (IPv6; an IPv4 address
 * as ::ffff:a.b.c.d): an IPv4 address itself, an IPv6 address by its /64,
 * the listener IAB counts (derive/rules.ts, listenerIpSql). An IPv4-mapped
 * address given as IPv6 is the IPv4 address, not its /64 (which would be
 * every IPv4 address).
 */
export function addressMatchSql(column: string, address: string): string {
  const given = `toIPv6(${sqlLiteral(address)})`;
  const range = `IPv6CIDRToRange(${given}, 64)`;
  return `if(${given} BETWEEN toIPv6('::ffff:0.0.0.0') AND toIPv6('::ffff:255.255.255.255'), ${column} = ${given}, ${column} BETWEEN tupleElement(${range}, 1) AND tupleElement(${range}, 2))`;
}

/** The SHA-256 of an account id, hex: what an account's erasure records of it. */
export function accountDigest(account: string): string {
  return createHash('sha256').update(account, 'utf8').digest('hex');
}

/**
 * Erases as asked: each table's rows counted, then removed by one mutation
 * (waited for, on every replica), then the erasure recorded. Downloads are
 * removed with the requests they came from rather than derived again: every
 * download's key holds its listener's address (IPv6 by its /64), so the
 * requests of one address change no other address's downloads. The funnel
 * reads downloads and web_events, so it follows them. Rollups are Cube's, and
 * follow once the service is told (the inbox's `forgotten`). Erasing again
 * what is erased removes nothing and records a new erasure of zero rows, so
 * an erasure interrupted part way is finished by running it again.
 */
export async function forget(client: ClickHouseClient, database: string, erasure: Erasure): Promise<ErasureSummary> {
  const started = performance.now();
  const layout = await ensureImportTables(client, database);
  const targets: { table: TableName; where: string }[] =
    erasure.kind === 'account'
      ? ACCOUNT_TABLES.map((table) => ({ table, where: `account_id = ${sqlLiteral(erasure.account)}` }))
      : addressTables().map(({ table, address }) => ({
          table,
          where: `${addressMatchSql(address, erasure.address)}${erasure.account === undefined ? '' : ` AND account_id = ${sqlLiteral(erasure.account)}`}`,
        }));
  const removed: Record<string, number> = {};
  const accounts = new Set<string>();
  for (const { table, where } of targets) {
    const [found] = await rows<{ n: string; accounts: string[] }>(
      client,
      `SELECT count() AS n, groupUniqArray(account_id) AS accounts FROM ${tableSql(layout, table)} WHERE ${where}`,
    );
    removed[table] = Number(found.n);
    if (removed[table] === 0) continue;
    for (const account of found.accounts) accounts.add(account);
    // A mutation, not a lightweight DELETE, which tables with projections refuse.
    await client.command({ query: `ALTER TABLE ${mutationTargetSql(layout, table)} DELETE WHERE ${where}${settingsSql({ mutations_sync: 2 })}` });
  }
  const imports = erasure.kind === 'account' ? await forgetImports(client, layout, erasure.account) : undefined;
  const id = randomUUID();
  const tables = Object.keys(removed);
  // The time on this process's clock, as the key file's times are (revokeErasedKeys compares them), not the warehouse's,
  // which may be another machine's.
  const at = Math.floor(Date.now() / 1000);
  await client.command({
    query: `INSERT INTO ${tableSql(layout, 'erasures')} (id, at, kind, account_hash, removed) VALUES (${sqlLiteral(id)}, toDateTime(${at}, 'UTC'), ${sqlLiteral(erasure.kind)}, ${sqlLiteral(
      erasure.kind === 'account' ? accountDigest(erasure.account) : '',
    )}, mapFromArrays(CAST(${sqlLiteral(tables)} AS Array(String)), CAST(${sqlLiteral(tables.map((t) => removed[t]))} AS Array(UInt64))))`,
  });
  return {
    id,
    kind: erasure.kind,
    removed,
    accounts: [...accounts].sort(),
    ...(imports === undefined ? {} : { imports }),
    seconds: Math.round(performance.now() - started) / 1000,
  };
}

/** An account's import records (ErasureSummary.imports). */
async function forgetImports(client: ClickHouseClient, layout: Layout, account: string): Promise<{ removed: number; kept: number }> {
  const imports = `${tableSql(layout, 'imports')}${onClusterSql(layout)}`;
  const [found] = await rows<{ only: string; shared: string }>(
    client,
    `SELECT uniqExactIf(id, accounts = [${sqlLiteral(account)}]) AS only, uniqExactIf(id, length(accounts) > 1) AS shared
     FROM ${tableSql(layout, 'imports')} WHERE has(accounts, ${sqlLiteral(account)})`,
  );
  const counts = { removed: Number(found.only), kept: Number(found.shared) };
  if (counts.removed > 0) {
    await client.command({ query: `ALTER TABLE ${imports} DELETE WHERE accounts = [${sqlLiteral(account)}]${settingsSql({ mutations_sync: 2 })}` });
  }
  if (counts.kept > 0) {
    await client.command({
      query: `ALTER TABLE ${imports} UPDATE accounts = arrayFilter(a -> a != ${sqlLiteral(account)}, accounts) WHERE has(accounts, ${sqlLiteral(account)})${settingsSql({ mutations_sync: 2 })}`,
    });
  }
  return counts;
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}
