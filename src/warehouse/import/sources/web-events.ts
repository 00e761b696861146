import { sqlLiteral } from '../../sql';
import { REQUEST_PLACES } from '../../derive/downloads';
import { FIRST_TIME, LAST_TIME, addressSql, ndjsonFormat, outsideTimesSql, parquetFormat, positionalFormat, timeSql } from '../formats';
import type { Accessors, ImportOptions, Lines, Source } from '../source';

/**
 * Website events as Snowplow's pipeline delivers them, into web_events (the
 * WebEvents cube, and the funnel's visits and conversions). Snowplow's
 * enriched event has 131 fields; SNOWPLOW_FIELDS is their order in the
 * tab-separated files its loaders write (no header), which are also the
 * names of its JSON form (the analytics SDKs') and of a Parquet file's
 * columns. The fields read, and what each becomes, are in docs/guides/bringing-data.md.
 */
export const SNOWPLOW_FIELDS = [
  'app_id',
  'platform',
  'etl_tstamp',
  'collector_tstamp',
  'dvce_created_tstamp',
  'event',
  'event_id',
  'txn_id',
  'name_tracker',
  'v_tracker',
  'v_collector',
  'v_etl',
  'user_id',
  'user_ipaddress',
  'user_fingerprint',
  'domain_userid',
  'domain_sessionidx',
  'network_userid',
  'geo_country',
  'geo_region',
  'geo_city',
  'geo_zipcode',
  'geo_latitude',
  'geo_longitude',
  'geo_region_name',
  'ip_isp',
  'ip_organization',
  'ip_domain',
  'ip_netspeed',
  'page_url',
  'page_title',
  'page_referrer',
  'page_urlscheme',
  'page_urlhost',
  'page_urlport',
  'page_urlpath',
  'page_urlquery',
  'page_urlfragment',
  'refr_urlscheme',
  'refr_urlhost',
  'refr_urlport',
  'refr_urlpath',
  'refr_urlquery',
  'refr_urlfragment',
  'refr_medium',
  'refr_source',
  'refr_term',
  'mkt_medium',
  'mkt_source',
  'mkt_term',
  'mkt_content',
  'mkt_campaign',
  'contexts',
  'se_category',
  'se_action',
  'se_label',
  'se_property',
  'se_value',
  'unstruct_event',
  'tr_orderid',
  'tr_affiliation',
  'tr_total',
  'tr_tax',
  'tr_shipping',
  'tr_city',
  'tr_state',
  'tr_country',
  'ti_orderid',
  'ti_sku',
  'ti_name',
  'ti_category',
  'ti_price',
  'ti_quantity',
  'pp_xoffset_min',
  'pp_xoffset_max',
  'pp_yoffset_min',
  'pp_yoffset_max',
  'useragent',
  'br_name',
  'br_family',
  'br_version',
  'br_type',
  'br_renderengine',
  'br_lang',
  'br_features_pdf',
  'br_features_flash',
  'br_features_java',
  'br_features_director',
  'br_features_quicktime',
  'br_features_realplayer',
  'br_features_windowsmedia',
  'br_features_gears',
  'br_features_silverlight',
  'br_cookies',
  'br_colordepth',
  'br_viewwidth',
  'br_viewheight',
  'os_name',
  'os_family',
  'os_manufacturer',
  'os_timezone',
  'dvce_type',
  'dvce_ismobile',
  'dvce_screenwidth',
  'dvce_screenheight',
  'doc_charset',
  'doc_width',
  'doc_height',
  'tr_currency',
  'tr_total_base',
  'tr_tax_base',
  'tr_shipping_base',
  'ti_currency',
  'ti_price_base',
  'base_currency',
  'geo_timezone',
  'mkt_clickid',
  'mkt_network',
  'etl_tags',
  'dvce_sent_tstamp',
  'refr_domain_userid',
  'refr_device_tstamp',
  'derived_contexts',
  'domain_sessionid',
  'derived_tstamp',
  'event_vendor',
  'event_name',
  'event_format',
  'event_version',
  'event_fingerprint',
  'true_tstamp',
];

/** The kinds of event stored (`event`): page views and structured events; others are skipped and counted. */
const STORED = ['page_view', 'struct'];

/** The checked rows' columns: web_events' own, before places. */
const CHECKED = [
  "track_ts DateTime64(3, 'UTC')",
  "ingest_ts DateTime64(3, 'UTC')",
  'event_id UUID',
  'app_id String',
  'origin String',
  'session_id String',
  'ua String',
  'ip IPv6',
  'ip4 IPv4',
  'page_title String',
  'page_url String',
  'se_category String',
  'se_action String',
  'se_label String',
  'se_value Nullable(Float64)',
  'latitude Nullable(Float64)',
  'longitude Nullable(Float64)',
  'geo_city String',
  'geo_country String',
  'account_id String',
];

const UUID = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';

/**
 * Each row's fields, checked: first what every row needs (collector_tstamp, a
 * UUID event_id, event), then, for the kinds stored, what their columns
 * need. A row of another kind is valid and skipped (`skip`: its kind).
 */
function checkSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  // In the JSON form an absent field may be written null.
  const text = (f: string) => (a.json ? `if(${a.raw(f)} = 'null', '', ${a.text(f)})` : a.text(f));
  const time = (f: string, name: string) => `${text(f)} AS ${name}_text, ${timeSql(`${name}_text`, 'optional')} AS ${name}64`;
  const badTime = (name: string, field: string) =>
    `${name}_text != '' AND (${name}64 IS NULL OR ${outsideTimesSql(`${name}64`)}), '${field} is not a time from ${FIRST_TIME} to ${LAST_TIME} (YYYY-MM-DD hh:mm:ss[.mmm], UTC, or ISO 8601)'`;
  const number = (f: string, name: string) => `${text(f)} AS ${name}_text, toFloat64OrNull(${name}_text) AS ${name}`;
  const badNumber = (name: string, field: string) => `${name}_text != '' AND ${name} IS NULL, '${field} is not a number'`;
  return `
    SELECT line, ${a.line} AS line_text, ${a.columns ? `${a.columns},` : ''}
      ${text('event')} AS event,
      ${text('event_id')} AS event_id_text,
      toUUIDOrZero(event_id_text) AS event_id,
      ${time('collector_tstamp', 'collector')},
      ${time('derived_tstamp', 'derived')},
      ${time('dvce_created_tstamp', 'created')},
      ifNull(collector64, toDateTime64(0, 3, 'UTC')) AS ingest_ts,
      ifNull(multiIf(derived_text != '', derived64, created_text != '', created64, collector64), toDateTime64(0, 3, 'UTC')) AS track_ts,
      ${text('app_id')} AS app_id,
      ${text('page_url')} AS page_url,
      ${text('page_title')} AS page_title,
      lower(if(${text('page_urlscheme')} != '', ${text('page_urlscheme')}, protocol(page_url))) AS origin_scheme,
      lower(if(${text('page_urlhost')} != '', ${text('page_urlhost')}, domain(page_url))) AS origin_host,
      if(${text('page_urlport')} != '', toUInt16OrZero(${text('page_urlport')}), port(page_url)) AS origin_port,
      if(origin_host = '', '', concat(origin_scheme, '://', origin_host,
        if(origin_port = 0 OR (origin_scheme, origin_port) IN (('http', 80), ('https', 443)), '', concat(':', toString(origin_port))))) AS origin,
      ${text('se_category')} AS se_category,
      ${text('se_action')} AS se_action,
      ${text('se_label')} AS se_label,
      ${number('se_value', 'se_value')},
      ${number('geo_latitude', 'latitude')},
      ${number('geo_longitude', 'longitude')},
      ${text('geo_city')} AS geo_city,
      upper(${text('geo_country')}) AS geo_country,
      ${text('useragent')} AS ua,
      ${text('domain_sessionid')} AS session_id,
      ${addressSql(text('user_ipaddress'))},
      ${sqlLiteral(options.account ?? '')} AS account_id,
      ${options.ignoreUnknown ? 'CAST([] AS Array(String))' : a.unknown} AS unknown,
      multiIf(
        NOT (${a.isRecord}), ${sqlLiteral(a.notARecord)},
        length(unknown) > 0, concat('unknown field ', unknown[1], ' (--ignore-unknown skips unknown fields)'),
        collector_text = '', 'collector_tstamp is missing',
        ${badTime('collector', 'collector_tstamp')},
        event_id_text = '', 'event_id is missing',
        NOT match(event_id_text, ${sqlLiteral(UUID)}), 'event_id is not a UUID',
        event = '', 'event is missing',
        event NOT IN ${sqlLiteral(STORED)}, '',
        ${badTime('derived', 'derived_tstamp')},
        ${badTime('created', 'dvce_created_tstamp')},
        event = 'struct' AND se_category = '', 'a structured event without se_category',
        ${badNumber('se_value', 'se_value')},
        ${badNumber('latitude', 'geo_latitude')},
        ${badNumber('longitude', 'geo_longitude')},
        '') AS reason,
      if(event IN ${sqlLiteral(STORED)}, '', event) AS skip
    FROM ${lines.from}`;
}

/**
 * Valid rows as web_events holds them. Places: the event's own (Snowplow's
 * geo enrichment: geo_country, an ISO code, named in English, and geo_city)
 * when it has a country, else the derivation's for its address (the IP
 * database's, when loaded), as requests get theirs. Coordinates are the
 * event's own only: the IP database has none.
 */
function rowsSql(checked: string, id: string, options: ImportOptions): string {
  const places = options.derivation.places ?? REQUEST_PLACES;
  const constants = Object.entries(places.constants);
  return `
${constants.length > 0 ? `WITH ${constants.map(([name, expr]) => `${expr} AS ${name}`).join(', ')}` : ''}
SELECT account_id, track_ts, ingest_ts, event_id, app_id, origin, session_id, ua, ip4, ip, page_title, page_url, se_category, se_action,
  se_label, se_value, latitude, longitude, if(geo_country != '', geo_city, place_city) AS city,
  if(geo_country != '', ${places.countryName?.('geo_country') ?? "''"}, place_country) AS country, ${sqlLiteral(id)} AS import_id
FROM (
  SELECT *, ${places.city} AS place_city, ${places.country} AS place_country
  FROM (SELECT *, '' AS city, '' AS country FROM ${checked} WHERE reason = '' AND skip = '')
)`;
}

/** Keys of the SDKs' JSON form that are no field of the enriched event but its shredded contexts and self-describing event. */
const SHREDDED = "startsWith(k, 'contexts_') OR startsWith(k, 'unstruct_event_')";

export const WEB_EVENTS: Source = {
  name: 'web-events',
  row: { one: 'event', many: 'events' },
  formats: {
    snowplow: positionalFormat(SNOWPLOW_FIELDS, "Snowplow's enriched event"),
    'snowplow-json': ndjsonFormat(SNOWPLOW_FIELDS, SHREDDED),
    parquet: parquetFormat(SNOWPLOW_FIELDS),
  },
  fields: SNOWPLOW_FIELDS,
  rowAccounts: false,
  target: 'web_events',
  time: 'track_ts',
  checked: CHECKED,
  check: checkSql,
  async stage({ options, id, checked }) {
    return { rows: rowsSql(checked, id, options) };
  },
  // Snowplow delivers at least once: a copy has the event's id, and its time on the same day (a tracker's retry has the
  // event's own device time, which derived_tstamp corrects to the collector's clock).
  duplicates: {
    id: 'event_id',
    within: 'day',
    // A hash of a null is null: the value as text ('' for none).
    fields: "cityHash64(track_ts, ingest_ts, app_id, page_url, page_title, se_category, se_action, se_label, ifNull(toString(se_value), ''), ua, ip)",
  },
};
