import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { accessDeclaredIn, type Access } from '../../../src/cube/models/access';

/**
 * The cubes as the tests see them, transcribed from the spec and the table
 * layout (src/warehouse/ddl.ts), not read from the models: their count
 * measures with the same count as direct SQL, dimensions with the column
 * expression behind them (to read candidate values and write oracles), and
 * time dimensions. Whether their rows belong to accounts is what each cube's
 * own model file declares ("# access: …"); the isolation tests hold every
 * cube to it against SQL.
 */

const SCHEMA_DIR = path.resolve(__dirname, '..', '..', '..', 'schema');

/** The access declared in the cube's model file (schema/<cube>.yml or .js), if any. */
export function declaredAccess(cube: string): Access | undefined {
  const file = readdirSync(SCHEMA_DIR).find((name) => name.replace(/\.(ya?ml|js)$/, '') === cube);
  return file === undefined ? undefined : accessDeclaredIn(readFileSync(path.join(SCHEMA_DIR, file), 'utf8')).access;
}

export type DimType = 'string' | 'number' | 'boolean';
export interface Dim {
  name: string;
  sql: string;
  type: DimType;
  nullable?: boolean;
}
export interface CubeSpec {
  cube: string;
  table?: string;
  counts: string[];
  /** Each count measure as an aggregate over `table`. */
  countSql: Record<string, string>;
  /** The cube's file declares "access: account": a key reads its own account's rows only. */
  accountOwned: boolean;
  dims: Dim[];
  /** Time dimensions; the first is the one random queries group or filter by. */
  times: string[];
}

const s = (name: string, sql = name): Dim => ({ name, sql, type: 'string' });

/** utmSourceMedium as docs/reference/models.md words it: "source / medium", a missing side "(none)", empty when both are. */
export const UTM_SOURCE_MEDIUM_SQL = `CASE
  WHEN utm_source != '' AND utm_medium != '' THEN utm_source || ' / ' || utm_medium
  WHEN utm_source != '' THEN utm_source || ' / (none)'
  WHEN utm_medium != '' THEN '(none) / ' || utm_medium
  ELSE '' END`;

const LINK_DIMS: Dim[] = [
  s('utmSource', 'utm_source'),
  s('utmMedium', 'utm_medium'),
  s('utmCampaign', 'utm_campaign'),
  s('utmSourceMedium', UTM_SOURCE_MEDIUM_SQL),
  s('link'),
  { name: 'isUniqueLinkView', sql: 'is_unique', type: 'boolean' },
  s('uaFamily', 'ua_family'),
  s('openParam', 'open_param'),
  s('refererDomain', 'referer_domain'),
  s('countryName', 'country_name'),
  s('countryCode', 'country_code'),
  s('languageName', 'language_name'),
];
const LINK_COUNT_SQL = {
  count: 'count()',
  linkViewCount: 'count()',
  uniqueLinkViewCount: 'countIf(is_unique)',
  openLinkViewCount: "countIf(open_param != '')",
};
export const LINK_COUNTS = Object.keys(LINK_COUNT_SQL);
const COUNT = { count: 'count()' };

const TRANSCRIBED: Omit<CubeSpec, 'accountOwned'>[] = [
  {
    cube: 'ChannelRanks',
    table: 'channel_ranks',
    counts: ['count'],
    countSql: COUNT,
    dims: [
      { name: 'rank', sql: 'rank', type: 'number' },
      s('countryCode', 'country_code'),
      s('countryName', 'country_name'),
      s('platform'),
      s('podcastId', 'podcast_id'),
      s('category'),
      s('podcastSlug', 'podcast_slug'),
      s('date', 'toString(toDate(snapshot_ts))'),
    ],
    times: ['timestamp'],
  },
  {
    cube: 'EpisodeRanks',
    table: 'episode_ranks',
    counts: ['count'],
    countSql: COUNT,
    dims: [
      { name: 'rank', sql: 'rank', type: 'number' },
      s('countryCode', 'country_code'),
      s('platform'),
      s('episodeId', 'episode_id'),
      s('category'),
      s('podcastSlug', 'podcast_slug'),
      s('date', 'toString(toDate(snapshot_ts))'),
    ],
    times: ['timestamp'],
  },
  {
    cube: 'DownloadEvents',
    table: 'downloads',
    counts: ['count'],
    countSql: COUNT,
    dims: [s('ip4', "if(ip4 = toIPv4(0), '', toString(ip4))"), s('token')],
    times: ['ts'],
  },
  {
    cube: 'Downloads',
    table: 'downloads',
    counts: ['count'],
    countSql: COUNT,
    dims: ['city', 'country', 'referer', 'parsed_ua', 'token', 'continent', 'os_name', 'device_type', 'org', 'timezone'].map((n) => s(n)),
    times: ['ts'],
  },
  {
    cube: 'PodcastEvents',
    table: 'podcast_events',
    counts: ['count'],
    countSql: COUNT,
    dims: [
      s('ipBlacklisted', 'toString(ip_blacklisted)'),
      s('parsedUa', 'parsed_ua'),
      s('token'),
      s('byteRangeLargerOne', 'toString(byte_range_larger_one)'),
      s('city'),
      s('country'),
      s('byteRange', 'byte_range'),
      s('referer'),
      s('detailsKey', 'details_key'),
    ],
    times: ['ts'],
  },
  {
    cube: 'WebEvents',
    table: 'web_events',
    counts: ['count'],
    countSql: COUNT,
    dims: [
      s('se_category'),
      s('se_action'),
      s('city'),
      s('country'),
      s('appId', 'app_id'),
      s('origin'),
      { name: 'se_value', sql: 'se_value', type: 'number', nullable: true },
      { name: 'latitude', sql: 'toString(latitude)', type: 'string', nullable: true },
    ],
    // DateTime64(3) columns; the last describe block splits ranges inside their seconds.
    times: ['trackTs', 'ingestTs'],
  },
  ...['LinksAdvancedAnalytics', 'LinksDashboard'].map((cube) => ({
    cube,
    table: 'link_views',
    counts: LINK_COUNTS,
    countSql: LINK_COUNT_SQL,
    dims: LINK_DIMS,
    times: ['timestamp'],
  })),
  {
    cube: 'LinksBasicAnalytics',
    table: 'link_views',
    counts: ['linkViewCount', 'uniqueLinkViewCount'],
    countSql: { linkViewCount: LINK_COUNT_SQL.linkViewCount, uniqueLinkViewCount: LINK_COUNT_SQL.uniqueLinkViewCount },
    dims: [s('link')],
    times: ['timestamp'],
  },
  // Built from two tables by a funnel: its oracle is funnelStepsSql.
  { cube: 'WebEventsFromPodcastFunnel', counts: ['conversions'], countSql: {}, dims: [s('step')], times: [] },
];

export const CUBES: CubeSpec[] = TRANSCRIBED.map((spec) => ({ ...spec, accountOwned: declaredAccess(spec.cube) === 'account' }));
/** Cubes whose file declares "access: public": every key reads every row. */
export const PUBLIC_CUBES = TRANSCRIBED.map((spec) => spec.cube).filter((cube) => declaredAccess(cube) === 'public');

/**
 * The funnel written by hand from its definition (docs/reference/api.md, "The funnel"),
 * with plain joins where the model takes ASOF JOINs: a listener (the account
 * and an IPv4 address, or an IPv6 address's first 64 bits as cutIPv6 writes
 * them), of a download or a web event alike, enters at their first download
 * `t` where `range` holds (the query's range, written as a condition on `t`);
 * they visit when their first visit (a web event where `steps.visit` holds:
 * by default a page view, one without a category) at or after the entry is
 * within 7 days of it, and convert when a conversion (`steps.conversion`: by
 * default a structured event of category conversion) is at or after that
 * visit and within 7 days of it. `where` narrows every table read (e.g. to
 * one account). Rows: k (step), b (`bucket` of the entry time `t`) and v
 * (listeners).
 */
export function funnelSeriesSql(db: string, where: string, range: string, bucket: string, steps = DEFAULT_STEPS): string {
  return `
  WITH ${funnelSteps(db, where, range, steps)}
  SELECT 'Podcast Download' AS k, ${bucket} AS b, count() AS v FROM entries GROUP BY b
  UNION ALL SELECT 'Website Visit', ${bucket} AS b, count() FROM visits GROUP BY b
  UNION ALL SELECT 'Conversion', ${bucket} AS b, count() FROM conversions GROUP BY b`;
}

/** The funnel's steps after a download unless FUNNEL_VISIT / FUNNEL_CONVERSION say otherwise, as conditions over web_events. */
const DEFAULT_STEPS = { visit: "se_category = ''", conversion: "se_category = 'conversion'" };

/** funnelSeriesSql in one bucket: rows k (step) and v (listeners). */
export function funnelStepsSql(db: string, where = '1 = 1', range = '1 = 1', steps = DEFAULT_STEPS): string {
  return `SELECT k, v FROM (${funnelSeriesSql(db, where, range, "''", steps)})`;
}

/** The listeners of funnelStepsSql's steps over all time: rows step and ip, the tuple (account_id, address). */
export function funnelAddressesSql(db: string, where = '1 = 1'): string {
  return `
  WITH ${funnelSteps(db, where, '1 = 1', DEFAULT_STEPS)}
  SELECT 'Podcast Download' AS step, ip FROM entries
  UNION ALL SELECT 'Website Visit', ip FROM visits
  UNION ALL SELECT 'Conversion', ip FROM conversions`;
}

function funnelSteps(db: string, where: string, range: string, steps: { visit: string; conversion: string }): string {
  const listener = '(account_id, if(ip4 = toIPv4(0), cutIPv6(ip, 8, 0), IPv4NumToString(ip4))) AS ip';
  const web = (condition: string) => `SELECT ${listener}, track_ts AS at FROM ${db}.web_events WHERE (${condition}) AND ${where}`;
  return `
    d AS (SELECT ${listener}, ts AS t FROM ${db}.downloads WHERE ${where}),
    entries AS (SELECT ip, entry AS t FROM (SELECT ip, min(t) AS entry FROM d WHERE ${range} GROUP BY ip)),
    first_visits AS (
      SELECT e.ip AS ip, e.t AS t, min(w.at) AS visited FROM entries AS e INNER JOIN (${web(steps.visit)}) AS w ON e.ip = w.ip
      WHERE w.at >= e.t GROUP BY e.ip, e.t),
    visits AS (SELECT ip, t, visited FROM first_visits WHERE visited <= t + INTERVAL 7 DAY),
    conversions AS (
      SELECT DISTINCT v.ip AS ip, v.t AS t FROM visits AS v INNER JOIN (${web(steps.conversion)}) AS c ON v.ip = c.ip
      WHERE c.at >= v.visited AND c.at <= v.visited + INTERVAL 7 DAY)`;
}
