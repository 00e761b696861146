import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { languages } from 'countries-list';
import { accountsSql, classifiedAgentsSql, classifiedReferersSql } from './downloads';
import { derivationStagingDatabase, type Derivation } from './rederive';
import { EVERY_NODE_ENGINE } from '../ddl';
import { layoutOf, mutationTargetSql, onClusterSql, type Layout } from '../layout';
import { quoteIdentifier, settingsSql, sqlLiteral, withClause } from '../sql';
import { ensureUaFamilies, uaFamilySql } from './ua-families';
import { botTypeSql, compileUserAgentPatterns, userAgentConstants } from './user-agents';

/**
 * From link_events (the link pages' views and opens) to link_views (the
 * three Links cubes), in ClickHouse: the same statements on chDB and a
 * server, for imported files and for rows a pipeline inserted (`npm run
 * warehouse -- derive`). What a view's uniqueness and its open depend on is
 * the viewer's other events of the same link, so the unit of derivation is
 * a viewer's whole history of a link (a group: account, link, viewer): the
 * groups an import touches are derived again whole, whatever file their
 * events came in. The rules are in docs/bringing-data.md.
 */

/** The summary's counts of an import of link events. */
export const LINK_VIEW_COUNTS = ['views', 'opened', 'unmatchedOpens', 'bots'];

/** How long before an open the view it marks may lie: 30 minutes. */
export const OPEN_WINDOW_SECONDS = 30 * 60;

/** Events one derivation statement reads at most when the caller sets no budget (whole links; a link of more is cut by viewer). */
const CHUNK_EVENTS = 500_000;

const KEY_TABLE = 'link_viewer_key';

export interface LinkSpan {
  /** Epoch seconds of the first and last event that were added or taken out. */
  from: number;
  to: number;
  /** Only these accounts' (all when absent). */
  accounts?: readonly string[];
  /** The import whose events were added: the counts are of its events (zeros without one). */
  importId?: string;
  /** Events were taken out: the groups of the views in the span are derived again too (those left with no event lose their views). */
  removed?: boolean;
  /** Events one statement reads at most (ImportOptions.statementRows); absent: CHUNK_EVENTS. */
  budget?: number;
}

/**
 * Derives again the link views of every group with an event in the span
 * (and, when events were taken out, of every group with a view in it):
 * their views are deleted (a mutation, when there are some) and written
 * again from all their events. Returns the counts of the import's events
 * (LINK_VIEW_COUNTS; zeros without an import).
 */
export async function deriveLinkViews(client: ClickHouseClient, database: string, derivation: Derivation, span: LinkSpan): Promise<Record<string, number>> {
  const db = quoteIdentifier(database);
  const staging = quoteIdentifier(derivationStagingDatabase(database));
  const id = randomUUID().replace(/-/g, '');
  const scratch = (kind: string) => `${staging}.${quoteIdentifier(`link_${kind}_${id}`)}`;
  const [groups, agents, referers] = ['groups', 'agents', 'referers'].map(scratch);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${staging}` });
  const layout = await layoutOf(client, database);
  await ensureViewerKey(client, layout);
  await ensureUaFamilies(client, layout);
  await compileUserAgentPatterns(client, derivation.userAgents);
  const events = `${db}.link_events`;
  const views = `${db}.link_views`;
  const constants = { ...viewerConstants(database), ...userAgentConstants(derivation.userAgents) };
  const inSpan = (time: string) => `${time} >= toDateTime(${span.from}, 'UTC') AND ${time} < toDateTime(${span.to + 1}, 'UTC')${accountsSql(span.accounts)}`;
  const removed = span.removed ? ` UNION DISTINCT SELECT account_id, link, link_viewer FROM ${views} WHERE ${inSpan('ts')}` : '';
  try {
    await client.command({
      query: `CREATE TABLE ${groups} ENGINE = Memory AS ${withClause(viewerConstants(database))}
        SELECT DISTINCT account_id, link, ${VIEWER} AS link_viewer FROM ${events} WHERE ${inSpan('ts')}${removed}`,
    });
    const ofGroups = `(account_id, link) IN (SELECT account_id, link FROM ${groups})`;
    const read = `${ofGroups}${accountsSql(span.accounts)}`;
    await client.command({
      // Each distinct agent's family with its classification: a regexp_tree lookup per agent, not per event.
      query: `CREATE TABLE ${agents} ENGINE = Memory AS ${withClause(constants)}
        SELECT *, ${uaFamilySql(database, 'raw_ua')} AS ua_family FROM (${classifiedAgentsSql(events, read, derivation.userAgents)})`,
    });
    await client.command({
      query: `CREATE TABLE ${referers} ENGINE = Memory AS ${withClause(constants)} ${classifiedReferersSql(events, read, derivation.userAgents)}`,
    });
    const classified = { agents, referers };
    // A group is derived in the statement of its part: the set each statement holds is its part's groups only.
    const inGroups = (part: string) => `(account_id, link, link_viewer) IN (SELECT account_id, link, link_viewer FROM ${groups} WHERE ${part})`;
    const [{ n: stale }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${views} WHERE ${read} AND ${inGroups('true')}`);
    if (Number(stale) > 0) {
      await client.command({
        query: `ALTER TABLE ${mutationTargetSql(layout, 'link_views')} DELETE WHERE ${read} AND ${inGroups('true')}${settingsSql({ mutations_sync: 2 })}`,
      });
    }
    const perLink = await rows<{ link: string; n: string }>(client, `SELECT link, count() AS n FROM ${events} WHERE ${read} GROUP BY link ORDER BY link`);
    const counts = Object.fromEntries(LINK_VIEW_COUNTS.map((c) => [c, 0]));
    for (const part of parts(perLink, span.budget ?? CHUNK_EVENTS)) {
      const reading = { events, read: `${read} AND ${part}`, inGroups: inGroups(part), classified };
      await client.command({ query: insertViewsSql(database, derivation, reading) });
      if (span.importId === undefined) continue;
      for (const [name, n] of Object.entries(await importCounts(client, database, reading, span.importId))) counts[name] += n;
    }
    return counts;
  } finally {
    for (const table of [groups, agents, referers]) await client.command({ query: `DROP TABLE IF EXISTS ${table} SYNC` });
  }
}

/** `npm run warehouse -- derive`: every link view derived again from every link event. */
export async function deriveAllLinkViews(
  client: ClickHouseClient,
  database: string,
  derivation: Derivation,
): Promise<{ linkEvents: number; linkViews: number }> {
  const [span] = await rows<{ from: string; to: string; n: string }>(
    client,
    `SELECT toInt64(min(ts)) AS from, toInt64(max(ts)) AS to, count() AS n FROM ${quoteIdentifier(database)}.link_events`,
  );
  if (Number(span.n) === 0) return { linkEvents: 0, linkViews: 0 };
  await deriveLinkViews(client, database, derivation, { from: Number(span.from), to: Number(span.to) });
  const [{ n }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${quoteIdentifier(database)}.link_views`);
  return { linkEvents: Number(span.n), linkViews: Number(n) };
}

/**
 * The viewer of an event: its `viewer` (the page's cookie id) when given,
 * else the first 16 bytes of SHA-256 over the warehouse's viewer key, the
 * address and the user agent, in hex. The key is random, made once per
 * warehouse and kept in it (ensureViewerKey): the same viewer hashes alike
 * in every import and derivation, and without the key a hash cannot be
 * tried against the few billion IPv4 addresses.
 */
const VIEWER = `if(viewer != '', viewer, lower(hex(substring(SHA256(concat(link_viewer_key, IPv6NumToString(ip), '\\n', raw_ua)), 1, 16))))`;

function viewerConstants(database: string): Record<string, string> {
  return { link_viewer_key: `(SELECT min(key) FROM ${quoteIdentifier(database)}.${KEY_TABLE})` };
}

/** The key, made once; on a cluster every node holds it (two made at once by two nodes: every hash takes the least). */
async function ensureViewerKey(client: ClickHouseClient, layout: Layout): Promise<void> {
  const table = `${quoteIdentifier(layout.database)}.${KEY_TABLE}`;
  const engine = layout.cluster === undefined ? 'MergeTree' : EVERY_NODE_ENGINE;
  await client.command({ query: `CREATE TABLE IF NOT EXISTS ${table}${onClusterSql(layout)} (key String) ENGINE = ${engine} ORDER BY tuple()` });
  const [{ n }] = await rows<{ n: string }>(client, `SELECT count() AS n FROM ${table}`);
  if (Number(n) === 0) await client.command({ query: `INSERT INTO ${table} SELECT lower(hex(randomString(32)))` });
}

/**
 * Runs of whole links of at most `budget` events, each as a condition over
 * `link` and `link_viewer`; a link of more is cut by a hash of the viewer (a
 * group lies in one part either way).
 */
function parts(perLink: { link: string; n: string }[], budget: number): string[] {
  const out: string[] = [];
  let bin: string[] = [];
  let binned = 0;
  const close = () => {
    if (bin.length > 0) out.push(`link IN ${sqlLiteral(bin)}`);
    bin = [];
    binned = 0;
  };
  for (const { link, n } of perLink) {
    const count = Number(n);
    if (count > budget) {
      const cuts = Math.ceil(count / budget);
      for (let i = 0; i < cuts; i++) out.push(`link = ${sqlLiteral(link)} AND cityHash64(link_viewer) % ${cuts} = ${i}`);
      continue;
    }
    if (binned + count > budget) close();
    bin.push(link);
    binned += count;
  }
  close();
  return out;
}

interface Reading {
  events: string;
  /** Which link_events rows are read (a condition). */
  read: string;
  /** Whether a row's group is one of the statement's (a condition over account_id, link, link_viewer). */
  inGroups: string;
  classified: { agents: string; referers: string };
}

/**
 * The events of the groups read, less those of bots (the downloads' bot rule: botTypeSql), one row per group with
 * its events in time order (`evs`: tuples whose first two fields are the epoch millisecond and whether it is an open,
 * then `fields`), and `matches`: (view, open) pairs of positions in `evs`. An open takes the latest view of its
 * group not taken yet, when that view lies within OPEN_WINDOW_SECONDS before it; else it takes none.
 */
function matchedSql(reading: Reading, fields: string[]): string {
  return `
    SELECT account_id, link, link_viewer, evs,
      arrayFold((acc, e, i) -> if(NOT e.2, (arrayPushBack(acc.1, (i, e.1)), acc.2),
          if(notEmpty(acc.1) AND acc.1[-1].2 >= e.1 - ${OPEN_WINDOW_SECONDS * 1000}, (arrayPopBack(acc.1), arrayPushBack(acc.2, (acc.1[-1].1, i))), acc)),
        evs, arrayEnumerate(evs), CAST(([], []) AS Tuple(Array(Tuple(UInt32, Int64)), Array(Tuple(UInt32, UInt32))))).2 AS matches
    FROM (
      SELECT account_id, link, link_viewer, arraySort(groupArray((toUnixTimestamp64Milli(ts), event = 'open', ${fields.join(', ')}))) AS evs
      FROM (
        SELECT *, if(ua_type = 'browser', referer_list_name, '') AS referer_name, ${botTypeSql()} AS bot_type
        FROM (SELECT *, ${VIEWER} AS link_viewer FROM ${reading.events} WHERE ${reading.read}) AS le
        INNER JOIN ${reading.classified.agents} AS c USING (raw_ua)
        INNER JOIN ${reading.classified.referers} AS r USING (referer)
      )
      WHERE bot_type = '' AND ${reading.inGroups}
      GROUP BY account_id, link, link_viewer
    )`;
}

/** What a view keeps of its event, in matchedSql's `evs` after its first two fields. */
const VIEW_FIELDS = ['target', 'url', 'referer', 'ua_family', 'ip', 'accept_language'];

/** The ISO 639 codes' English names (countries-list's languages). */
const LANGUAGE_NAMES = `mapFromArrays(${sqlLiteral(Object.keys(languages))}, ${sqlLiteral(Object.values(languages).map((l) => l.name))})`;

/**
 * The English name of the language of an Accept-Language header's tag of the highest weight (`q`, 1 when not
 * given; the first on a tie), the region ignored; '' when it names none (or only `*`, or only weights of 0).
 */
function languageSql(header: string): string {
  const tags = `arrayMap(p -> (lower(trimBoth(splitByChar(';', p)[1])), if(match(p, ';\\\\s*q\\\\s*='), toFloat64OrZero(extract(p, ';\\\\s*q\\\\s*=\\\\s*([0-9.]+)')), 1.)),
      splitByChar(',', ${header}))`;
  const ranked = `arrayFilter(t -> t.1 NOT IN ('', '*') AND t.2 > 0, ${tags})`;
  return `arrayMap(tags -> language_names[splitByRegexp('[-_]', tags[arrayFirstIndex(t -> t.2 = arrayMax(x -> x.2, tags), tags)].1)[1]], [${ranked}])[1]`;
}

/** A query parameter of a URL, percent-decoded ('' when absent). */
const utm = (name: string) => `decodeURLComponent(extractURLParameter(url, ${sqlLiteral(name)}))`;

function insertViewsSql(database: string, derivation: Derivation, reading: Reading): string {
  const places = derivation.places;
  const constants = { ...viewerConstants(database), language_names: LANGUAGE_NAMES, ...(places?.constants ?? {}) };
  return `
INSERT INTO ${quoteIdentifier(database)}.link_views (account_id, ts, link, link_viewer, is_unique, utm_source, utm_medium, utm_campaign, ua_family,
  open_param, referer_domain, country_code, country_name, language_name)
${withClause(constants)}
SELECT account_id, toDateTime(intDiv(e.1, 1000), 'UTC') AS ts, link, link_viewer, i = arrayFirstIndex(x -> NOT x.2, evs) AS is_unique,
  ${utm('utm_source')}, ${utm('utm_medium')}, ${utm('utm_campaign')}, ua_family,
  if(opened = 0, '', evs[opened].3) AS open_param, replaceRegexpOne(lower(domain(referer)), '^www[.]', '') AS referer_domain,
  ${places?.countryCode ?? "''"}, ${places?.country ?? "''"}, ${languageSql('accept_language')}
FROM (
  SELECT *, e, i, e.4 AS url, e.5 AS referer, e.6 AS ua_family, e.7 AS ip, e.8 AS accept_language, arrayFirst(p -> p.1 = i, matches).2 AS opened
  FROM (${matchedSql(reading, VIEW_FIELDS)})
  ARRAY JOIN evs AS e, arrayEnumerate(evs) AS i
  WHERE NOT e.2
)`;
}

/** The import's own events: its views (not of bots), its opens that marked a view and those that marked none, its bots' events. */
async function importCounts(client: ClickHouseClient, database: string, reading: Reading, importId: string): Promise<Record<string, number>> {
  const mine = `import_id = ${sqlLiteral(importId)}`;
  const [counts] = await rows<{ views: string; opened: string; unmatchedOpens: string }>(
    client,
    `${withClause(viewerConstants(database))}
    SELECT countIf(NOT e.2 AND e.3) AS views, countIf(e.2 AND e.3 AND has(arrayMap(p -> p.2, matches), i)) AS opened, countIf(e.2 AND e.3 AND NOT has(arrayMap(p -> p.2, matches), i)) AS unmatchedOpens
    FROM (${matchedSql(reading, [mine])})
    ARRAY JOIN evs AS e, arrayEnumerate(evs) AS i`,
  );
  const [{ bots }] = await rows<{ bots: string }>(
    client,
    `${withClause(viewerConstants(database))}
    SELECT count() AS bots FROM (
      SELECT ${botTypeSql()} AS bot_type FROM (
        SELECT *, if(ua_type = 'browser', referer_list_name, '') AS referer_name
        FROM (SELECT raw_ua, referer, ${VIEWER} AS link_viewer FROM ${reading.events} WHERE ${reading.read} AND ${mine}) AS le
        INNER JOIN ${reading.classified.agents} AS c USING (raw_ua)
        INNER JOIN ${reading.classified.referers} AS r USING (referer)
      )
    ) WHERE bot_type != ''`,
  );
  return { views: Number(counts.views), opened: Number(counts.opened), unmatchedOpens: Number(counts.unmatchedOpens), bots: Number(bots) };
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}
