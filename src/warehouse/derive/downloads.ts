import { listenerIpSql, qualifiesSql, rangeColumns, serverUrlSql, WINDOW_SECONDS, type DownloadRuleSettings } from './rules';
import { quoteIdentifier, sqlLiteral, withClause } from '../sql';
import { botTypeSql, classifiedSql, refererListNameSql, userAgentConstants, type UserAgentSet } from './user-agents';

/**
 * From podcast_events to downloads, in ClickHouse: one INSERT … SELECT per
 * time range, the same statement on chDB and on a server, for imported
 * files, for rows a pipeline inserted, and for the demo generator. Rules
 * that look back (a rolling window's earlier requests, first-touch's open
 * window) read the warehouse: earlier requests from podcast_events, the
 * counted ones from downloads.
 */

/**
 * Where a download took place, as SQL over the counted request's columns
 * `ip` (IPv6), `ip4`, `city` and `country` (what podcast_events holds).
 * This is the seam for geo enrichment: a provider can look the IP up in a
 * dictionary here; the default keeps the request's own city and country.
 */
export interface Places {
  /** WITH constants the expressions read. */
  constants: Record<string, string>;
  city: string;
  country: string;
  continent: string;
  timezone: string;
  org: string;
  /** The English name of a country's ISO code (SQL over `code`), where the places know names. */
  countryName?(code: string): string;
  /** The lower-case ISO code of the country of `ip`, where the places know codes (the Links cubes keep codes). */
  countryCode?: string;
}

export const REQUEST_PLACES: Places = { constants: {}, city: 'city', country: 'country', continent: "''", timezone: "''", org: "''" };

export interface DeriveOptions {
  database: string;
  settings: DownloadRuleSettings;
  userAgents: UserAgentSet;
  places?: Places;
  /** Derive the downloads whose counted request lies in [from, to), unix seconds. */
  from: number;
  to: number;
  /** Only these accounts' (all when absent): a download's key holds its account, so accounts derive apart. */
  accounts?: readonly string[];
  /**
   * Only requests for which this SQL condition over podcast_events' columns
   * holds: a part of a time range, derived in a statement of its own. It must
   * hold for every request of a key or for none (a key lies in one part).
   */
  where?: string;
  /**
   * Tables holding the classification of every user agent and referer the
   * statement reads (classifiedAgentsSql, classifiedReferersSql), joined
   * instead of classifying them in the statement. Without them the set's patterns
   * are constants of the statement: 48 KB of SQL that ClickHouse's analyser
   * copies into every place a classification column is used (131 pattern
   * matches in one statement's query tree), seconds of planning each.
   */
  classified?: Classified;
}

export interface Classified {
  agents: string;
  referers: string;
}

const DOWNLOAD_COLUMNS = 'account_id, ts, ip, ip4, token, url, referer, raw_ua, parsed_ua, os_name, device_type, city, country, continent, timezone, org, tags';

/** The request columns a download keeps from the request it counts. */
const KEPT = '(ts, ip, ip4, referer, city, country)';
const KEPT_TYPE = "Tuple(DateTime('UTC'), IPv6, IPv4, String, String, String)";

export function deriveDownloadsSql(options: DeriveOptions): string {
  const { settings } = options;
  const places = options.places ?? REQUEST_PLACES;
  const constants = Object.entries({ ...(options.classified ? {} : userAgentConstants(options.userAgents)), ...places.constants });
  const counted = settings.rules === 'op3' ? op3DaySql(options) : settings.window === 'calendar' ? calendarSql(options) : rollingSql(options);
  return `
INSERT INTO ${table(options.database, 'downloads')} (${DOWNLOAD_COLUMNS})
${constants.length > 0 ? withClause(Object.fromEntries(constants)) : ''}
SELECT account_id, ts, ip, ip4, token, url, referer, raw_ua, parsed_ua, os_name, device_type,
  ${places.city}, ${places.country}, ${places.continent}, ${places.timezone}, ${places.org}, tags
FROM (
  SELECT *, kept.1 AS ts, kept.2 AS ip, kept.3 AS ip4, kept.4 AS referer, kept.5 AS city, kept.6 AS country
  FROM (${counted})
)`;
}

/** Requests that may become downloads, in [from, to), with their listener and classification. */
function qualifyingSql(options: DeriveOptions, from: number, to: number): string {
  const events = table(options.database, 'podcast_events');
  const part = options.where === undefined ? '' : ` AND (${options.where})`;
  const range = `ts >= toDateTime(${from}, 'UTC') AND ts < toDateTime(${to}, 'UTC')${accountsSql(options.accounts)}${part}`;
  const { classified } = options;
  const joined = classified
    ? `INNER JOIN ${classified.agents} AS c USING (raw_ua)
      INNER JOIN ${classified.referers} AS r USING (referer)`
    : `INNER JOIN (${classifiedAgentsSql(events, range, options.userAgents)}) AS c USING (raw_ua)
      INNER JOIN (${classifiedReferersSql(events, range, options.userAgents)}) AS r USING (referer)`;
  return `
    SELECT account_id, ts, ip, ip4, token, ${serverUrlSql('url')} AS url, referer, raw_ua, city, country, range_first_two,
      ua_name AS parsed_ua, os_name, device_type, ${listenerIpSql(options.settings, 'ip')} AS listener
    FROM (
      SELECT *, if(ua_type = 'browser', referer_list_name, '') AS referer_name, ${botTypeSql()} AS bot_type
      FROM (SELECT *, ${rangeColumns('byte_range')} FROM ${events} WHERE ${range}) AS e
      ${joined}
    )
    WHERE ${qualifiesSql(options.settings)}`;
}

/**
 * The distinct user agents of `events`' requests where `where` holds, each
 * with its classification (classifiedSql's columns). Reads the user-agent
 * constants (userAgentConstants) of its statement's WITH clause.
 */
export function classifiedAgentsSql(events: string, where: string, set: UserAgentSet): string {
  return classifiedSql(`SELECT DISTINCT raw_ua FROM ${events} WHERE ${where}`, 'raw_ua', set);
}

/** The distinct referers of those requests, each with the referrer list's name for it (used for browsers). */
export function classifiedReferersSql(events: string, where: string, set: UserAgentSet): string {
  return `SELECT referer, ${refererListNameSql('referer', set)} AS referer_list_name FROM (SELECT DISTINCT referer FROM ${events} WHERE ${where})`;
}

/**
 * IAB calendar day (UTC): the key's first qualifying request of each day
 * counts. Ties on the second fall back to the referer and IP, so the pick is
 * deterministic (and on the rest of the kept columns, should two requests
 * agree on all three).
 *
 * The pick is the `min` of one string per request (FIRST_REQUEST) rather
 * than `argMin` of the kept tuple by the tuple (ts, referer, ip): ClickHouse
 * holds a tuple's aggregate state as boxed values, and at a key per download
 * that state was a third of a derivation statement's memory (the SELECT of
 * 500,000 requests: 442–451 MB of RSS growth and 2.8–2.9 CPU s, 262–294 MB
 * and 2.0–2.2 CPU s with the string, side by side in `npm run bench:import`).
 */
function calendarSql(options: DeriveOptions): string {
  return `
    SELECT account_id, token, url, raw_ua, parsed_ua, os_name, device_type, '' AS tags, ${FIRST_REQUEST_KEPT} AS kept
    FROM (
      SELECT account_id, token, url, raw_ua, parsed_ua, os_name, device_type, min(${FIRST_REQUEST}) AS first
      FROM (${qualifyingSql(options, options.from, options.to)})
      GROUP BY account_id, listener, raw_ua, url, token, parsed_ua, os_name, device_type, toDate(ts)
    )`;
}

/**
 * A request as a string whose byte order is the order of (ts, referer, ip),
 * then the rest of KEPT: the time as 8 hex digits, the referer with each NUL
 * byte escaped as NUL 0x01 and ended by two NULs (so a referer sorts before
 * any longer one it begins), the IPv6 address's 16 bytes and the IPv4's 4 as
 * hex (byte order is the order ClickHouse compares them in), the city's
 * length as 8 hex digits, the city, the country.
 */
const FIRST_REQUEST = `concat(leftPad(hex(toUInt32(ts)), 8, '0'), replaceAll(referer, '\\0', '\\0\\x01'), '\\0\\0', hex(ip),
  leftPad(hex(toUInt32(ip4)), 8, '0'), leftPad(hex(length(city)), 8, '0'), city, country)`;

/** FIRST_REQUEST's string `first` read back as KEPT (with two helper columns). */
const FIRST_REQUEST_KEPT = `position(first, '\\0\\0', 9) AS referer_end,
  reinterpretAsUInt32(reverse(unhex(substring(first, referer_end + 42, 8)))) AS city_length,
  CAST((
    toDateTime(reinterpretAsUInt32(reverse(unhex(substring(first, 1, 8)))), 'UTC'),
    CAST(toFixedString(unhex(substring(first, referer_end + 2, 32)), 16) AS IPv6),
    toIPv4(reinterpretAsUInt32(reverse(unhex(substring(first, referer_end + 34, 8))))),
    replaceAll(substring(first, 9, referer_end - 9), '\\0\\x01', '\\0'),
    substring(first, referer_end + 50, city_length),
    substring(first, referer_end + 50 + city_length)
  ) AS ${KEPT_TYPE})`;

/**
 * OP3's two phases (downloads.ts): within a UTC hour, a key's first request
 * is its row, except that a lone `bytes=0-1` (first-two) is replaced by a
 * larger request of the same hour; the day then keeps the key's earliest
 * hourly row. The key is IP + user agent + referer + URL.
 */
function op3DaySql(options: DeriveOptions): string {
  return `
    SELECT account_id, token, url, raw_ua, parsed_ua, os_name, device_type,
      argMin((hour_kept, hour_tags), hour_kept.1).2 AS tags, argMin((hour_kept, hour_tags), hour_kept.1).1 AS kept
    FROM (
      SELECT account_id, listener, token, url, referer, raw_ua, parsed_ua, os_name, device_type, toStartOfHour(ts) AS hour,
        countIf(NOT range_first_two) > 0 AS has_larger,
        if(has_larger,
          argMinIf(CAST(${KEPT} AS ${KEPT_TYPE}), (ts, ip), NOT range_first_two),
          argMin(CAST(${KEPT} AS ${KEPT_TYPE}), (ts, ip))) AS hour_kept,
        if(has_larger, '', 'first-two') AS hour_tags
      FROM (${qualifyingSql(options, options.from, options.to)})
      GROUP BY account_id, listener, token, url, referer, raw_ua, parsed_ua, os_name, device_type, hour
    )
    GROUP BY account_id, listener, token, url, referer, raw_ua, parsed_ua, os_name, device_type, toDate(hour)`;
}

/**
 * IAB rolling windows over each key's requests in time order. First-touch: a
 * counted request opens a window; requests inside it neither count nor move
 * it; the open window at `from` comes from the key's last download before
 * it. Last-touch: a request counts when the key's previous qualifying
 * request (read back one window before `from`) is a full window earlier.
 */
function rollingSql(options: DeriveOptions): string {
  const { from, to } = options;
  const firstTouch = options.settings.window === 'first-touch';
  const readFrom = firstTouch ? from : from - WINDOW_SECONDS;
  const picked = firstTouch
    ? `arrayFold((acc, i) -> if(toInt64(reqs[i].1) >= acc.1 + ${WINDOW_SECONDS}, (toInt64(reqs[i].1), arrayPushBack(acc.2, i)), acc),
         arrayEnumerate(reqs), (toInt64(open_window), CAST([], 'Array(UInt64)'))).2`
    : `arrayFilter(i -> toInt64(reqs[i].1) >= ${from}
         AND (i = 1 OR toInt64(reqs[i].1) - toInt64(reqs[i - 1].1) >= ${WINDOW_SECONDS}), arrayEnumerate(reqs))`;
  const openWindow = firstTouch
    ? `LEFT JOIN (
        SELECT account_id, ${listenerIpSql(options.settings, 'ip')} AS listener, raw_ua, url, max(toInt64(ts)) AS open_window
        FROM ${table(options.database, 'downloads')}
        WHERE ts >= toDateTime(${from - WINDOW_SECONDS}, 'UTC') AND ts < toDateTime(${from}, 'UTC')${accountsSql(options.accounts)}
        GROUP BY account_id, listener, raw_ua, url
      ) AS w USING (account_id, listener, raw_ua, url)`
    : '';
  return `
    SELECT account_id, token, url, raw_ua, parsed_ua, os_name, device_type, '' AS tags, reqs[i] AS kept
    FROM (
      SELECT *, ${picked} AS picked
      FROM (
        SELECT account_id, listener, token, url, raw_ua, parsed_ua, os_name, device_type,
          arraySort(r -> (r.1, r.4, r.2), groupArray(CAST(${KEPT} AS ${KEPT_TYPE}))) AS reqs
        FROM (${qualifyingSql(options, readFrom, to)})
        GROUP BY account_id, listener, token, url, raw_ua, parsed_ua, os_name, device_type
      ) AS k ${openWindow}
    )
    ARRAY JOIN picked AS i`;
}

/** ` AND account_id IN (…)` for the accounts given, '' for all. */
export function accountsSql(accounts: readonly string[] | undefined): string {
  return accounts === undefined ? '' : ` AND account_id IN (${accounts.length === 0 ? "''" : accounts.map((a) => sqlLiteral(a)).join(', ')})`;
}

function table(database: string, name: string): string {
  return `${quoteIdentifier(database)}.${quoteIdentifier(name)}`;
}
