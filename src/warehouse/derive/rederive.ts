import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../ddl';
import { accountsSql, deriveDownloadsSql, type Places } from './downloads';
import { WINDOW_SECONDS, type DownloadRuleSettings } from './rules';
import { settingsSql } from './sql';
import type { UserAgentLists } from './user-agents';

const DAY = 86_400;
/**
 * Requests one derivation statement reads at most (whole days; one day may
 * exceed it). Its GROUP BY holds a key per download of the chunk: at 1M
 * requests that grew the process by 450 MB, at the 8M this was before by
 * gigabytes.
 */
const CHUNK_REQUESTS = 500_000;

export interface Derivation {
  settings: DownloadRuleSettings;
  userAgents: UserAgentLists;
  places?: Places;
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
): Promise<number> {
  const { settings } = derivation;
  const events = `${quoteIdentifier(database)}.podcast_events`;
  const downloads = `${quoteIdentifier(database)}.downloads`;
  let start = Math.floor(from / DAY) * DAY;
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
  await client.command({ query: `ALTER TABLE ${downloads} DELETE WHERE ${span}${settingsSql({ mutations_sync: 2 })}` });
  // In time order, in runs of whole UTC days of at most CHUNK_REQUESTS requests: each statement's memory is its
  // part of the requests, rolling windows read the parts before, and an empty stretch costs no statement.
  const perDay = await client.query({
    query: `SELECT toInt64(toStartOfDay(ts)) AS day, count() AS n FROM ${events} WHERE ${span} GROUP BY day ORDER BY day`,
    format: 'JSONEachRow',
  });
  const bounds = [start];
  let pending = 0;
  for (const { day, n } of await perDay.json<{ day: string; n: string }>()) {
    if (pending > 0 && pending + Number(n) > CHUNK_REQUESTS && Number(day) > bounds[bounds.length - 1]) {
      bounds.push(Number(day));
      pending = 0;
    }
    pending += Number(n);
  }
  bounds.push(end);
  for (let i = 0; i + 1 < bounds.length; i++) {
    await client.command({ query: deriveDownloadsSql({ ...derivation, database, from: bounds[i], to: bounds[i + 1], accounts }) });
  }
  const result = await client.query({ query: `SELECT count() AS n FROM ${downloads} WHERE ${span}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0]?.n ?? 0);
}
