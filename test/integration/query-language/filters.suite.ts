/**
 * Every filter operator of Cube 0.33's query language, table-driven: each case
 * is a Cube query and the same question written by hand as ClickHouse SQL over
 * the same tables; the rows must match (values and row count).
 *
 * Semantics the oracles follow, read from Cube 0.33's code
 * (api-gateway/dist/src/query.js, schema-compiler/dist/src/adapter/BaseFilter.js
 * and ClickHouseQuery.js) and its documentation:
 * - contains / startsWith / endsWith (and their negations) are case-insensitive.
 *   The ClickHouse dialect implements them as `lower(col) LIKE lower(value)`, and
 *   ClickHouse's lower() folds ASCII letters only; the oracles use
 *   positionCaseInsensitive / upper(), which fold ASCII the same way. `_` and
 *   `%` in values are escaped, so they match literally.
 * - The negated operators (notEquals, notIn, notContains, notStartsWith,
 *   notEndsWith) keep rows where the member is NULL; the others drop them.
 * - Several values in equals / contains / startsWith / endsWith / in mean OR;
 *   in notEquals / notContains / … they mean AND (none of them).
 * - Date values are local to the query's timezone (UTC unless given); a
 *   'YYYY-MM-DD' value is that whole day for the date operators and its
 *   first instant for equals, in, gt and the other value operators.
 * - Filters on measures become HAVING; measureFilter applies a measure's own
 *   `filters` to the rows (WHERE).
 */
import { readFileSync } from 'node:fs';
import { CUBES, type CubeSpec } from '../support/catalog';
import { withDefaultService } from '../support/default-service';
import { load } from '../support/api';

type Row = Record<string, unknown>;
type Query = Record<string, unknown>;
type Filter = Record<string, any>;

const suite = withDefaultService();

/** Dates and instants of the dataset the cases need (it ends today, so they are read from the data). */
interface Ctx {
  /** Ten and three days before the last day with downloads, 'YYYY-MM-DD'. */
  d10: string;
  d3: string;
  /** A web event whose track_ts has milliseconds: 'YYYY-MM-DDTHH:mm:ss.SSS', and the start of that second. */
  eventTs: string;
  eventSecond: string;
  /** That event's track_ts as local times of New York and of Kolkata (a half-hour offset). */
  eventTsNewYork: string;
  eventTsKolkata: string;
  /** The most frequent referer of a request that has one. */
  referer: string;
}
let ctx: Ctx;

beforeAll(async () => {
  const [days] = await suite.oracle.rows<{ d10: string; d3: string }>(
    `SELECT toString(toDate(max(ts)) - 10) AS d10, toString(toDate(max(ts)) - 3) AS d3 FROM analytics.downloads`,
  );
  const [event] = await suite.oracle.rows<{ ts: string; second: string; newYork: string; kolkata: string }>(`
    SELECT replaceOne(toString(track_ts), ' ', 'T') AS ts, replaceOne(toString(toStartOfSecond(track_ts)), ' ', 'T') AS second,
      replaceOne(toString(toTimeZone(track_ts, 'America/New_York')), ' ', 'T') AS newYork,
      replaceOne(toString(toTimeZone(track_ts, 'Asia/Kolkata')), ' ', 'T') AS kolkata
    FROM analytics.web_events WHERE toMillisecond(track_ts) >= 100 ORDER BY track_ts, event_id LIMIT 1`);
  const [{ referer }] = await suite.oracle.rows<{ referer: string }>(
    `SELECT referer FROM analytics.podcast_events WHERE referer != '' GROUP BY referer ORDER BY count() DESC, referer LIMIT 1`,
  );
  ctx = { d10: days.d10, d3: days.d3, eventTs: event.ts, eventSecond: event.second, eventTsNewYork: event.newYork, eventTsKolkata: event.kolkata, referer };
});

/** One cell as comparable: numbers (service strings or oracle numbers) as rounded numbers, booleans as 'true'/'false'. */
function cell(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return String(value);
  const text = String(value);
  return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) ? Number(Number(text).toPrecision(12)) : text;
}
const canonical = (rows: Row[]) =>
  rows
    .map((row) =>
      JSON.stringify(
        Object.fromEntries(
          Object.keys(row)
            .sort()
            .map((k) => [k, cell(row[k])]),
        ),
      ),
    )
    .sort();

/** What the normalized query echoes for the filters sent: `dimension` becomes `member`, values become strings. */
function echoed(filters: Filter[]): Filter[] {
  return filters.map((f) => {
    if (f.or) return { or: echoed(f.or) };
    if (f.and) return { and: echoed(f.and) };
    const values = f.values ? { values: f.values.map((v: unknown) => (v == null ? v : String(v))) } : {};
    return { member: f.member ?? f.dimension, operator: f.operator, ...values };
  });
}

interface Case {
  name: string;
  query: (c: Ctx) => Query;
  /** The same question by hand; columns aliased by member name ("Cube.member"). */
  sql: (c: Ctx) => string;
  /** What Cube 0.33 alone answers wrongly here; src/cube/engine/dialect.ts corrects it, and the case proves the correction. */
  cube033Bug?: string;
}

async function runCase({ query, sql }: Case): Promise<void> {
  const q = query(ctx);
  const [res, expected] = await Promise.all([load(suite.service, q), suite.oracle.rows<Row>(sql(ctx))]);
  expect(res.status).toBe(200);
  // The oracle must find something, else the comparison proves little.
  expect(expected.length).toBeGreaterThan(0);
  expect(expected.some((row) => Object.entries(row).some(([k, v]) => k.endsWith('count') && Number(v) > 0))).toBe(true);
  expect(res.body.data).toHaveLength(expected.length);
  expect(canonical(res.body.data)).toEqual(canonical(expected));
  expect(res.body.query.filters).toEqual(echoed((q.filters as Filter[] | undefined) ?? []));
}

/** A text as a ClickHouse string literal. */
const sqlText = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const f = (member: string, operator: string, values?: unknown[]): Filter => ({ member, operator, ...(values ? { values } : {}) });
const by =
  (measures: string[], dimensions: string[], filters: Filter[], extra: Query = {}) =>
  () => ({ measures, dimensions, filters, ...extra });

// ---------------------------------------------------------------------------
// Strings: equals, notEquals, in, notIn, contains, startsWith, endsWith, …
// ---------------------------------------------------------------------------
const STRING_CASES: Case[] = [
  ...(['equals', 'in'] as const).map((operator) => ({
    name: `${operator} a value and null on a text member: the value's rows and the unset ones, '' among them`,
    query: (c: Ctx) => ({
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.parsedUa'],
      filters: [f('PodcastEvents.referer', operator, [c.referer, null])],
    }),
    sql: (c: Ctx) => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE referer = ${sqlText(c.referer)} OR referer = '' GROUP BY parsed_ua`,
    cube033Bug: "null beside a value added `OR referer IS NULL` only, which no '' matches",
  })),
  ...(['notEquals', 'notIn'] as const).map((operator) => ({
    name: `${operator} a value and null on a text member: the set rows but the value's, as notEquals null alone drops ''`,
    query: (c: Ctx) => ({
      measures: ['PodcastEvents.count'],
      dimensions: ['PodcastEvents.parsedUa'],
      filters: [f('PodcastEvents.referer', operator, [c.referer, null])],
    }),
    sql: (c: Ctx) => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE referer != ${sqlText(c.referer)} AND referer != '' GROUP BY parsed_ua`,
    cube033Bug: "null beside a value added nothing, and the requests without a referer ('') stayed",
  })),
  {
    name: 'equals null alone on a text member: notSet, the empty texts too',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.referer', 'equals', [null])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE referer = '' GROUP BY parsed_ua`,
  },
  {
    name: 'equals, one value',
    query: by(['Downloads.count'], ['Downloads.parsed_ua'], [f('Downloads.country', 'equals', ['Germany'])]),
    sql: () => `SELECT parsed_ua AS "Downloads.parsed_ua", count() AS "Downloads.count"
      FROM analytics.downloads WHERE country = 'Germany' GROUP BY parsed_ua`,
  },
  {
    name: 'equals, several values: any of them (OR)',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'equals', ['Germany', 'Spain', 'Japan'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE country = 'Germany' OR country = 'Spain' OR country = 'Japan' GROUP BY country`,
  },
  {
    name: 'the older `dimension` key instead of `member` (echoed as member)',
    query: by(['Downloads.count'], ['Downloads.parsed_ua'], [{ dimension: 'Downloads.country', operator: 'equals', values: ['Germany'] }]),
    sql: () => `SELECT parsed_ua AS "Downloads.parsed_ua", count() AS "Downloads.count"
      FROM analytics.downloads WHERE country = 'Germany' GROUP BY parsed_ua`,
  },
  {
    name: 'notEquals, one value',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.parsedUa', 'notEquals', ['Apple Podcasts'])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE parsed_ua != 'Apple Podcasts' GROUP BY parsed_ua`,
  },
  {
    name: 'notEquals, several values: none of them',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.parsedUa', 'notEquals', ['Apple Podcasts', 'Spotify'])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE NOT (parsed_ua = 'Apple Podcasts' OR parsed_ua = 'Spotify') GROUP BY parsed_ua`,
  },
  {
    name: 'in',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'in', ['Germany', 'Spain'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE has(['Germany', 'Spain'], country) GROUP BY country`,
  },
  {
    name: 'notIn',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'notIn', ['Germany', 'Spain'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE NOT has(['Germany', 'Spain'], country) GROUP BY country`,
  },
  {
    // ASCII case folding, as ClickHouse's lower() in Cube's `lower(col) LIKE lower(value)`.
    name: 'contains is case-insensitive (ASCII): UNITED finds United States and United Kingdom',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'contains', ['UNITED'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE positionCaseInsensitive(country, 'UNITED') > 0 GROUP BY country`,
  },
  {
    name: 'contains, several values: any of them',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.parsedUa', 'contains', ['cast', 'BOT'])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events
      WHERE positionCaseInsensitive(parsed_ua, 'cast') > 0 OR positionCaseInsensitive(parsed_ua, 'BOT') > 0 GROUP BY parsed_ua`,
  },
  {
    name: 'contains matches _ literally, not as a LIKE wildcard',
    query: by(['WebEvents.count'], ['WebEvents.se_action'], [f('WebEvents.se_action', 'contains', ['_'])]),
    sql: () => `SELECT se_action AS "WebEvents.se_action", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE position(se_action, '_') > 0 GROUP BY se_action`,
  },
  {
    name: 'startsWith matches % and _ literally, not as LIKE wildcards',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'startsWith', ['%', 'Un_ted', 'spa'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads
      WHERE startsWith(upper(country), '%') OR startsWith(upper(country), 'UN_TED') OR startsWith(upper(country), 'SPA') GROUP BY country`,
  },
  {
    name: 'notEndsWith matches % literally: it keeps every row without a trailing %',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'notEndsWith', ['%'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE NOT endsWith(country, '%') GROUP BY country`,
  },
  {
    name: 'endsWith and notContains match a backslash literally (a trailing one too)',
    query: by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'endsWith', ['\\', 'many']), f('Downloads.country', 'notContains', ['y\\'])]),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
      FROM analytics.downloads WHERE (endsWith(country, '\\\\') OR endsWith(upper(country), 'MANY')) AND position(country, 'y\\\\') = 0 GROUP BY country`,
  },
  {
    name: 'notContains, several values: none of them',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.parsedUa', 'notContains', ['pod', 'CAST'])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events
      WHERE positionCaseInsensitive(parsed_ua, 'pod') = 0 AND positionCaseInsensitive(parsed_ua, 'CAST') = 0 GROUP BY parsed_ua`,
  },
  {
    name: 'notContains keeps rows where the member is NULL (latitude of events without geo)',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.latitude', 'notContains', ['41.'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE latitude IS NULL OR position(toString(latitude), '41.') = 0 GROUP BY se_category`,
  },
  {
    name: 'startsWith, several values, case-insensitive',
    query: by(['Downloads.count'], ['Downloads.city'], [f('Downloads.city', 'startsWith', ['new', 'SAN'])]),
    sql: () => `SELECT city AS "Downloads.city", count() AS "Downloads.count"
      FROM analytics.downloads
      WHERE positionCaseInsensitive(city, 'new') = 1 OR positionCaseInsensitive(city, 'SAN') = 1 GROUP BY city`,
  },
  {
    name: 'startsWith drops rows where the member is NULL',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.latitude', 'startsWith', ['-'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE latitude IS NOT NULL AND startsWith(toString(latitude), '-') GROUP BY se_category`,
  },
  {
    name: 'notStartsWith (the empty referer is kept)',
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.refererDomain'], [f('LinksAdvancedAnalytics.refererDomain', 'notStartsWith', ['L.'])]),
    sql: () => `SELECT referer_domain AS "LinksAdvancedAnalytics.refererDomain", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views WHERE NOT startsWith(upper(referer_domain), 'L.') GROUP BY referer_domain`,
  },
  {
    name: 'endsWith, case-insensitive',
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.refererDomain'], [f('LinksAdvancedAnalytics.refererDomain', 'endsWith', ['.COM'])]),
    sql: () => `SELECT referer_domain AS "LinksAdvancedAnalytics.refererDomain", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views WHERE endsWith(upper(referer_domain), '.COM') GROUP BY referer_domain`,
  },
  {
    name: 'notEndsWith, several values: none of them',
    query: by(['PodcastEvents.count'], ['PodcastEvents.parsedUa'], [f('PodcastEvents.parsedUa', 'notEndsWith', ['BOT', 's'])]),
    sql: () => `SELECT parsed_ua AS "PodcastEvents.parsedUa", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events
      WHERE NOT endsWith(upper(parsed_ua), 'BOT') AND NOT endsWith(upper(parsed_ua), 'S') GROUP BY parsed_ua`,
  },
  {
    name: 'contains is case-insensitive beyond ASCII: SÃO finds São Paulo',
    query: by(['Downloads.count'], ['Downloads.city'], [f('Downloads.city', 'contains', ['SÃO'])]),
    sql: () => `SELECT city AS "Downloads.city", count() AS "Downloads.count"
      FROM analytics.downloads WHERE positionCaseInsensitiveUTF8(city, 'SÃO') > 0 GROUP BY city`,
    cube033Bug:
      "Cube's ClickHouse dialect renders contains as lower(col) LIKE CONCAT('%', lower(?), '%'); ClickHouse's lower() " +
      "folds ASCII only, so 'SÃO' becomes 'sÃo' and never matches 'são paulo' (Cube documents contains as a " +
      'case-insensitive ILIKE; ClickHouse ILIKE does match). The service answers no row.',
  },
];

// ---------------------------------------------------------------------------
// Numbers: gt, gte, lt, lte, equals; set / notSet on NULLs
// ---------------------------------------------------------------------------
const NUMBER_CASES: Case[] = [
  {
    name: 'gt on ChannelRanks.rank',
    query: by(['ChannelRanks.count'], ['ChannelRanks.platform'], [f('ChannelRanks.rank', 'gt', ['90'])]),
    sql: () => `SELECT platform AS "ChannelRanks.platform", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks WHERE rank > 90 GROUP BY platform`,
  },
  {
    name: 'gte on ChannelRanks.rank',
    query: by(['ChannelRanks.count'], ['ChannelRanks.platform'], [f('ChannelRanks.rank', 'gte', ['50'])]),
    sql: () => `SELECT platform AS "ChannelRanks.platform", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks WHERE rank >= 50 GROUP BY platform`,
  },
  {
    name: 'lt on ChannelRanks.rank, with a ratio measure',
    query: by(['ChannelRanks.count', 'ChannelRanks.avgRank'], ['ChannelRanks.platform'], [f('ChannelRanks.rank', 'lt', ['3'])]),
    sql: () => `SELECT platform AS "ChannelRanks.platform", count() AS "ChannelRanks.count", sum(rank) / count() AS "ChannelRanks.avgRank"
      FROM analytics.channel_ranks WHERE rank < 3 GROUP BY platform`,
  },
  {
    name: 'lte on ChannelRanks.rank',
    query: by(['ChannelRanks.count'], ['ChannelRanks.platform', 'ChannelRanks.countryCode'], [f('ChannelRanks.rank', 'lte', ['10'])]),
    sql: () => `SELECT platform AS "ChannelRanks.platform", country_code AS "ChannelRanks.countryCode", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks WHERE rank <= 10 GROUP BY platform, country_code`,
  },
  {
    name: 'equals on a number, several values',
    query: by(['ChannelRanks.count'], ['ChannelRanks.platform'], [f('ChannelRanks.rank', 'equals', ['1', '100'])]),
    sql: () => `SELECT platform AS "ChannelRanks.platform", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks WHERE rank = 1 OR rank = 100 GROUP BY platform`,
  },
  {
    name: 'gt on WebEvents.se_value (NULL values drop out)',
    query: by(['WebEvents.count', 'WebEvents.se_value_sum'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'gt', ['100'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count", sum(se_value) AS "WebEvents.se_value_sum"
      FROM analytics.web_events WHERE se_value > 100 GROUP BY se_category`,
  },
  {
    name: 'gte on WebEvents.se_value',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'gte', ['49'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE se_value >= 49 GROUP BY se_category`,
  },
  {
    name: 'lt on WebEvents.se_value',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'lt', ['30'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE se_value < 30 GROUP BY se_category`,
  },
  {
    name: 'lte on WebEvents.se_value with a decimal value',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'lte', ['23.95'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE se_value <= 23.95 GROUP BY se_category`,
  },
  {
    name: 'notEquals on a nullable number keeps the NULL rows',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'notEquals', ['6'])]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE ifNull(se_value != 6, true) GROUP BY se_category`,
  },
  {
    name: 'set on a nullable number',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'set')]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE isNotNull(se_value) GROUP BY se_category`,
  },
  {
    name: 'notSet on a nullable number (page views have no se_value)',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.se_value', 'notSet')]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE isNull(se_value) GROUP BY se_category`,
  },
  {
    name: 'set on a nullable string (latitude)',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.latitude', 'set')]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE isNotNull(latitude) GROUP BY se_category`,
  },
  {
    name: 'notSet on a nullable string (latitude)',
    query: by(['WebEvents.count'], ['WebEvents.se_category'], [f('WebEvents.latitude', 'notSet')]),
    sql: () => `SELECT se_category AS "WebEvents.se_category", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE isNull(latitude) GROUP BY se_category`,
  },
];

// ---------------------------------------------------------------------------
// Booleans
// ---------------------------------------------------------------------------
const BOOLEAN_CASES: Case[] = [
  {
    name: "boolean dimension equals ['true']",
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.utmSource'], [f('LinksAdvancedAnalytics.isUniqueLinkView', 'equals', ['true'])]),
    sql: () => `SELECT utm_source AS "LinksAdvancedAnalytics.utmSource", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views WHERE is_unique GROUP BY utm_source`,
  },
  {
    name: "boolean dimension equals ['false']",
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.utmSource'], [f('LinksAdvancedAnalytics.isUniqueLinkView', 'equals', ['false'])]),
    sql: () => `SELECT utm_source AS "LinksAdvancedAnalytics.utmSource", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views WHERE NOT is_unique GROUP BY utm_source`,
  },
  {
    name: "string dimension over a Bool column (PodcastEvents.ipBlacklisted) equals ['true']",
    query: by(['PodcastEvents.count'], ['PodcastEvents.country'], [f('PodcastEvents.ipBlacklisted', 'equals', ['true'])]),
    sql: () => `SELECT country AS "PodcastEvents.country", count() AS "PodcastEvents.count"
      FROM analytics.podcast_events WHERE ip_blacklisted GROUP BY country`,
  },
];

// ---------------------------------------------------------------------------
// Dates: inDateRange, notInDateRange, onTheDate, beforeDate, beforeOrOnDate, afterDate, afterOrOnDate
// ---------------------------------------------------------------------------
const downloadsByCountry =
  (filters: (c: Ctx) => Filter[], extra: Query = {}) =>
  (c: Ctx) => ({
    measures: ['Downloads.count'],
    dimensions: ['Downloads.country'],
    filters: filters(c),
    ...extra,
  });
const downloadsWhere = (where: (c: Ctx) => string) => (c: Ctx) => `
  SELECT country AS "Downloads.country", count() AS "Downloads.count" FROM analytics.downloads WHERE ${where(c)} GROUP BY country`;
const utc = (localTimestamp: string) => `toDateTime('${localTimestamp.replace('T', ' ').replace(/\.\d+$/, '')}', 'UTC')`;

const DATE_CASES: Case[] = [
  {
    name: 'inDateRange, two dates: both whole days included',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'inDateRange', [c.d10, c.d3])]),
    sql: downloadsWhere((c) => `toDate(ts) BETWEEN '${c.d10}' AND '${c.d3}'`),
  },
  {
    name: 'inDateRange, two local timestamps',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'inDateRange', [`${c.d10}T06:30:00.000`, `${c.d3}T18:15:30.000`])]),
    sql: downloadsWhere((c) => `ts BETWEEN ${utc(`${c.d10}T06:30:00`)} AND ${utc(`${c.d3}T18:15:30`)}`),
  },
  {
    name: 'inDateRange in the query timezone (America/New_York)',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'inDateRange', [c.d10, c.d10])], { timezone: 'America/New_York' }),
    sql: downloadsWhere((c) => `toDate(ts, 'America/New_York') = '${c.d10}'`),
  },
  {
    name: 'notInDateRange',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'notInDateRange', [c.d10, c.d3])]),
    sql: downloadsWhere((c) => `NOT (toDate(ts) BETWEEN '${c.d10}' AND '${c.d3}')`),
  },
  {
    name: 'beforeDate, a date: strictly before that day',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'beforeDate', [c.d10])]),
    sql: downloadsWhere((c) => `toDate(ts) < '${c.d10}'`),
  },
  {
    name: 'beforeDate, a timestamp',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'beforeDate', [`${c.d10}T12:00:00.000`])]),
    sql: downloadsWhere((c) => `ts < ${utc(`${c.d10}T12:00:00`)}`),
  },
  {
    name: 'beforeOrOnDate, a timestamp',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'beforeOrOnDate', [`${c.d10}T12:00:00.000`])]),
    sql: downloadsWhere((c) => `ts <= ${utc(`${c.d10}T12:00:00`)}`),
  },
  {
    name: 'afterDate, a timestamp',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'afterDate', [`${c.d3}T12:00:00.000`])]),
    sql: downloadsWhere((c) => `ts > ${utc(`${c.d3}T12:00:00`)}`),
  },
  {
    name: 'afterOrOnDate, a date: from the start of that day',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'afterOrOnDate', [c.d3])]),
    sql: downloadsWhere((c) => `toDate(ts) >= '${c.d3}'`),
  },
  {
    name: 'afterOrOnDate, a timestamp',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'afterOrOnDate', [`${c.d3}T12:00:00.000`])]),
    sql: downloadsWhere((c) => `ts >= ${utc(`${c.d3}T12:00:00`)}`),
  },
  {
    name: 'onTheDate with the day as both values',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'onTheDate', [c.d10, c.d10])]),
    sql: downloadsWhere((c) => `toDate(ts) = '${c.d10}'`),
  },
  {
    name: 'beforeOrOnDate, a date: up to the end of that day',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'beforeOrOnDate', [c.d10])]),
    sql: downloadsWhere((c) => `toDate(ts) <= '${c.d10}'`),
    cube033Bug:
      "Cube 0.33 pads a date-only value to the START of the day for every single-value date operator, so beforeOrOnDate 'D' " +
      "becomes ts <= 'DT00:00:00.000' and drops day D (upstream cube-js/cube#9661).",
  },
  {
    name: 'afterDate, a date: from the day after',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'afterDate', [c.d3])]),
    sql: downloadsWhere((c) => `toDate(ts) > '${c.d3}'`),
    cube033Bug:
      "afterDate 'D' becomes ts > 'DT00:00:00.000', so day D itself is included (the complement of the beforeOrOnDate bug: " +
      'the value is read as the instant midnight, not as a date).',
  },
  {
    name: 'onTheDate, one date: that day only',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'onTheDate', [c.d10])]),
    sql: downloadsWhere((c) => `toDate(ts) = '${c.d10}'`),
    cube033Bug:
      'onTheDate reads values[0] as the start and values[1] as the end; with one value the end is formatToDate(undefined) = ' +
      'the end of TODAY, so the filter returns everything from that date until now.',
  },
  {
    name: 'inDateRange, one date: that day only (as Cube documents)',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'inDateRange', [c.d10])]),
    sql: downloadsWhere((c) => `toDate(ts) = '${c.d10}'`),
    cube033Bug:
      'Cube documents "If only one date specified the filter would be set exactly to this date", but 0.33 ranges from that ' +
      'date to the end of today (upstream cube-js/cube#3111).',
  },
  {
    name: 'inDateRange on a DateTime64(3) member keeps the milliseconds of its bounds',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      filters: [f('WebEvents.trackTs', 'inDateRange', [c.eventSecond, c.eventTs])],
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts BETWEEN toDateTime64('${c.eventSecond.replace('T', ' ')}', 3, 'UTC') AND toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC')
      GROUP BY app_id`,
    cube033Bug:
      'The ClickHouse dialect casts bounds with parseDateTimeBestEffort(), which returns a DateTime (seconds): the end bound ' +
      "'…:SS.mmm' becomes '…:SS', and an event at …:SS.mmm (> …:SS.000) falls outside its own range (upstream cube-js/cube#2536).",
  },
  {
    name: 'timeDimensions dateRange on a DateTime64(3) member keeps the milliseconds of its bounds',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      timeDimensions: [{ dimension: 'WebEvents.trackTs', dateRange: [c.eventSecond, c.eventTs] }],
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts BETWEEN toDateTime64('${c.eventSecond.replace('T', ' ')}', 3, 'UTC') AND toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC')
      GROUP BY app_id`,
    cube033Bug: 'Same cast as the inDateRange filter: parseDateTimeBestEffort() drops the milliseconds of the dateRange bounds.',
  },
  {
    name: 'gt on a time member, a local time of the query timezone (America/New_York)',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'gt', [`${c.d10}T10:00:00`])], { timezone: 'America/New_York' }),
    sql: downloadsWhere((c) => `ts > toDateTime('${c.d10} 10:00:00', 'America/New_York')`),
    cube033Bug: 'Value operators on a time member handed the value to ClickHouse as written, which read it in UTC whatever the query timezone.',
  },
  {
    name: 'lte on a time member, a date: up to its first instant in the query timezone',
    query: downloadsByCountry((c) => [f('Downloads.ts', 'lte', [c.d10])], { timezone: 'America/New_York' }),
    sql: downloadsWhere((c) => `ts <= toDateTime('${c.d10} 00:00:00', 'America/New_York')`),
    cube033Bug: 'The date was read as midnight UTC.',
  },
  {
    name: 'gte and lt on a time member, local times with milliseconds, in UTC',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      filters: [f('WebEvents.trackTs', 'gte', [c.eventTs]), f('WebEvents.trackTs', 'lt', [`${c.d3}T00:00:00.000`])],
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts >= toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC') AND track_ts < toDateTime64('${c.d3} 00:00:00', 3, 'UTC')
      GROUP BY app_id`,
  },
  {
    name: 'equals on a time member, an instant with milliseconds as New York writes it',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      filters: [f('WebEvents.trackTs', 'equals', [c.eventTsNewYork])],
      timezone: 'America/New_York',
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts = toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC') GROUP BY app_id`,
    cube033Bug: 'The New York time was compared as a UTC time, five hours off: no row.',
  },
  {
    name: 'in on a time member, in a half-hour zone (Asia/Kolkata)',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      filters: [f('WebEvents.trackTs', 'in', [c.eventTsKolkata, `${c.d3}T05:30:00`])],
      timezone: 'Asia/Kolkata',
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts IN (toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC'), toDateTime64('${c.d3} 05:30:00', 3, 'Asia/Kolkata'))
      GROUP BY app_id`,
    cube033Bug: 'Both values were read in UTC.',
  },
  {
    name: 'notIn on a time member leaves out exactly those instants of the query timezone',
    query: (c) => ({
      measures: ['WebEvents.count'],
      dimensions: ['WebEvents.appId'],
      filters: [f('WebEvents.trackTs', 'notIn', [c.eventTsKolkata, c.d10])],
      timezone: 'Asia/Kolkata',
    }),
    sql: (c) => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count" FROM analytics.web_events
      WHERE track_ts NOT IN (toDateTime64('${c.eventTs.replace('T', ' ')}', 3, 'UTC'), toDateTime64('${c.d10} 00:00:00', 3, 'Asia/Kolkata'))
      GROUP BY app_id`,
    cube033Bug: 'Read in UTC, the values matched no event, so the event was kept.',
  },
];

// ---------------------------------------------------------------------------
// Logical or / and, nested two levels
// ---------------------------------------------------------------------------
const LOGICAL_CASES: Case[] = [
  {
    name: 'or of a filter and an and-group (with a `dimension` key inside)',
    query: by(
      ['Downloads.count'],
      ['Downloads.country'],
      [
        {
          or: [
            f('Downloads.country', 'equals', ['Germany']),
            { and: [{ dimension: 'Downloads.city', operator: 'startsWith', values: ['new'] }, f('Downloads.parsed_ua', 'notEquals', ['Spotify'])] },
          ],
        },
      ],
    ),
    sql: () => `SELECT country AS "Downloads.country", count() AS "Downloads.count" FROM analytics.downloads
      WHERE country = 'Germany' OR (positionCaseInsensitive(city, 'new') = 1 AND parsed_ua != 'Spotify') GROUP BY country`,
  },
  {
    name: 'and of two or-groups, next to a plain filter',
    query: by(
      ['ChannelRanks.count'],
      ['ChannelRanks.platform', 'ChannelRanks.category'],
      [
        {
          and: [
            { or: [f('ChannelRanks.platform', 'equals', ['spotify']), f('ChannelRanks.rank', 'lte', ['3'])] },
            { or: [f('ChannelRanks.category', 'equals', ['Comedy']), f('ChannelRanks.countryCode', 'in', ['us', 'gb'])] },
          ],
        },
        f('ChannelRanks.rank', 'gt', ['1']),
      ],
    ),
    sql: () => `SELECT platform AS "ChannelRanks.platform", category AS "ChannelRanks.category", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks
      WHERE (platform = 'spotify' OR rank <= 3) AND (category = 'Comedy' OR country_code IN ('us', 'gb')) AND rank > 1
      GROUP BY platform, category`,
  },
];

// ---------------------------------------------------------------------------
// Filters on measures (HAVING) and measureFilter
// ---------------------------------------------------------------------------
const MEASURE_CASES: Case[] = [
  {
    name: 'gt on a measure is a HAVING',
    query: by(['WebEvents.count'], ['WebEvents.appId'], [f('WebEvents.count', 'gt', ['20'])]),
    sql: () => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count"
      FROM analytics.web_events GROUP BY app_id HAVING count() > 20`,
  },
  {
    name: 'and-group of measure filters (gte, lte)',
    query: by(['WebEvents.count'], ['WebEvents.appId'], [{ and: [f('WebEvents.count', 'gte', ['10']), f('WebEvents.count', 'lte', ['25'])] }]),
    sql: () => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count"
      FROM analytics.web_events GROUP BY app_id HAVING count() >= 10 AND count() <= 25`,
  },
  {
    name: 'or-group of measure filters (lt, gt) with a dimension filter: WHERE then HAVING',
    query: by(
      ['WebEvents.count'],
      ['WebEvents.appId'],
      [{ or: [f('WebEvents.count', 'lt', ['5']), f('WebEvents.count', 'gt', ['40'])] }, f('WebEvents.se_category', 'equals', [''])],
    ),
    sql: () => `SELECT app_id AS "WebEvents.appId", count() AS "WebEvents.count"
      FROM analytics.web_events WHERE se_category = '' GROUP BY app_id HAVING count() < 5 OR count() > 40`,
  },
  {
    name: 'filter on a measure that is not selected',
    query: by(['ChannelRanks.count'], ['ChannelRanks.category'], [f('ChannelRanks.avgRank', 'lt', ['45'])]),
    sql: () => `SELECT category AS "ChannelRanks.category", count() AS "ChannelRanks.count"
      FROM analytics.channel_ranks GROUP BY category HAVING sum(rank) / count() < 45`,
  },
  {
    name: "measureFilter applies the measure's own filters to the rows",
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.utmSource'], [f('LinksAdvancedAnalytics.uniqueLinkViewCount', 'measureFilter')]),
    sql: () => `SELECT utm_source AS "LinksAdvancedAnalytics.utmSource", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views WHERE is_unique GROUP BY utm_source`,
  },
  {
    name: 'measureFilter on a measure without filters changes nothing',
    query: by(['LinksAdvancedAnalytics.count'], ['LinksAdvancedAnalytics.utmSource'], [f('LinksAdvancedAnalytics.linkViewCount', 'measureFilter')]),
    sql: () => `SELECT utm_source AS "LinksAdvancedAnalytics.utmSource", count() AS "LinksAdvancedAnalytics.count"
      FROM analytics.link_views GROUP BY utm_source`,
  },
];

const GROUPS: Record<string, Case[]> = {
  strings: STRING_CASES,
  numbers: NUMBER_CASES,
  booleans: BOOLEAN_CASES,
  dates: DATE_CASES,
  'logical or / and': LOGICAL_CASES,
  'filters on measures': MEASURE_CASES,
};

for (const [group, cases] of Object.entries(GROUPS)) {
  describe(`filters: ${group}`, () => {
    for (const c of cases) {
      it(c.cube033Bug ? `${c.name} (corrects Cube 0.33)` : c.name, () => runCase(c));
    }
  });
}

/**
 * set / notSet on every text member of every table-backed cube, against SQL:
 * the warehouse stores a missing text as '' (most text columns are not
 * Nullable), so on a text member "not set" is NULL or ''. The members include
 * text written over other column types (`toString(ip4)`, booleans as text).
 */
describe('filters: set and notSet on every text member', () => {
  const members = CUBES.filter((spec): spec is CubeSpec & { table: string } => spec.table !== undefined).flatMap((spec) =>
    spec.dims.filter((dim) => dim.type === 'string').map((dim) => ({ spec, dim, label: `${spec.cube}.${dim.name}` })),
  );
  it.each(members)('$label', async ({ spec, dim }) => {
    const measure = `${spec.cube}.${spec.counts[0]}`;
    const count = async (operator: string) => {
      const res = await load(suite.service, { measures: [measure], filters: [{ member: `${spec.cube}.${dim.name}`, operator }] });
      expect(res.status).toBe(200);
      return Number(res.body.data[0][measure]);
    };
    const unset = `isNull(${dim.sql}) OR ${dim.sql} = ''`;
    const [expected] = await suite.oracle.rows<{ notSet: string; set: string }>(`
      SELECT toString(countIf(${unset})) AS notSet, toString(countIf(NOT (${unset}))) AS set FROM analytics.${spec.table}`);
    expect({ notSet: await count('notSet'), set: await count('set') }).toEqual({ notSet: Number(expected.notSet), set: Number(expected.set) });
  });

  it('includes the members whose missing values are empty texts', () => {
    expect(members.map((m) => m.label)).toEqual(
      expect.arrayContaining(['PodcastEvents.referer', 'Downloads.referer', 'WebEvents.se_category', 'LinksDashboard.openParam']),
    );
  });
});

/** The operators Cube 0.33's API gateway accepts, read from its own validation code. */
function operatorsOfCube033(): string[] {
  const source = readFileSync(require.resolve('@cubejs-backend/api-gateway/dist/src/query.js'), 'utf8');
  const list = /const operators = \[([\s\S]*?)\];/.exec(source);
  if (!list) throw new Error('operator list not found in @cubejs-backend/api-gateway');
  return [...list[1].matchAll(/'(\w+)'/g)].map((m) => m[1]);
}

function operatorsIn(filters: Filter[]): string[] {
  return filters.flatMap((fl) => (fl.or ? operatorsIn(fl.or) : fl.and ? operatorsIn(fl.and) : [fl.operator]));
}

describe('operator coverage and rejected filters', () => {
  it('covers every operator Cube 0.33 accepts, with at least one case each', () => {
    const accepted = operatorsOfCube033();
    expect(accepted).toHaveLength(24);
    const covered = new Set(
      Object.values(GROUPS)
        .flat()
        .flatMap((c) => operatorsIn((c.query(ctx).filters as Filter[] | undefined) ?? [])),
    );
    expect([...covered].sort()).toEqual([...accepted].sort());
  });

  it.each(['between', 'like', 'isNull', 'equal', 'notOnTheDate', 'startswith'])('operator %s, unknown to Cube 0.33, is a 400', async (operator) => {
    const res = await load(suite.service, { measures: ['Downloads.count'], filters: [f('Downloads.country', operator, ['x'])] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
  });

  it.each([
    ['equals without values', [f('Downloads.country', 'equals')]],
    ['equals with empty values', [f('Downloads.country', 'equals', [])]],
    ['both member and dimension', [{ member: 'Downloads.country', dimension: 'Downloads.country', operator: 'equals', values: ['Germany'] }]],
    ['a dimension and a measure in one logical group', [{ or: [f('Downloads.country', 'equals', ['Germany']), f('Downloads.count', 'gt', ['1'])] }]],
    ['an unknown member', [f('Downloads.nope', 'equals', ['x'])]],
    ['gt with two values (Cube 0.33 compared with the first alone)', [f('Downloads.count', 'gt', ['1', '100000000'])]],
    ['equals on a time member with a value that is not a time', [f('Downloads.ts', 'equals', ['yesterday'])]],
    ['an empty or (Cube 0.33 answered every row)', [{ or: [] }]],
  ])('%s is a 400', async (_name, filters) => {
    const res = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['Downloads.country'], filters });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_query');
    expect(typeof res.body.error).toBe('string');
  });
});

/**
 * A load that differs from an earlier one only in its filters' values reuses
 * the SQL Cube compiled for the earlier one with the values bound anew
 * (src/cube/engine/sql-plans.ts): each of these shapes is asked again and
 * again with other values, and each answer must be that value's, as the SQL
 * written by hand has it.
 */
describe('filters: the same query with other values', () => {
  const SHAPES: {
    name: string;
    /** The values to ask with, in turn; a function of the dataset's dates where they must fall in it. */
    values: string[][] | ((c: Ctx) => string[][]);
    query: (values: string[]) => Query;
    sql: (values: string[]) => string;
  }[] = [
    {
      name: 'equals, one value',
      values: [['Germany'], ['Spain'], ["Côte d'Ivoire"], [''], ['Japan'], ['a\\b']],
      query: ([v]) => by(['Downloads.count'], ['Downloads.parsed_ua'], [f('Downloads.country', 'equals', [v])])(),
      sql: ([v]) => `SELECT parsed_ua AS "Downloads.parsed_ua", count() AS "Downloads.count"
        FROM analytics.downloads WHERE country = ${sqlText(v)} GROUP BY parsed_ua`,
    },
    {
      name: 'equals, two values',
      values: [
        ['Germany', 'Spain'],
        ['Japan', 'France'],
        ['Spain', 'Spain'],
      ],
      query: (vs) => by(['Downloads.count'], ['Downloads.country'], [f('Downloads.country', 'equals', vs)])(),
      sql: (vs) => `SELECT country AS "Downloads.country", count() AS "Downloads.count"
        FROM analytics.downloads WHERE country IN (${vs.map(sqlText).join(', ')}) GROUP BY country`,
    },
    {
      name: 'notEquals, with a date range',
      values: [['Germany'], ['Spain'], ['']],
      query: ([v]) => ({
        measures: ['Downloads.count'],
        dimensions: ['Downloads.continent'],
        timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [ctx.d10, ctx.d3] }],
        filters: [f('Downloads.country', 'notEquals', [v])],
      }),
      sql: ([v]) => `SELECT continent AS "Downloads.continent", count() AS "Downloads.count"
        FROM analytics.downloads WHERE (country != ${sqlText(v)} OR country IS NULL) AND toDate(ts) BETWEEN '${ctx.d10}' AND '${ctx.d3}'
        GROUP BY continent`,
    },
    {
      name: 'gt and lte on a number, numbers sent as numbers and as strings',
      values: [
        ['10', '60'],
        ['50', '95'],
        ['0', '100'],
      ],
      query: ([low, high]) =>
        by(['ChannelRanks.count'], ['ChannelRanks.platform'], [f('ChannelRanks.rank', 'gt', [Number(low)]), f('ChannelRanks.rank', 'lte', [high])])(),
      sql: ([low, high]) => `SELECT platform AS "ChannelRanks.platform", count() AS "ChannelRanks.count"
        FROM analytics.channel_ranks WHERE rank > ${low} AND rank <= ${high} GROUP BY platform`,
    },
    {
      name: 'lt on a measure (HAVING) beside equals on a dimension',
      values: [
        ['30', 'apple'],
        ['45', 'spotify'],
        ['60', 'apple'],
      ],
      query: ([rank, platform]) =>
        by(['ChannelRanks.count'], ['ChannelRanks.category'], [f('ChannelRanks.avgRank', 'lt', [rank]), f('ChannelRanks.platform', 'equals', [platform])])(),
      sql: ([rank, platform]) => `SELECT category AS "ChannelRanks.category", count() AS "ChannelRanks.count"
        FROM analytics.channel_ranks WHERE platform = ${sqlText(platform)} GROUP BY category HAVING sum(rank) / count() < ${rank}`,
    },
    {
      name: 'gt on a time member in the query timezone',
      values: (c) => [[`${c.d10}T10:00:00`], [c.d3], [`${c.d3}T23:30:00`]],
      query: ([v]) => by(['Downloads.count'], ['Downloads.continent'], [f('Downloads.ts', 'gt', [v])], { timezone: 'America/New_York' })(),
      sql: ([v]) => `SELECT continent AS "Downloads.continent", count() AS "Downloads.count"
        FROM analytics.downloads WHERE ts > parseDateTimeBestEffort(${sqlText(v)}, 'America/New_York')
        GROUP BY continent`,
    },
  ];

  for (const shape of SHAPES) {
    it(shape.name, async () => {
      const answers: string[][] = [];
      for (const values of typeof shape.values === 'function' ? shape.values(ctx) : shape.values) {
        const [res, expected] = await Promise.all([load(suite.service, shape.query(values)), suite.oracle.rows<Row>(shape.sql(values))]);
        expect(res.status).toBe(200);
        expect(canonical(res.body.data)).toEqual(canonical(expected));
        answers.push(canonical(expected));
      }
      // Answers that do not depend on the value would prove nothing about binding it.
      expect(answers.some((rows) => rows.length > 0)).toBe(true);
      expect(new Set(answers.map((rows) => JSON.stringify(rows))).size).toBeGreaterThan(1);
    });
  }
});
