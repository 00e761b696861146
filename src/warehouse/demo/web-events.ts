/** web_events: Snowplow-style events on the podcast websites. */
import { LISTEN_ON_APPS, MEMBERSHIP_TIERS, SHOP_PRODUCTS, WEB_BROWSERS } from '../reference-data';
import { DAY, type Plan, TRACKED_SHOW_KEY, VISITING_DOWNLOADERS_PER_MILLE } from './plan';
import {
  activityConstants,
  activitySql,
  calendarSql,
  episodeLabelSql,
  episodeTitleSql,
  geoConstants,
  latestEpisodeSql,
  podcastConstants,
  titleConstants,
  uuidSql,
} from './sql';
import { groupedLookupTables, lookupTable, type SqlRandom } from './random';
import { sqlLiteral, withClause } from '../sql';

// web_events.

export const WEB_COLUMNS =
  'account_id, track_ts, ingest_ts, event_id, app_id, origin, session_id, ua, ip4, page_title, page_url, ' +
  'se_category, se_action, se_label, se_value, latitude, longitude, city, country';
export const WEB_OS_GROUPS = ['iOS', 'Android', 'macOS', 'Windows', 'Linux'];
/** Conversion kinds (se_category 'conversion'), in the order of their weights in webConstants. */
export const CONVERSION_ACTIONS = ['newsletter_signup', 'purchase', 'membership_start'];

export function webConstants(plan: Plan): Record<string, string> {
  return {
    ...podcastConstants(plan),
    ...geoConstants(plan),
    ...titleConstants(),
    ...activityConstants(),
    web_ua: sqlLiteral(WEB_BROWSERS.map((b) => b.ua)),
    web_lut: lookupTable(WEB_BROWSERS.map((b) => b.weight)),
    web_os_lut: groupedLookupTables(WEB_OS_GROUPS.map((os) => WEB_BROWSERS.map((b) => (b.os === os ? b.weight : 0)))),
    // after the landing page: browse, play, pause, listen-on click, newsletter form, add to cart
    event_kind_lut: lookupTable([50, 18, 6, 10, 8, 8]),
    conversion_lut: lookupTable([60, 25, 15]),
    conversion_action: sqlLiteral(CONVERSION_ACTIONS),
    shop_product: sqlLiteral(SHOP_PRODUCTS.map(([name]) => name)),
    shop_price: `CAST(${sqlLiteral(SHOP_PRODUCTS.map(([, price]) => price))} AS Array(Float64))`,
    membership_tier: sqlLiteral(MEMBERSHIP_TIERS.map(([name]) => name)),
    membership_price: `CAST(${sqlLiteral(MEMBERSHIP_TIERS.map(([, price]) => price))} AS Array(Float64))`,
    listen_on_app: sqlLiteral(LISTEN_ON_APPS),
  };
}

/**
 * Expands sessions into Snowplow events. `sessions` must yield session_key,
 * p (tracked podcast), start_ms, ip4, ua, city, country, latitude, longitude,
 * conversion_rate and landing_ep (episode number of the landing page, 0 for
 * the home page). Event kinds: 1 landing page view, 2 page view, 3 play,
 * 4 pause, 5 listen-on click, 6 newsletter form view, 7 add to cart,
 * 8 page view before converting, 9 conversion (always the last event).
 */
export function webEventsSql(plan: Plan, sessions: string): string {
  const r = plan.random;
  const label = episodeLabelSql;
  const episodeTitle = episodeTitleSql(r, 'pod_category[p]', `${TRACKED_SHOW_KEY} + p`, 'page_ep - pod_first_number[p] + 1', 'page_ep');
  return `
INSERT INTO ${plan.table('web_events')} (${WEB_COLUMNS})
${withClause(webConstants(plan))}
SELECT
  pod_account[p],
  fromUnixTimestamp64Milli(track_ms, 'UTC'),
  -- collectors batch: usually well under a second, sometimes minutes later
  fromUnixTimestamp64Milli(track_ms + if(${r.unit('late', 'session_key', 'seq')} < 0.04,
    60000 + ${r.hash('ingest-delay', 'session_key', 'seq')} % 540000,
    150 + ${r.hash('ingest-delay', 'session_key', 'seq')} % 2350), 'UTC'),
  toUUID(${uuidSql(r.hash('event', 'session_key', 'seq'), r.hash('event/low', 'session_key', 'seq'))}),
  pod_app_id[p],
  pod_origin[p],
  session_id,
  ua,
  ip4,
  multiIf(page_ep > 0, concat(${episodeTitle}, ' | ', pod_title[p]),
    page = '/', pod_title[p],
    concat(transform(page, ['/episodes', '/about', '/newsletter', '/shop', '/membership'],
      ['Episodes', 'About', 'Newsletter', 'Shop', 'Membership'], ''), ' | ', pod_title[p])),
  concat(pod_origin[p], page),
  ['', '', 'player', 'player', 'outbound', 'newsletter', 'shop', '', 'conversion'][kind],
  if(kind = 9, conversion_action[conversion], ['', '', 'play', 'pause', 'click', 'form_view', 'add_to_cart', '', ''][kind]),
  multiIf(
    kind IN (3, 4), concat('ep-', ${label('played_ep')}),
    kind = 5, listen_on_app[1 + ${r.hash('listen-on', 'session_key', 'seq')} % ${LISTEN_ON_APPS.length}],
    kind = 6, ['footer', 'popup'][1 + ${r.hash('form', 'session_key')} % 2],
    kind = 7 OR (kind = 9 AND conversion = 2), shop_product[product],
    kind = 9 AND conversion = 1, ['footer', 'popup', 'newsletter-page'][1 + ${r.hash('form', 'session_key')} % 3],
    kind = 9, membership_tier[tier],
    ''),
  multiIf(
    kind = 4, toFloat64(60 + ${r.hash('position', 'session_key', 'seq')} % 2400),
    kind = 7, shop_price[product],
    kind = 9 AND conversion = 2, round(shop_price[product] * (1 + ${r.hash('quantity', 'session_key')} % 2) + 4.95, 2),
    kind = 9 AND conversion = 3, membership_price[tier],
    NULL),
  latitude,
  longitude,
  city,
  country
FROM (
  SELECT
    *,
    seq,
    start_ms + seq * 45000 + toInt64(${r.hash('gap', 'session_key', 'seq')} % 40000) AS track_ms,
    multiIf(seq = 0, 1, converts AND seq + 1 = events, 9, converts AND seq + 2 = events, 8,
      1 + ${r.pick('event_kind_lut', 'kind', 'session_key', 'seq')}) AS kind,
    pod_first_number[p] - 1 + greatest(1, ${latestEpisodeSql('p', 'intDiv(start_ms, 1000)')}
      - toInt64(floor(-ln(${r.unit('browsed-episode', 'session_key', 'seq')}) * 2))) AS browsed_ep,
    ${r.hash('page', 'session_key', 'seq')} % 4 AS browse_choice,
    multiIf(kind IN (1, 5), landing_ep, kind = 2 AND browse_choice = 3, browsed_ep, kind IN (3, 4), played_ep, 0) AS page_ep,
    multiIf(
      page_ep > 0, concat('/episodes/ep-', ${label('page_ep')}),
      kind = 2, ['/', '/episodes', '/about'][1 + browse_choice],
      kind IN (1, 5), '/',
      kind = 6, '/newsletter',
      kind = 7, '/shop',
      ['/newsletter', '/shop', '/membership'][conversion]) AS page
  FROM (
    SELECT
      *,
      ${r.unit('converts', 'session_key')} < conversion_rate AS converts,
      ${r.pick('conversion_lut', 'conversion', 'session_key')} AS conversion,
      if(converts, 3 + ${r.hash('length', 'session_key')} % 5,
        least(10, 1 + toUInt32(floor(-ln(${r.unit('length', 'session_key')}) * 2.2)))) AS events,
      ${uuidSql(r.hash('session', 'session_key'), r.hash('session/low', 'session_key'))} AS session_id,
      1 + ${r.hash('product', 'session_key')} % ${SHOP_PRODUCTS.length} AS product,
      1 + ${r.hash('tier', 'session_key')} % ${MEMBERSHIP_TIERS.length} AS tier,
      if(landing_ep > 0, landing_ep, pod_first_number[p] - 1 + greatest(1, ${latestEpisodeSql('p', 'intDiv(start_ms, 1000)')}
        - toInt64(floor(-ln(${r.unit('played-episode', 'session_key')}) * 1.5)))) AS played_ep
    FROM (${sessions})
  )
  ARRAY JOIN range(toUInt32(events)) AS seq
)`;
}

export function cityCoordinatesSql(random: SqlRandom, ci: string, key: string): string {
  const jitter = (tag: string) => `(${random.unit(tag, key)} - 0.5) * 0.08`;
  // Some browsers block geolocation; Snowplow then has no coordinates.
  const missing = `${random.unit('no-geo', key)} < 0.12`;
  return `if(${missing}, NULL, city_lat[${ci}] + ${jitter('lat')}) AS latitude,
      if(${missing}, NULL, city_lon[${ci}] + ${jitter('lon')}) AS longitude`;
}

/**
 * Website sessions of listeners: 7% of download IPs visit the site of a show
 * they downloaded, minutes to seven days later (skewed early), from a browser
 * on the same kind of device; they convert far more often than other visitors.
 */
export function downloaderWebEventsSql(plan: Plan): string {
  const r = plan.random;
  const device = 'download.5';
  const osGroup = `if(${device} IN ('smartphone', 'tablet', 'desktop'), transform(download.4, ${sqlLiteral(WEB_OS_GROUPS)}, [1, 2, 3, 4, 5], 1), 1)`;
  return webEventsSql(
    plan,
    `
    SELECT
      ${r.hash('downloader-session', 'ip4')} AS session_key,
      indexOf(pod_token, toString(download.2)) AS p,
      (toInt64(toUnixTimestamp(download.1)) + 60 + toInt64(floor(${7 * DAY} * pow(${r.unit('visit-delay', 'ip4')}, 3)))) * 1000
        + toInt64(${r.hash('visit-ms', 'ip4')} % 1000) AS start_ms,
      ip4,
      web_ua[${r.pickIn('web_os_lut', osGroup, 'web-ua', 'ip4')}] AS ua,
      toString(download.6) AS city,
      toString(download.7) AS country,
      indexOf(city_name, city) AS ci,
      ${cityCoordinatesSql(r, 'ci', 'ip4')},
      0.12 AS conversion_rate,
      if(${r.unit('landing', 'ip4')} < 0.55, toInt64(extract(download.3, 'ep-([0-9]+)[.]mp3')), 0) AS landing_ep
    FROM (
      SELECT ip4, argMin((ts, token, url, os_name, device_type, city, country), (${r.hash('visited-download', 'ip4', calendarSql(plan, 'toInt64(toUnixTimestamp(ts))'), 'url', 'raw_ua')}, ts, url, raw_ua)) AS download
      FROM ${plan.table('downloads')}
      WHERE ${r.hash('visitor', 'ip4')} % 1000 < ${VISITING_DOWNLOADERS_PER_MILLE}
      GROUP BY ip4
    )
    WHERE start_ms <= ${(plan.windowEnd - 3600) * 1000}`,
  );
}

/** Everyone else: visitors from the upper half of residential /16s, which never download. */
export function organicWebEventsSql(plan: Plan): string {
  const r = plan.random;
  return webEventsSql(
    plan,
    `
    SELECT
      ${r.hash('organic-session', 'number')} AS session_key,
      ${r.pick('pod_lut', 'site', 'number')} AS p,
      ${r.pick('listener_block_lut', 'visitor-block', 'number')} AS block,
      blk_city[block] AS ci,
      toIPv4(blk_prefix[block] * 65536 + 32768 + ${r.hash('visitor-host', 'number')} % 32767) AS ip4,
      web_ua[${r.pick('web_lut', 'web-ua', 'number')}] AS ua,
      ${plan.windowStart} + toInt64(floor(${r.unit('time', 'number')} * ${plan.days * DAY - 3600})) AS start_s,
      start_s * 1000 + toInt64(${r.hash('visit-ms', 'number')} % 1000) AS start_ms,
      city_name[ci] AS city,
      city_country[ci] AS country,
      ${cityCoordinatesSql(r, 'ci', 'number')},
      0.02 AS conversion_rate,
      if(${r.unit('landing', 'number')} < 0.4, pod_first_number[p] - 1 + greatest(1, ${latestEpisodeSql('p', 'start_s')}
        - toInt64(floor(-ln(${r.unit('landing-episode', 'number')}) * 2))), 0) AS landing_ep
    FROM numbers(${plan.sizes.organicSessions})
    WHERE ${r.unit('keep', 'number')} < ${activitySql(plan, 'start_s', 'city_offset[ci]')}`,
  );
}
