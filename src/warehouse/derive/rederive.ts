import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../ddl';
import { deriveDownloadsSql, type Places } from './downloads';
import { WINDOW_SECONDS, type DownloadRuleSettings } from './rules';
import type { UserAgentLists } from './user-agents';

const DAY = 86_400;

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
 * and reads every request once.
 */
export async function rederive(client: ClickHouseClient, database: string, derivation: Derivation, from: number, to: number): Promise<number> {
  const { settings } = derivation;
  const events = `${quoteIdentifier(database)}.podcast_events`;
  const downloads = `${quoteIdentifier(database)}.downloads`;
  let start = Math.floor(from / DAY) * DAY;
  let end = Math.ceil((to + 1) / DAY) * DAY;
  if (settings.rules === 'iab' && settings.window === 'last-touch') end += Math.ceil(WINDOW_SECONDS / DAY) * DAY;
  if (settings.rules === 'iab' && settings.window === 'first-touch') {
    start = from;
    const result = await client.query({ query: `SELECT toInt64(max(ts)) + 1 AS last FROM ${events}`, format: 'JSONEachRow' });
    end = Math.max(end, Number((await result.json<{ last: string }>())[0]?.last ?? end));
  }
  const span = `ts >= toDateTime(${start}, 'UTC') AND ts < toDateTime(${end}, 'UTC')`;
  await client.command({ query: `ALTER TABLE ${downloads} DELETE WHERE ${span}`, clickhouse_settings: { mutations_sync: '2' } });
  // Day by day in time order: each statement's memory is one day's requests, and rolling windows read the days before.
  for (let day = start; day < end; day = Math.min(end, Math.floor(day / DAY) * DAY + DAY)) {
    const dayEnd = Math.min(end, Math.floor(day / DAY) * DAY + DAY);
    await client.command({ query: deriveDownloadsSql({ ...derivation, database, from: day, to: dayEnd }) });
  }
  const result = await client.query({ query: `SELECT count() AS n FROM ${downloads} WHERE ${span}`, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0]?.n ?? 0);
}
