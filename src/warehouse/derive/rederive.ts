import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { accountsSql, classifiedAgentsSql, classifiedReferersSql, deriveDownloadsSql, type Classified, type Places } from './downloads';
import { listenerIpSql, WINDOW_SECONDS, type DownloadRuleSettings } from './rules';
import { EVERY_NODE_ENGINE } from '../ddl';
import { layoutOf, mutationTargetSql, onClusterSql, type Layout } from '../layout';
import { quoteIdentifier, settingsSql, sqlLiteral, withClause } from '../sql';
import { AddressesReduced, reducedAddressesReason } from '../retention';
import { classifiedSql, compileUserAgentPatterns, userAgentConstants, type UserAgentSet } from './user-agents';

const DAY = 86_400;
/**
 * Requests one derivation statement reads at most when the caller sets no
 * budget (whole days; one day may exceed it). Its GROUP BY holds a key per
 * download of the chunk: at 1M requests that grew the process by 450 MB, at
 * the 8M this was before by gigabytes.
 */
const CHUNK_REQUESTS = 500_000;

export interface Derivation {
  settings: DownloadRuleSettings;
  userAgents: UserAgentSet;
  places?: Places;
  /** ADDRESS_RETENTION_DAYS: a span of older requests, whose addresses are reduced, is not derived again (0: addresses kept whole). */
  addressDays?: number;
}

/**
 * Replaces the downloads that requests in [from, to) can change, after those
 * requests were added or removed: the UTC days they fall on (calendar, OP3),
 * a window more after them (last-touch), or everything after them
 * (first-touch, whose windows chain). Returns the downloads now in that span.
 * Costs one mutation of the downloads parts in the span and one read of its
 * requests: re-deriving all of 100M downloads rewrites the table's parts
 * and reads every request once. `accounts` (an import's) keeps the other
 * accounts' downloads as they are: no key spans two accounts.
 */
export async function rederive(
  client: ClickHouseClient,
  database: string,
  derivation: Derivation,
  from: number,
  to: number,
  accounts?: readonly string[],
  requestsPerStatement?: number,
): Promise<number> {
  const { settings } = derivation;
  const events = `${quoteIdentifier(database)}.podcast_events`;
  const downloads = `${quoteIdentifier(database)}.downloads`;
  let start = replacedFrom(from);
  const reduced = reducedAddressesReason(readsFrom(from, settings), derivation.addressDays ?? 0);
  if (reduced !== undefined) throw new AddressesReduced(`Refused: ${reduced}`);
  let end = Math.ceil((to + 1) / DAY) * DAY;
  if (settings.rules === 'iab' && settings.window === 'last-touch') end += Math.ceil(WINDOW_SECONDS / DAY) * DAY;
  if (settings.rules === 'iab' && settings.window === 'first-touch') {
    start = from;
    const result = await client.query({
      query: `SELECT toInt64(max(ts)) + 1 AS last FROM ${events} WHERE true${accountsSql(accounts)}`,
      format: 'JSONEachRow',
    });
    end = Math.max(end, Number((await result.json<{ last: string }>())[0]?.last ?? end));
  }
  const span = `ts >= toDateTime(${start}, 'UTC') AND ts < toDateTime(${end}, 'UTC')${accountsSql(accounts)}`;
  const [{ n: derived }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${downloads} WHERE ${span}`);
  // A mutation is a statement over every part of the span: days no download lies on (a new account's) skip it.
  if (Number(derived) > 0) {
    const target = mutationTargetSql(await layoutOf(client, database), 'downloads');
    await client.command({ query: `ALTER TABLE ${target} DELETE WHERE ${span}${settingsSql({ mutations_sync: 2 })}` });
  }
  const perShow = await rows<{ day: string; token: string; n: string }>(
    client,
    `SELECT toInt64(toStartOfDay(ts)) AS day, token, count() AS n FROM ${events} WHERE ${span} GROUP BY day, token ORDER BY day, token`,
  );
  const parts = slices(perShow, settings, requestsPerStatement);
  if (parts.length > 0) {
    // Last-touch's statements read one window before their span.
    const readFrom = settings.rules === 'iab' && settings.window === 'last-touch' ? start - WINDOW_SECONDS : start;
    const classified = await classify(
      client,
      database,
      derivation.userAgents,
      `ts >= toDateTime(${readFrom}, 'UTC') AND ts < toDateTime(${end}, 'UTC')${accountsSql(accounts)}`,
    );
    try {
      for (const slice of parts) {
        // First-touch's span starts inside a day, and ends at the last request.
        const within = { from: Math.max(slice.from, start), to: Math.min(slice.to, end) };
        await client.command({ query: deriveDownloadsSql({ ...derivation, database, ...slice, ...within, accounts, classified }) });
      }
    } finally {
      for (const table of Object.values(classified)) await client.command({ query: `DROP TABLE IF EXISTS ${table} SYNC` });
    }
  }
  const [{ n }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${downloads} WHERE ${span}`);
  return Number(n);
}

/** What `npm run warehouse -- derive` did. */
export interface DerivedAll {
  requests: number;
  /** Requests whose parsed_ua the set now names otherwise. */
  renamed: number;
  downloads: number;
}

/**
 * `npm run warehouse -- derive`: every stored request named again by the
 * derivation's user-agent set (reclassifyRequests), then every download
 * derived again from them (rederive), so that after a change of set or rules
 * requests and downloads agree.
 */
export async function deriveAll(client: ClickHouseClient, database: string, derivation: Derivation): Promise<DerivedAll> {
  const [span] = await rows<{ from: string; to: string; n: string }>(
    client,
    `SELECT toInt64(min(ts)) AS from, toInt64(max(ts)) AS to, count() AS n FROM ${quoteIdentifier(database)}.podcast_events`,
  );
  if (Number(span.n) === 0) return { requests: 0, renamed: 0, downloads: 0 };
  const renamed = await reclassifyRequests(client, database, derivation.userAgents);
  const downloads = await rederive(client, database, derivation, Number(span.from), Number(span.to));
  return { requests: Number(span.n), renamed, downloads };
}

/**
 * Sets podcast_events.parsed_ua of every request whose user agent the set
 * names otherwise than the request holds: the distinct agents classified
 * once into a table of names, then one mutation of the rows that differ
 * (none when none does), waited for. A mutation is applied part by part: one
 * interrupted leaves some parts renamed, and running it again renames the
 * rest. Returns the rows renamed.
 */
export async function reclassifyRequests(client: ClickHouseClient, database: string, set: UserAgentSet): Promise<number> {
  const events = `${quoteIdentifier(database)}.podcast_events`;
  const layout = await layoutOf(client, database);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(derivationStagingDatabase(database))}` });
  await compileUserAgentPatterns(client, set);
  const classified = `${withClause(userAgentConstants(set))} SELECT raw_ua, ua_name AS parsed_ua FROM (${classifiedSql(`SELECT DISTINCT raw_ua FROM ${events}`, 'raw_ua', set)})`;
  const names = layout.cluster === undefined ? await joinTableOfNames(client, database, classified) : await dictionaryOfNames(client, layout, classified);
  try {
    // An agent a concurrent insert added after the names were made keeps its name.
    const named = `ifNull(${names.lookup}, parsed_ua)`;
    const [{ n }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${events} WHERE parsed_ua != ${named}`);
    if (Number(n) > 0) {
      const target = mutationTargetSql(layout, 'podcast_events');
      await client.command({ query: `ALTER TABLE ${target} UPDATE parsed_ua = ${named} WHERE parsed_ua != ${named}${settingsSql({ mutations_sync: 2 })}` });
    }
    return Number(n);
  } finally {
    for (const statement of names.drop) await client.command({ query: statement });
  }
}

interface Names {
  /** The name of `raw_ua`, NULL for an agent the names lack. */
  lookup: string;
  /** What takes the names away again. */
  drop: string[];
}

/** On one node: a Join table of the staging database, which the mutation reads by joinGet. */
async function joinTableOfNames(client: ClickHouseClient, database: string, classified: string): Promise<Names> {
  // joinGet names its table in a string: letters, digits and underscores only.
  const table = `${derivationStagingDatabase(database)}.agent_names_${randomUUID().replace(/-/g, '')}`;
  const names = table.split('.').map(quoteIdentifier).join('.');
  await client.command({ query: `CREATE TABLE ${names} ENGINE = Join(ANY, LEFT, raw_ua) AS ${classified}` });
  return { lookup: `joinGetOrNull(${sqlLiteral(table)}, 'parsed_ua', raw_ua)`, drop: [`DROP TABLE IF EXISTS ${names} SYNC`] };
}

/**
 * On a cluster the mutation runs on every node's local table, where a table
 * of the command's node is not: the names go to a table every node holds
 * (waited for on each), read through a dictionary made on every node.
 */
async function dictionaryOfNames(client: ClickHouseClient, layout: Layout, classified: string): Promise<Names> {
  const id = randomUUID().replace(/-/g, '');
  const [table, dictionary] = [`agent_names_${id}`, `agent_names_dictionary_${id}`];
  const db = quoteIdentifier(layout.database);
  const on = onClusterSql(layout);
  await client.command({ query: `CREATE TABLE ${db}.${table}${on} (raw_ua String, parsed_ua String) ENGINE = ${EVERY_NODE_ENGINE} ORDER BY raw_ua` });
  await client.command({ query: `INSERT INTO ${db}.${table} ${classified}` });
  await client.command({ query: `SYSTEM SYNC REPLICA${on} ${db}.${table}` });
  await client.command({
    query: `CREATE DICTIONARY ${db}.${dictionary}${on} (raw_ua String, parsed_ua String) PRIMARY KEY raw_ua
      SOURCE(CLICKHOUSE(DB ${sqlLiteral(layout.database)} TABLE ${sqlLiteral(table)})) LIFETIME(0) LAYOUT(COMPLEX_KEY_HASHED())`,
  });
  return {
    lookup: `dictGetOrNull(${sqlLiteral(`${layout.database}.${dictionary}`)}, 'parsed_ua', tuple(raw_ua))`,
    drop: [`DROP DICTIONARY IF EXISTS ${db}.${dictionary}${on}`, `DROP TABLE IF EXISTS ${db}.${table}${on} SYNC`],
  };
}

/**
 * Classifies the user agents and referers of the requests where `where`
 * holds once, into two tables of the staging database the derivation's
 * statements join (DeriveOptions.classified): the set's patterns are in these two
 * statements only, not in every part of the derivation. The tables are
 * Memory tables of distinct values (a day of 4M requests has thousands),
 * dropped when the derivation ends; one left by a killed process is
 * dropped by the next import (recoverInterrupted).
 */
async function classify(client: ClickHouseClient, database: string, set: UserAgentSet, where: string): Promise<Classified> {
  const staging = quoteIdentifier(derivationStagingDatabase(database));
  const id = randomUUID();
  const classified = {
    agents: `${staging}.${quoteIdentifier(`classified_agents_${id}`)}`,
    referers: `${staging}.${quoteIdentifier(`classified_referers_${id}`)}`,
  };
  const events = `${quoteIdentifier(database)}.podcast_events`;
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${staging}` });
  // Each pattern set compiled in a statement of its own first (compileUserAgentPatterns), not all in the first classifying one.
  await compileUserAgentPatterns(client, set);
  const constants = withClause(userAgentConstants(set));
  await client.command({ query: `CREATE TABLE ${classified.agents} ENGINE = Memory AS ${constants} ${classifiedAgentsSql(events, where, set)}` });
  await client.command({ query: `CREATE TABLE ${classified.referers} ENGINE = Memory AS ${constants} ${classifiedReferersSql(events, where, set)}` });
  return classified;
}

/**
 * The earliest time whose downloads a rederive of requests from `from` on
 * (epoch seconds) can replace: the start of its UTC day (first-touch's span
 * starts later, at `from`). No download before it is added, removed or changed.
 */
export function replacedFrom(from: number): number {
  return Math.floor(from / DAY) * DAY;
}

/**
 * The earliest request a rederive of requests from `from` on reads: the
 * start of its UTC day, and for last-touch a window before it (first-touch
 * reads from `from`, later).
 */
export function readsFrom(from: number, settings: DownloadRuleSettings): number {
  const start = replacedFrom(from);
  return settings.rules === 'iab' && settings.window === 'last-touch' ? start - WINDOW_SECONDS : start;
}

/** Where imports and derivations keep their scratch tables, apart from the tables anything reads. */
export function derivationStagingDatabase(database: string): string {
  return `${database}_import`;
}

interface Slice {
  from: number;
  to: number;
  where?: string;
}

/**
 * The statements of a derivation, in time order: runs of whole UTC days of
 * at most `budget` requests (each statement's memory is its part of the
 * requests, rolling windows read the downloads before, and an empty stretch
 * costs no statement). With a budget given (so that other statements go
 * between, see ImportOptions.statementRows), a day of more is cut by show
 * (`token`, which every key holds and podcast_events is sorted by, so a part
 * reads only its shows' rows), shows packed up to the budget; one show of
 * more is cut again by a hash of the listener, which every key also holds.
 */
function slices(perShow: { day: string; token: string; n: string }[], settings: DownloadRuleSettings, given: number | undefined): Slice[] {
  const budget = given ?? CHUNK_REQUESTS;
  const days = new Map<number, { token: string; n: number }[]>();
  for (const { day, token, n } of perShow) {
    const shows = days.get(Number(day)) ?? [];
    shows.push({ token, n: Number(n) });
    days.set(Number(day), shows);
  }
  const out: Slice[] = [];
  let runFrom: number | undefined;
  let pending = 0;
  const closeRun = (to: number) => {
    if (runFrom !== undefined) out.push({ from: runFrom, to });
    runFrom = undefined;
    pending = 0;
  };
  for (const [day, shows] of days) {
    const total = shows.reduce((sum, s) => sum + s.n, 0);
    if (pending + total > budget) closeRun(day);
    if (total <= budget || given === undefined) {
      runFrom ??= day;
      pending += total;
      continue;
    }
    let bin: string[] = [];
    let binned = 0;
    const closeBin = () => {
      if (bin.length > 0) out.push({ from: day, to: day + DAY, where: `token IN (${bin.map((t) => sqlLiteral(t)).join(', ')})` });
      bin = [];
      binned = 0;
    };
    for (const { token, n } of shows) {
      if (n > budget) {
        const parts = Math.ceil(n / budget);
        for (let i = 0; i < parts; i++) {
          out.push({ from: day, to: day + DAY, where: `token = ${sqlLiteral(token)} AND cityHash64(${listenerIpSql(settings, 'ip')}) % ${parts} = ${i}` });
        }
        continue;
      }
      if (binned + n > budget) closeBin();
      bin.push(token);
      binned += n;
    }
    closeBin();
  }
  if (runFrom !== undefined) closeRun(Math.max(...days.keys()) + DAY);
  return out;
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}
