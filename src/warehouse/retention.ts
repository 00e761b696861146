import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import type { RetentionConfig } from '../config';
import type { Logger } from '../log';
import { localTableName, type TableName } from './ddl';
import { layoutOf } from './layout';
import { quoteIdentifier, settingsSql } from './sql';

/** Which retention setting (RetentionConfig) a table's rows follow. */
type RetentionKind = 'raw' | 'derived' | 'charts';

type AddressColumn = 'ip4' | 'ip';

interface Retained {
  table: TableName;
  kind: RetentionKind;
  /** The column whose time a row's age is counted from. */
  time: string;
  /** The columns of a listener's or visitor's address it holds (`ip4 IPv4`, `ip IPv6`), reduced by reduceAddresses; none: it holds none. */
  addresses: readonly AddressColumn[];
}

/** Every table with rows that expire, one line each: its setting, its time column, and whether it holds addresses. */
const RETAINED: readonly Retained[] = [
  { table: 'podcast_events', kind: 'raw', time: 'ts', addresses: ['ip4', 'ip'] },
  { table: 'web_events', kind: 'raw', time: 'track_ts', addresses: ['ip4', 'ip'] },
  { table: 'link_events', kind: 'raw', time: 'ts', addresses: ['ip'] },
  { table: 'downloads', kind: 'derived', time: 'ts', addresses: ['ip4', 'ip'] },
  { table: 'link_views', kind: 'derived', time: 'ts', addresses: [] },
  { table: 'channel_ranks', kind: 'charts', time: 'snapshot_ts', addresses: [] },
  { table: 'episode_ranks', kind: 'charts', time: 'snapshot_ts', addresses: [] },
];

function declared(table: TableName): Retained {
  const retained = RETAINED.find((r) => r.table === table);
  if (!retained) throw new Error(`${table} has no retention declared`);
  return retained;
}

/** The tables of RETAINED, and the address columns each holds. */
export function retainedTables(): { table: TableName; addresses: readonly AddressColumn[] }[] {
  return RETAINED.map(({ table, addresses }) => ({ table, addresses }));
}

const DAYS: Record<RetentionKind, keyof RetentionConfig> = { raw: 'rawDays', derived: 'derivedDays', charts: 'chartsDays' };

/**
 * The instant a row expires: its hour plus the retention, written as
 * ClickHouse prints a TTL (system.tables.engine_full), so the one on a table
 * is compared as text. By the hour, not the second: a row is then kept or not
 * by `toStartOfHour(time)`, which the hourly projections (ddl.ts) hold, so the
 * models' bound (retainedRowsSql) leaves them usable.
 */
function expiry(retained: Retained, days: number): string {
  return `toStartOfHour(${retained.time}) + toIntervalDay(${days})`;
}

/**
 * Per table, the condition a row must meet to be read: before its expiry.
 * The engine removes expired rows at its next merge of their part (TTL),
 * hours later; every model reads its table through this condition
 * (SQL_UTILS.retained, src/cube/engine/dialect.ts), so no answer counts a
 * row in between. `1 = 1` for a table kept for ever.
 */
export function retainedRowsSql(retention: RetentionConfig): Record<string, string> {
  return Object.fromEntries(
    RETAINED.map((r) => {
      const days = retention[DAYS[r.kind]];
      return [r.table, days > 0 ? `${expiry(r, days)} > now()` : '1 = 1'];
    }),
  );
}

/**
 * The statement that gives `table` the TTL its setting asks for, or takes it
 * away (0 days), once the table's current TTL (`current`, undefined for none)
 * differs; undefined when it is already so. MODIFY TTL also removes the rows
 * already expired (materialize_ttl_after_modify), waited for. On a cluster,
 * every node's local table.
 */
export function ttlStatement(database: string, table: TableName, days: number, current: string | undefined, cluster?: string): string | undefined {
  const retained = declared(table);
  const wanted = days > 0 ? expiry(retained, days) : undefined;
  if (wanted === current) return undefined;
  const target = `${quoteIdentifier(database)}.${quoteIdentifier(cluster ? localTableName(retained.table) : retained.table)}${onCluster(cluster)}`;
  return wanted === undefined ? `ALTER TABLE ${target} REMOVE TTL` : `ALTER TABLE ${target} MODIFY TTL ${wanted}${settingsSql({ mutations_sync: 2 })}`;
}

const onCluster = (cluster?: string) => (cluster ? ` ON CLUSTER ${quoteIdentifier(cluster)}` : '');

/** A table's TTL as system.tables prints it in engine_full, undefined when it has none. */
function ttlOf(engineFull: string): string | undefined {
  return / TTL (.+?)(?: SETTINGS |$)/.exec(engineFull)?.[1];
}

/**
 * Gives every table of RETAINED the TTL its setting asks for (the engine then
 * removes expired rows itself, on chDB and a server alike), logging each
 * change. Run by `init` and by every start on chDB, so a changed setting
 * takes effect there.
 */
async function applyRetention(client: ClickHouseClient, database: string, retention: RetentionConfig, logger?: Logger, cluster?: string): Promise<void> {
  const tables = RETAINED.map((r) => (cluster ? localTableName(r.table) : r.table));
  const result = await client.query({
    query: 'SELECT name, engine_full FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)}',
    query_params: { database, tables },
    format: 'JSONEachRow',
  });
  const engines = new Map((await result.json<{ name: string; engine_full: string }>()).map((row) => [row.name, row.engine_full]));
  for (const retained of RETAINED) {
    const engine = engines.get(cluster ? localTableName(retained.table) : retained.table);
    if (engine === undefined) continue;
    const days = retention[DAYS[retained.kind]];
    const statement = ttlStatement(database, retained.table, days, ttlOf(engine), cluster);
    if (statement === undefined) continue;
    await client.command({ query: statement });
    logger?.info('retention changed', { table: retained.table, days: days === 0 ? 'forever' : days, was: ttlOf(engine) ?? 'forever' });
  }
}

/**
 * An address cut to its network, so that it no longer names one listener:
 * IPv4 to its /24 (also as the IPv4-mapped IPv6 ::ffff:a.b.c.0), IPv6 to its
 * /48, as web analytics' IP anonymisation does. The cut keeps no key (a keyed
 * hash of an IPv4 address can be undone by hashing all 2^32 of them as long
 * as its key is kept) and keeps the network a place or an organisation was
 * looked up from.
 */
const REDUCED: Record<AddressColumn, string> = {
  ip4: 'IPv4CIDRToRange(ip4, 24).1',
  ip: "if(IPv6CIDRToRange(ip, 96).1 = toIPv6('::ffff:0.0.0.0'), IPv6CIDRToRange(ip, 120).1, IPv6CIDRToRange(ip, 48).1)",
};

/** The rows of a table with addresses older than `days`, whose addresses are not yet reduced. */
function unreducedSql(retained: Retained, days: number): string {
  return `${retained.time} < now() - toIntervalDay(${days}) AND (${retained.addresses.map((c) => `${c} != ${REDUCED[c]}`).join(' OR ')})`;
}

/** The statement that reduces the addresses of the rows older than `days` of a table (on a cluster, every node's local table). */
export function reduceAddressesStatement(database: string, table: TableName, days: number, cluster?: string): string {
  const retained = declared(table);
  if (retained.addresses.length === 0) throw new Error(`${table} holds no addresses`);
  const target = `${quoteIdentifier(database)}.${quoteIdentifier(cluster ? localTableName(table) : table)}${onCluster(cluster)}`;
  return `ALTER TABLE ${target} UPDATE ${retained.addresses.map((c) => `${c} = ${REDUCED[c]}`).join(', ')} WHERE ${unreducedSql(retained, days)}${settingsSql({ mutations_sync: 2 })}`;
}

/**
 * Reduces every stored address older than `days` (ADDRESS_RETENTION_DAYS),
 * in every table of RETAINED that holds addresses: an update of those rows
 * in place, so every row (every download) is still there and counted. The
 * tables are reduced at one cutoff, so the funnel and the joins on addresses
 * still match a listener's reduced rows to each other. Nothing when `days`
 * is 0. Logs the rows reduced per table.
 */
async function reduceAddresses(client: ClickHouseClient, database: string, days: number, logger?: Logger, cluster?: string): Promise<void> {
  if (days === 0) return;
  const reduced: Record<string, number> = {};
  for (const retained of RETAINED.filter((r) => r.addresses.length > 0)) {
    const table = `${quoteIdentifier(database)}.${quoteIdentifier(retained.table)}`;
    const result = await client.query({ query: `SELECT count() AS n FROM ${table} WHERE ${unreducedSql(retained, days)}`, format: 'JSONEachRow' });
    const n = Number((await result.json<{ n: string }>())[0]?.n ?? 0);
    if (n === 0) continue;
    await client.command({ query: reduceAddressesStatement(database, retained.table, days, cluster) });
    reduced[retained.table] = n;
  }
  if (Object.keys(reduced).length > 0) logger?.info('addresses reduced', { days, rows: reduced });
}

/** Refusal to derive downloads again over requests whose addresses are reduced. */
export class AddressesReduced extends Error {}

/**
 * Why downloads from `from` (epoch seconds) on cannot be derived again, when
 * the span starts before the addresses' cutoff: the dedup keys (IAB, OP3)
 * need the whole address, and derived again from /24 networks, a network's
 * listeners would become one, and the span's downloads fewer. Undefined when
 * they can.
 */
export function reducedAddressesReason(from: number, days: number, now = Date.now()): string | undefined {
  if (days === 0) return undefined;
  const cutoff = now / 1000 - days * 86_400;
  if (from >= cutoff) return undefined;
  return `downloads from ${new Date(from * 1000).toISOString()} on cannot be derived again: addresses older than ADDRESS_RETENTION_DAYS (${days} days, before ${new Date(cutoff * 1000).toISOString()}) are reduced to their network, which cannot tell listeners apart`;
}

/** What an import's rejects are called in REJECTS_DIR (src/warehouse/import/import.ts writes them). */
export const REJECTS_SUFFIX = '.rejects.ndjson';

/** Removes the rejects files (raw lines, addresses in them) last written more than `days` ago; none when `days` is 0. */
export function removeOldRejects(dir: string, days: number, now = Date.now()): string[] {
  if (days === 0 || !existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    if (!name.isFile() || !name.name.endsWith(REJECTS_SUFFIX)) continue;
    const file = path.join(dir, name.name);
    if (statSync(file).mtimeMs < now - days * 86_400_000) {
      rmSync(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}

/** One pass over the stored data: where, by which settings, logged where. On a cluster it goes to the nodes' `_local` tables. */
export interface RetentionRun {
  client: ClickHouseClient;
  database: string;
  settings: { retention: RetentionConfig; rejectsDir: string };
  logger?: Logger;
}

/**
 * What the settings ask of the stored data, done now: each table's TTL,
 * addresses past their period reduced, and old rejects files removed. Run by
 * every warehouse command and start on chDB, and hourly by a service on
 * chDB (addresses age while it runs; the TTL's removal is the engine's own).
 */
export async function enforceRetention(run: RetentionRun): Promise<void> {
  const { cluster } = await layoutOf(run.client, run.database);
  await applyRetention(run.client, run.database, run.settings.retention, run.logger, cluster);
  await reduceAgedData(run);
}

/** The part of enforceRetention that time alone makes due: addresses reduced, rejects files removed. */
export async function reduceAgedData({ client, database, settings, logger }: RetentionRun): Promise<void> {
  const days = settings.retention.addressDays;
  const { cluster } = await layoutOf(client, database);
  await reduceAddresses(client, database, days, logger, cluster);
  const removed = removeOldRejects(settings.rejectsDir, days);
  if (removed.length > 0) logger?.info('rejects files removed', { files: removed.length, days });
}
