/** link_views: visits to smart links. */
import { CITIES, COUNTRIES, LINK_BROWSERS, LINK_OPEN_APPS, LINK_OPEN_WEIGHTS, LINK_SOURCES } from '../reference-data';
import { DAY, type Plan } from './plan';
import { activityConstants, activitySql } from './sql';
import { groupedLookupTables, lookupTable } from './random';
import { sqlLiteral, withClause } from '../sql';

// link_views.

/**
 * Visits to smart links, each with 1–3 views by the same viewer. Show links
 * are visited all along; episode links mostly in the days after release.
 * Viewers are stable ids with a country, language and browser; the traffic
 * source can replace the browser family with an in-app browser.
 */
export function linkViewsSql(plan: Plan): string {
  const r = plan.random;
  const { linkVisits, linkViewers } = plan.sizes;
  const platforms = ['ios', 'android', 'desktop'] as const;
  const languages = COUNTRIES.flatMap((c) => c.languages.map(([name]) => ({ country: c.code, name })));
  const primaryCity = (code: string) => CITIES.find((c) => c.country === code && c.weight > 0) ?? CITIES[0];
  return `
INSERT INTO ${plan.table('link_views')}
  (account_id, ts, link, link_viewer, is_unique, utm_source, utm_medium, utm_campaign, ua_family, open_param, referer_domain,
   country_code, country_name, language_name)
${withClause({
  ...activityConstants(),
  link_url: sqlLiteral(plan.links.map((l) => l.url)),
  link_account: sqlLiteral(plan.links.map((l) => plan.podcasts[l.podcast - 1].account)),
  link_created: `CAST(${sqlLiteral(plan.links.map((l) => l.created))} AS Array(Int64))`,
  link_is_show: sqlLiteral(plan.links.map((l) => l.isShowLink)),
  link_lut: lookupTable(plan.links.map((l) => l.weight)),
  viewer_country_code: sqlLiteral(COUNTRIES.map((c) => c.code)),
  viewer_country_name: sqlLiteral(COUNTRIES.map((c) => c.name)),
  country_offset: sqlLiteral(COUNTRIES.map((c) => primaryCity(c.code).utcOffsetMinutes * 60)),
  country_lut: lookupTable(COUNTRIES.map((c) => c.listenerShare)),
  viewer_language: sqlLiteral(languages.map((l) => l.name)),
  language_lut: groupedLookupTables(
    COUNTRIES.map((c) => languages.map((l) => (l.country === c.code ? (c.languages.find(([name]) => name === l.name) as [string, number])[1] : 0))),
  ),
  browser_family: sqlLiteral(LINK_BROWSERS.map((b) => b.family)),
  browser_platform: sqlLiteral(LINK_BROWSERS.map((b) => platforms.indexOf(b.platform) + 1)),
  browser_lut: lookupTable(LINK_BROWSERS.map((b) => b.weight)),
  source_source: sqlLiteral(LINK_SOURCES.map((s) => s.source)),
  source_medium: sqlLiteral(LINK_SOURCES.map((s) => s.medium)),
  source_campaign: sqlLiteral(LINK_SOURCES.map((s) => s.campaign)),
  source_referer: sqlLiteral(LINK_SOURCES.map((s) => s.refererDomain)),
  source_in_app: sqlLiteral(LINK_SOURCES.map((s) => s.inAppFamily)),
  source_lut: lookupTable(LINK_SOURCES.map((s) => s.weight)),
  open_app: sqlLiteral(LINK_OPEN_APPS),
  open_lut: groupedLookupTables(platforms.map((p) => LINK_OPEN_WEIGHTS[p])),
})}
SELECT
  account_id, ts, link, link_viewer,
  row_number() OVER (PARTITION BY link, link_viewer ORDER BY ts, view) = 1,
  utm_source, utm_medium, utm_campaign, ua_family, open_param, referer_domain, country_code, country_name, language_name
FROM (
  SELECT
    toDateTime(visit_ts + if(r = 0, 0, toInt64(r * (300 - ln(${r.unit('revisit', 'visit', 'r')}) * 12 * 3600))), 'UTC') AS ts,
    visit * 4 + r AS view,
    link_url[l] AS link,
    link_account[l] AS account_id,
    leftPad(lower(hex(${r.hash('viewer-id', 'viewer')})), 16, '0') AS link_viewer,
    source_source[source] AS utm_source,
    source_medium[source] AS utm_medium,
    source_campaign[source] AS utm_campaign,
    if(source_in_app[source] != '' AND browser_platform[browser] != 3, source_in_app[source], browser_family[browser]) AS ua_family,
    -- most viewers look at the page and leave; the rest pick an app their platform offers
    if(${r.unit('opens', 'visit', 'r')} < 0.33, open_app[${r.pickIn('open_lut', 'browser_platform[browser]', 'open-app', 'visit', 'r')}], '') AS open_param,
    source_referer[source] AS referer_domain,
    viewer_country_code[country] AS country_code,
    viewer_country_name[country] AS country_name,
    viewer_language[${r.pickIn('language_lut', 'country', 'language', 'viewer')}] AS language_name
  FROM (
    SELECT
      number AS visit,
      ${r.pick('link_lut', 'link', 'visit')} AS l,
      toUInt32(floor(${linkViewers} * pow(${r.unit('viewer', 'visit')}, 1.3))) AS viewer,
      ${r.pick('country_lut', 'country', 'viewer')} AS country,
      ${r.pick('browser_lut', 'browser', 'viewer')} AS browser,
      ${r.pick('source_lut', 'source', 'visit')} AS source,
      if(link_is_show[l] OR ${r.unit('evergreen', 'visit')} < 0.15,
        ${plan.windowStart} + toInt64(floor(${r.unit('time', 'visit')} * ${plan.days * DAY})),
        link_created[l] + toInt64(-ln(${r.unit('age', 'visit')}) * 3 * ${DAY})) AS visit_ts,
      1 + (${r.unit('again', 'visit')} < 0.2) + (${r.unit('again-twice', 'visit')} < 0.05) AS views
    FROM numbers(${linkVisits})
    WHERE visit_ts BETWEEN greatest(${plan.windowStart}, link_created[l]) AND ${plan.windowEnd}
      AND ${r.unit('keep', 'visit')} < ${activitySql(plan, 'visit_ts', 'country_offset[country]')}
  )
  ARRAY JOIN range(toUInt32(views)) AS r
  WHERE ts <= ${plan.windowEnd}
)`;
}
