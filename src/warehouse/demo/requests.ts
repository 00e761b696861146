/** podcast_events: listener plays expanded into their HTTP requests, bots and blacklisted scrapers; and the demo's GeoIP as the derivation's places. */
import { type Places } from '../derive/downloads';
import { BLACKLISTED_AGENTS, BOT_AGENTS, HOSTING_NETWORKS, TRACKING_PREFIX } from '../reference-data';
import { DAY, FETCH_CODES, type Plan, type Range } from './plan';
import {
  activityConstants,
  activitySql,
  episodeLabelSql,
  geoConstants,
  largerThanOneByteSql,
  latestEpisodeSql,
  listenerAgentConstants,
  podcastConstants,
  releaseSql,
  uuidSql,
} from './sql';
import { lookupTable, type SqlRandom } from './random';
import { sqlLiteral, withClause } from '../sql';

// podcast_events and downloads.

export const EVENT_COLUMNS =
  'account_id, request_id, ts, ip4, ip_blacklisted, url, redirect_url, raw_ua, parsed_ua, token, byte_range, ' +
  'byte_range_larger_one, city, country, referer, details_key, details_value';

/** request_id from the row's unique key; the tag keeps listener, bot and blacklisted ids apart. */
export function requestIdSql(random: SqlRandom, tag: string, ...keys: string[]): string {
  return `toUUID(${uuidSql(random.hash(tag, ...keys), random.hash(`${tag}/low`, ...keys))})`;
}

export function mediaPathSql(p: string, k: string): string {
  return `concat(pod_host[${p}], '/', pod_slug[${p}], '/ep-', ${episodeLabelSql(`pod_first_number[${p}] + ${k} - 1`)}, '.mp3')`;
}

/**
 * Listener plays, each expanded into its HTTP requests. A play is a listener
 * (skewed activity, 1–3 followed shows, stable device and IP) fetching an
 * episode either soon after its release (the spike) or from the back catalogue
 * at a random time; candidates are thinned by the local hour, weekday and
 * window growth. Requests follow the app's fetch pattern: Apple's AVPlayer
 * probes bytes 0-1 then pulls range chunks, download apps fetch 'bytes=0-' and
 * sometimes resume, browsers seek, speakers fetch once.
 */
export function listenerRequestsSql(plan: Plan, candidates: Range): string {
  const r = plan.random;
  const { listeners } = plan.sizes;
  const span = plan.days * DAY;
  return `
INSERT INTO ${plan.table('podcast_events')} (${EVENT_COLUMNS})
${withClause({ ...podcastConstants(plan), ...geoConstants(plan), ...listenerAgentConstants(), ...activityConstants() })}
SELECT
  pod_account[p],
  ${requestIdSql(r, 'listener-request', 'play', 'j')},
  toDateTime(play_ts + j * step, 'UTC'),
  ip,
  false,
  concat(${sqlLiteral(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
  concat('https://', media_path),
  agent_ua[agent],
  agent_app[agent],
  pod_token[p],
  multiIf(
    has_probe AND j = 0, 'bytes=0-1',
    fetch = ${FETCH_CODES.stream} AND j - has_probe + 1 < full_requests,
      concat('bytes=', toString((j - has_probe) * chunk), '-', toString((j - has_probe + 1) * chunk - 1)),
    fetch = ${FETCH_CODES.stream}, concat('bytes=', toString((j - has_probe) * chunk), '-'),
    j = has_probe, if(without_range, '', 'bytes=0-'),
    concat('bytes=', toString(intDiv(file_size * (${r.hash('seek', 'play', 'j')} % 1000), 1000)), '-')
  ) AS byte_range,
  ${largerThanOneByteSql('byte_range')},
  city_name[ci],
  city_country[ci],
  if(fetch = ${FETCH_CODES.browser} AND ${r.unit('web-player', 'play')} < 0.7,
    concat(pod_origin[p], '/episodes/ep-', ${episodeLabelSql('pod_first_number[p] + k - 1')}), ''),
  if(fetch = ${FETCH_CODES.stream}, 'x-playback-session-id', 'accept-language'),
  if(fetch = ${FETCH_CODES.stream}, upper(${uuidSql(r.hash('playback', 'play'), r.hash('playback/low', 'play'))}), city_language[ci])
FROM (
  SELECT
    *,
    agent_fetch[agent] AS fetch,
    ${r.unit('probe', 'play')} < [0.9, 0.3, 0, 0.2][fetch] AS has_probe,
    multiIf(
      has_probe AND ${r.unit('probe-only', 'play')} < 0.05, 0,
      fetch = ${FETCH_CODES.stream}, 2 + ${r.hash('chunks', 'play')} % 3,
      fetch = ${FETCH_CODES.download}, 1 + (${r.unit('resume', 'play')} < 0.2),
      fetch = ${FETCH_CODES.browser}, 1 + ${r.hash('seeks', 'play')} % 3,
      1) AS full_requests,
    ${r.unit('no-range', 'play')} < [0, 0.15, 0.4, 0.5][fetch] AS without_range,
    1048576 * [1, 2, 4][1 + ${r.hash('chunk', 'play')} % 3] AS chunk,
    -- 20–75 minutes at 128 kbit/s
    (20 + ${r.hash('duration', 'p', 'k')} % 55) * 60 * 16000 AS file_size,
    2 + ${r.hash('step', 'play')} % 40 AS step,
    ${mediaPathSql('p', 'k')} AS media_path
  FROM (
    SELECT
      number AS play,
      toUInt32(floor(${listeners} * pow(${r.unit('listener', 'number')}, 1.6))) AS listener,
      ${r.pick('agent_lut', 'agent', 'listener')} AS agent,
      ${r.pick('listener_block_lut', 'block', 'listener')} AS block,
      blk_city[block] AS ci,
      -- listeners use the lower half of their /16, organic web visitors the upper half
      toIPv4(blk_prefix[block] * 65536 + 1 + ${r.hash('host', 'listener')} % 32767) AS ip,
      1 + ${r.hash('follows', 'listener')} % 3 AS follows,
      ${r.pick('pod_lut', 'show', 'listener', `${r.hash('followed', 'number')} % follows`)} AS p,
      ${r.unit('fresh', 'number')} < 0.55 AS fresh,
      pod_fresh_from[p] + toInt64(${r.hash('fresh-episode', 'number')} % toUInt64(pod_episodes[p] - pod_fresh_from[p] + 1)) AS fresh_k,
      ${releaseSql('p', 'fresh_k')} + toInt64(if(${r.unit('auto-download', 'number')} < 0.3,
        -ln(${r.unit('delay', 'number')}) * 4 * 3600,
        -ln(${r.unit('delay', 'number')}) * 2.5 * ${DAY})) AS fresh_ts,
      ${plan.windowStart} + toInt64(floor(${r.unit('time', 'number')} * ${span})) AS catalogue_ts,
      if(fresh, fresh_ts, catalogue_ts) AS play_ts,
      if(fresh, fresh_k, greatest(1, ${latestEpisodeSql('p', 'catalogue_ts')} - toInt64(floor(-ln(${r.unit('back', 'number')}) * 2.5)))) AS k
    -- numbers_mt: the same numbers, read by several threads
    FROM numbers_mt(${candidates.offset}, ${candidates.length})
  )
  WHERE play_ts BETWEEN ${plan.windowStart} AND ${plan.windowEnd - 900}
    AND ${r.unit('keep', 'play')} < ${activitySql(plan, 'play_ts', 'city_offset[ci]')}
)
ARRAY JOIN range(toUInt32(has_probe + full_requests)) AS j`;
}

/** Crawlers and scripts from data-centre addresses, fetching any published episode at any hour. */
export function botRequestsSql(plan: Plan): string {
  const r = plan.random;
  const networks = new Map(HOSTING_NETWORKS.map((n, i) => [n.key, i + 1]));
  return `
INSERT INTO ${plan.table('podcast_events')} (${EVENT_COLUMNS})
${withClause({
  ...podcastConstants(plan),
  ...geoConstants(plan),
  bot_ua: sqlLiteral(BOT_AGENTS.map((b) => b.ua)),
  bot_app: sqlLiteral(BOT_AGENTS.map((b) => b.app)),
  bot_block: sqlLiteral(BOT_AGENTS.map((b) => networks.get(b.network) as number)),
  bot_lut: lookupTable(BOT_AGENTS.map((b) => b.weight)),
})}
SELECT
  pod_account[p],
  ${requestIdSql(r, 'bot-request', 'request')},
  toDateTime(t, 'UTC'),
  toIPv4(blk_prefix[block] * 65536 + 1 + ${r.hash('bot-host', 'bot', 'address')} % 65534),
  false,
  concat(${sqlLiteral(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
  concat('https://', media_path),
  bot_ua[bot],
  bot_app[bot],
  pod_token[p],
  multiIf(${r.unit('range', 'request')} < 0.7, '', ${r.unit('range', 'request')} < 0.95, 'bytes=0-', 'bytes=0-1') AS byte_range,
  ${largerThanOneByteSql('byte_range')},
  city_name[blk_city[block]],
  city_country[blk_city[block]],
  '',
  'accept',
  '*/*'
FROM (
  SELECT
    number AS request,
    ${r.pick('bot_lut', 'bot', 'request')} AS bot,
    bot_block[bot] AS block,
    -- each crawler rotates through a handful of addresses
    ${r.hash('bot-address', 'request')} % 16 AS address,
    ${plan.windowStart} + toInt64(floor(${r.unit('time', 'request')} * ${plan.days * DAY - 900})) AS t,
    1 + ${r.hash('show', 'request')} % ${plan.podcasts.length} AS p,
    1 + toInt64(${r.hash('episode', 'request')} % toUInt64(${latestEpisodeSql('p', 't')})) AS k,
    ${mediaPathSql('p', 'k')} AS media_path
  FROM numbers(${plan.sizes.botRequests})
)`;
}

/**
 * Scrapers on a fixed set of data-centre addresses, all on the blacklist.
 * They spoof an app or send a bare library agent, so only the IP gives them away.
 */
export function blacklistedRequestsSql(plan: Plan): string {
  const r = plan.random;
  const blacklistBlocks = plan.blocks.flatMap((b, i) => (b.use === 'blacklist' ? [i + 1] : []));
  return `
INSERT INTO ${plan.table('podcast_events')} (${EVENT_COLUMNS})
${withClause({
  ...podcastConstants(plan),
  ...geoConstants(plan),
  blacklisted_ua: sqlLiteral(BLACKLISTED_AGENTS.map((a) => a.ua)),
  blacklisted_app: sqlLiteral(BLACKLISTED_AGENTS.map((a) => a.app)),
  blacklist_blocks: sqlLiteral(blacklistBlocks),
})}
SELECT
  pod_account[p],
  ${requestIdSql(r, 'blacklisted-request', 'request')},
  toDateTime(t, 'UTC'),
  toIPv4(blk_prefix[block] * 65536 + 1 + ${r.hash('offender-host', 'offender')} % 65534),
  true,
  concat(${sqlLiteral(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
  concat('https://', media_path),
  blacklisted_ua[agent],
  blacklisted_app[agent],
  pod_token[p],
  if(${r.unit('range', 'request')} < 0.5, '', 'bytes=0-') AS byte_range,
  ${largerThanOneByteSql('byte_range')},
  city_name[blk_city[block]],
  city_country[blk_city[block]],
  '',
  'accept',
  '*/*'
FROM (
  SELECT
    number AS request,
    ${r.hash('offender', 'request')} % ${plan.sizes.blacklistedIps} AS offender,
    blacklist_blocks[1 + offender % ${blacklistBlocks.length}] AS block,
    1 + ${r.hash('offender-agent', 'offender')} % ${BLACKLISTED_AGENTS.length} AS agent,
    ${plan.windowStart} + toInt64(floor(${r.unit('time', 'request')} * ${plan.days * DAY - 900})) AS t,
    1 + ${r.hash('show', 'request')} % ${plan.podcasts.length} AS p,
    1 + toInt64(${r.hash('episode', 'request')} % toUInt64(${latestEpisodeSql('p', 't')})) AS k,
    ${mediaPathSql('p', 'k')} AS media_path
  FROM numbers(${plan.sizes.blacklistedRequests})
)`;
}

/**
 * The demo's tiny GeoIP database as the derivation's places: continent,
 * time zone and org of a download are functions of its IP's /16, like the
 * city and country the requests carry.
 */
export function demoPlaces(plan: Plan): Places {
  const block = 'indexOf(blk_prefix, intDiv(toUInt32(ip4), 65536))';
  return {
    constants: geoConstants(plan),
    city: 'city',
    country: 'country',
    continent: `city_continent[blk_city[${block}]]`,
    timezone: `city_timezone[blk_city[${block}]]`,
    org: `blk_org[${block}]`,
  };
}
