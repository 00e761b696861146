/** channel_ranks and episode_ranks: daily chart snapshots. */
import { CATEGORIES, SLUG_ADJECTIVES, SLUG_PATTERNS } from '../reference-data';
import { CHART_POOL, DAY, EPISODE_CHART_DEPTH, MAX_TRACKED_PER_CATEGORY, type Plan, SNAPSHOT_HOUR_UTC, TRACKED_SHOW_KEY } from './plan';
import { calendarSql, chartConstants, episodeTitleSql, latestEpisodeSql, podcastConstants, releaseSql, titleConstants } from './sql';
import { withClause } from '../sql';

// Charts.

/**
 * Columns of one chart candidate, given `day` (0-based in the window), `chart`
 * (1-based) and `slot` (0..CHART_POOL-1): the first slots of a category hold
 * its tracked shows, the rest are made-up shows with unique ids and slugs.
 */
export function chartShowColumns(plan: Plan): string {
  const r = plan.random;
  const nouns = CATEGORIES[0].slugNouns.length;
  const adjectives = SLUG_ADJECTIVES.length;
  const combos = adjectives * nouns * SLUG_PATTERNS.length;
  // A step coprime with the number of combinations walks distinct combinations, so slugs never repeat.
  const combo = `(${r.hash('slug-offset', 'cat')} % ${combos} + slot * 1009) % ${combos}`;
  const generatedSlug =
    `replaceOne(replaceOne(slug_patterns[1 + intDiv(${combo}, ${adjectives * nouns})], ` +
    `'{a}', slug_adjectives[1 + ${combo} % ${adjectives}]), ` +
    `'{n}', slug_nouns[(cat - 1) * ${nouns} + 1 + intDiv(${combo}, ${adjectives}) % ${nouns}])`;
  return `
      chart_cat[chart] AS cat,
      if(slot < ${MAX_TRACKED_PER_CATEGORY}, tracked_in_slot[(cat - 1) * ${MAX_TRACKED_PER_CATEGORY} + slot + 1], 0) AS tp,
      tp > 0 AS is_tracked,
      if(is_tracked, ${TRACKED_SHOW_KEY} + tp, (cat - 1) * ${CHART_POOL} + slot) AS show_key,
      if(is_tracked, pod_id[tp], toString(1000000000 + show_key * 300000 + ${r.hash('podcast-id', 'show_key')} % 300000)) AS podcast_id,
      if(is_tracked, pod_slug[tp], ${generatedSlug}) AS podcast_slug,
      -- 37 is coprime with the pool size: generated shows get distinct base ranks
      if(is_tracked, pod_chart_rank[tp], 1 + (slot * 37 + ${r.hash('rank-offset', 'cat')}) % ${CHART_POOL}) AS base_rank,
      intDiv(${calendarSql(plan, String(plan.windowStart))}, ${DAY}) + day AS abs_day,
      if(chart_country_code[chart] = 'us', 0, 0.35 * ${r.normal('country-taste', 'show_key', 'chart_country_code[chart]')})
        + if(chart_platform[chart] = 'spotify', 0.4 * ${r.normal('platform-taste', 'show_key')}, 0) AS taste`;
}

/**
 * Score = log of the base rank (Zipf: the top is stable, the tail churns)
 * + country/platform taste + a slow wave + small daily noise; ranks come from
 * row_number over (score, podcast_id), a total order.
 */
export function channelRanksSql(plan: Plan): string {
  const r = plan.random;
  const pool = plan.charts.length * CHART_POOL;
  return `
INSERT INTO ${plan.table('channel_ranks')}
  (snapshot_ts, platform, country_code, country_name, category, rank, podcast_id, podcast_slug)
${withClause({ ...podcastConstants(plan), ...chartConstants(plan) })}
SELECT snapshot_ts, platform, country_code, country_name, category, rank, podcast_id, podcast_slug
FROM (
  SELECT
    toDateTime(${plan.windowStart} + day * ${DAY} + ${SNAPSHOT_HOUR_UTC * 3600}, 'UTC') AS snapshot_ts,
    chart_platform[chart] AS platform,
    chart_country_code[chart] AS country_code,
    chart_country_name[chart] AS country_name,
    chart_category[chart] AS category,
    chart_depth[chart] AS depth,
    podcast_id,
    podcast_slug,
    row_number() OVER (PARTITION BY day, chart ORDER BY score DESC, podcast_id) AS rank
  FROM (
    SELECT
      intDiv(number, ${pool}) AS day,
      1 + intDiv(number, ${CHART_POOL}) % ${plan.charts.length} AS chart,
      number % ${CHART_POOL} AS slot,
      ${chartShowColumns(plan)},
      -ln(base_rank) + taste
        + 0.12 * sin(2 * pi() * (abs_day / (15 + ${r.hash('wave-period', 'show_key')} % 45) + ${r.unit('wave-phase', 'show_key')}))
        + 0.05 * ${r.normal('daily-noise', 'show_key', 'chart_platform[chart]', 'chart_country_code[chart]', 'abs_day')} AS score
    FROM numbers(${plan.days * pool})
  )
)
WHERE rank <= depth`;
}

/**
 * Candidates are each show's newest and previous episode as of the snapshot;
 * freshness decays the score by day, so new episodes jump in and fade out.
 * Generated shows publish every 1–14 days since a launch 200–2700 days ago.
 */
export function episodeRanksSql(plan: Plan): string {
  const r = plan.random;
  const pool = plan.charts.length * CHART_POOL * 2;
  const snapshot = `toInt64(${plan.windowStart} + day * ${DAY} + ${SNAPSHOT_HOUR_UTC * 3600})`;
  const cadence = `[1, 2, 3, 7, 7, 7, 7, 14][1 + ${r.hash('cadence', 'show_key')} % 8]`;
  const launch = `(intDiv(${calendarSql(plan, String(plan.windowStart))}, ${DAY}) - 200 - toInt64(${r.hash('launch', 'show_key')} % 2500))`;
  return `
INSERT INTO ${plan.table('episode_ranks')}
  (snapshot_ts, platform, country_code, category, rank, episode_id, episode_title, podcast_slug)
${withClause({ ...podcastConstants(plan), ...chartConstants(plan), ...titleConstants() })}
SELECT snapshot_ts, platform, country_code, category, rank, episode_id, episode_title, podcast_slug
FROM (
  SELECT
    toDateTime(snapshot, 'UTC') AS snapshot_ts,
    chart_platform[chart] AS platform,
    chart_country_code[chart] AS country_code,
    chart_category[chart] AS category,
    episode_id,
    ${episodeTitleSql(r, 'cat', 'show_key', 'k', 'episode_number')} AS episode_title,
    podcast_slug,
    row_number() OVER (PARTITION BY day, chart ORDER BY score DESC, episode_id) AS rank
  FROM (
    SELECT
      intDiv(number, ${pool}) AS day,
      1 + intDiv(number, ${CHART_POOL * 2}) % ${plan.charts.length} AS chart,
      intDiv(number, 2) % ${CHART_POOL} AS slot,
      number % 2 AS older,
      ${chartShowColumns(plan)},
      ${snapshot} AS snapshot,
      ${cadence} AS cadence_days,
      if(is_tracked, ${latestEpisodeSql('tp', 'snapshot')}, 1 + intDiv(abs_day - ${launch}, cadence_days)) - older AS k,
      if(is_tracked, (snapshot - ${releaseSql('tp', 'k')}) / ${DAY}, abs_day - (${launch} + (k - 1) * cadence_days)) AS age_days,
      if(is_tracked, pod_first_number[tp] + k - 1, k) AS episode_number,
      toString(1000000000000 + (show_key * 8192 + k) * 4099 + ${r.hash('episode-id', 'show_key', 'k')} % 4099) AS episode_id,
      -ln(base_rank) - 0.25 * age_days + taste
        + 0.08 * ${r.normal('episode-noise', 'show_key', 'k', 'chart_platform[chart]', 'chart_country_code[chart]', 'abs_day')} AS score
    FROM numbers(${plan.days * pool})
    -- shows far down the pool never reach an episode top 50; skipping them saves the sort
    WHERE base_rank <= 90 AND k >= 1
  )
)
WHERE rank <= ${EPISODE_CHART_DEPTH}`;
}
