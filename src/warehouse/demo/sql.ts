/** SQL building blocks of the demo generator: literals, seeded randomness, lookup tables, and the named constants each statement inlines in its WITH clause. */
import {
  CATEGORIES,
  CITIES,
  COUNTRIES,
  type Country,
  EPISODE_TITLE_TEMPLATES,
  GUEST_FIRST_NAMES,
  GUEST_LAST_NAMES,
  HOURLY_ACTIVITY,
  LISTENER_AGENTS,
  SLUG_ADJECTIVES,
  SLUG_PATTERNS,
  WEEKDAY_ACTIVITY,
} from '../reference-data';
import { sqlLiteral } from '../sql';
import { DAY, FETCH_CODES, MAX_TRACKED_PER_CATEGORY, type Plan } from './plan';
import { lookupTable, type SqlRandom } from './random';

/** 32 hex digits from two hashes, shaped as a version-4 UUID string like trackers generate. */
export function uuidSql(high: string, low: string): string {
  const hex = `lower(concat(leftPad(hex(${high}), 16, '0'), leftPad(hex(${low}), 16, '0')))`;
  return (
    `concat(substring(${hex}, 1, 8), '-', substring(${hex}, 9, 4), '-4', substring(${hex}, 14, 3), '-', ` +
    `['8', '9', 'a', 'b'][1 + ${low} % 4], substring(${hex}, 18, 3), '-', substring(${hex}, 21, 12))`
  );
}

/**
 * byte_range_larger_one: false exactly for a probe whose Range ends at byte 0
 * or 1 ('bytes=0-1', 'bytes=0-0'); true for no Range header, open-ended ranges
 * and any range reaching past byte 1.
 */
export function largerThanOneByteSql(byteRange: string): string {
  return `NOT match(${byteRange}, '^bytes=0-[01]$')`;
}

/** A time of the window (epoch seconds) on the calendar the rows follow (Plan.calendarOffset). */
export function calendarSql(plan: Plan, ts: string): string {
  return `(${ts} + ${plan.calendarOffset})`;
}

/** Relative traffic level at a UTC time, for a place `offset` seconds from UTC: hour of day × weekday × growth. */
export function activitySql(plan: Plan, ts: string, offset: string): string {
  return (
    `(hour_activity[1 + intDiv((${ts} + ${offset}) % ${DAY}, 3600)]` +
    // 1970-01-01 was a Thursday: day 0 is weekday 3 counting from Monday = 0.
    ` * weekday_activity[1 + (intDiv(${calendarSql(plan, ts)}, ${DAY}) + 3) % 7]` +
    ` * (0.8 + 0.2 * (${ts} - ${plan.windowStart}) / ${plan.days * DAY}))`
  );
}

/**
 * Newest episode of tracked podcast p published at time ts (Int64 seconds).
 * Chart rows evaluate it with p = 0 for untracked shows; intDivOrZero keeps
 * that harmless even where if() evaluates both branches.
 */
export function latestEpisodeSql(p: string, ts: string): string {
  return (
    `if(${ts} >= pod_last_release[${p}], pod_episodes[${p}], ` + `pod_episodes[${p}] - intDivOrZero(pod_last_release[${p}] - ${ts} - 1, pod_cadence[${p}]) - 1)`
  );
}

export function releaseSql(p: string, k: string): string {
  return `(pod_last_release[${p}] - (pod_episodes[${p}] - ${k}) * pod_cadence[${p}])`;
}

export function episodeLabelSql(number: string): string {
  return `leftPad(toString(${number}), 3, '0')`;
}

/** Title of episode k (public number `number`) of the show with key showKey in category cat. */
export function episodeTitleSql(random: SqlRandom, cat: string, showKeyExpr: string, kExpr: string, number: string): string {
  // cityHash64 hashes numbers by type: fixed key types give the same title in every statement.
  const showKey = `toUInt64(${showKeyExpr})`;
  const k = `toUInt64(${kExpr})`;
  const choose = (list: string, size: number, tag: string) => `${list}[1 + ${random.hash(tag, showKey, k)} % ${size}]`;
  const topicsPerCategory = CATEGORIES[0].topics.length;
  const topic = `title_topics[(${cat} - 1) * ${topicsPerCategory} + 1 + ${random.hash('topic', showKey, k)} % ${topicsPerCategory}]`;
  const guest = `concat(${choose('guest_first_names', GUEST_FIRST_NAMES.length, 'guest-first')}, ' ', ${choose('guest_last_names', GUEST_LAST_NAMES.length, 'guest-last')})`;
  const template = choose('title_templates', EPISODE_TITLE_TEMPLATES.length, 'title-template');
  return (
    `replaceOne(replaceOne(replaceOne(replaceOne(${template}, '{topic}', ${topic}), '{name}', ${guest}), ` +
    `'{n}', toString(${number})), '{part}', toString(1 + ${random.hash('part', showKey, k)} % 3))`
  );
}

// Named constants each statement inlines in its WITH clause.

export function podcastConstants(plan: Plan): Record<string, string> {
  const p = plan.podcasts;
  const int64s = (values: number[]) => `CAST(${sqlLiteral(values)} AS Array(Int64))`;
  return {
    pod_account: sqlLiteral(p.map((x) => x.account)),
    pod_token: sqlLiteral(p.map((x) => x.token)),
    pod_slug: sqlLiteral(p.map((x) => x.slug)),
    pod_title: sqlLiteral(p.map((x) => x.title)),
    pod_id: sqlLiteral(p.map((x) => x.id)),
    pod_category: sqlLiteral(p.map((x) => x.category)),
    pod_host: sqlLiteral(p.map((x) => x.host)),
    pod_origin: sqlLiteral(p.map((x) => x.origin)),
    pod_app_id: sqlLiteral(p.map((x) => x.appId)),
    pod_chart_rank: sqlLiteral(p.map((x) => x.chartRank)),
    pod_episodes: int64s(p.map((x) => x.episodes)),
    pod_cadence: int64s(p.map((x) => x.cadenceSeconds)),
    pod_last_release: int64s(p.map((x) => x.lastRelease)),
    pod_first_number: int64s(p.map((x) => x.firstNumber)),
    pod_fresh_from: int64s(p.map((x) => x.freshFrom)),
    pod_lut: lookupTable(p.map((x) => x.popularity)),
  };
}

export function geoConstants(plan: Plan): Record<string, string> {
  const countryOf = (code: string) => COUNTRIES.find((c) => c.code === code) as Country;
  return {
    blk_prefix: sqlLiteral(plan.blocks.map((b) => b.prefix)),
    blk_city: sqlLiteral(plan.blocks.map((b) => b.city)),
    blk_org: sqlLiteral(plan.blocks.map((b) => b.org)),
    listener_block_lut: lookupTable(plan.blocks.map((b) => b.listenerWeight)),
    city_name: sqlLiteral(CITIES.map((c) => c.name)),
    city_country: sqlLiteral(CITIES.map((c) => countryOf(c.country).name)),
    city_continent: sqlLiteral(CITIES.map((c) => countryOf(c.country).continent)),
    city_timezone: sqlLiteral(CITIES.map((c) => c.timezone)),
    city_offset: sqlLiteral(CITIES.map((c) => c.utcOffsetMinutes * 60)),
    city_language: sqlLiteral(CITIES.map((c) => countryOf(c.country).acceptLanguage)),
    city_lat: sqlLiteral(CITIES.map((c) => c.lat)),
    city_lon: sqlLiteral(CITIES.map((c) => c.lon)),
  };
}

export function listenerAgentConstants(): Record<string, string> {
  return {
    agent_ua: sqlLiteral(LISTENER_AGENTS.map((a) => a.ua)),
    agent_app: sqlLiteral(LISTENER_AGENTS.map((a) => a.app)),
    agent_os: sqlLiteral(LISTENER_AGENTS.map((a) => a.os)),
    agent_device: sqlLiteral(LISTENER_AGENTS.map((a) => a.device)),
    agent_fetch: sqlLiteral(LISTENER_AGENTS.map((a) => FETCH_CODES[a.pattern])),
    agent_lut: lookupTable(LISTENER_AGENTS.map((a) => a.weight)),
  };
}

export function activityConstants(): Record<string, string> {
  return { hour_activity: sqlLiteral(HOURLY_ACTIVITY), weekday_activity: sqlLiteral(WEEKDAY_ACTIVITY) };
}

export function titleConstants(): Record<string, string> {
  return {
    title_templates: sqlLiteral(EPISODE_TITLE_TEMPLATES),
    title_topics: sqlLiteral(CATEGORIES.flatMap((c) => c.topics)),
    guest_first_names: sqlLiteral(GUEST_FIRST_NAMES),
    guest_last_names: sqlLiteral(GUEST_LAST_NAMES),
  };
}

export function chartConstants(plan: Plan): Record<string, string> {
  const trackedInSlot = CATEGORIES.flatMap((_, c) => {
    const members = plan.podcasts.map((p, i) => (p.category === c + 1 ? i + 1 : 0)).filter((i) => i > 0);
    if (members.length > MAX_TRACKED_PER_CATEGORY) throw new Error(`demo data: too many tracked shows in ${CATEGORIES[c].name}`);
    return Array.from({ length: MAX_TRACKED_PER_CATEGORY }, (_, slot) => members[slot] ?? 0);
  });
  return {
    chart_platform: sqlLiteral(plan.charts.map((c) => c.platform)),
    chart_country_code: sqlLiteral(plan.charts.map((c) => c.country.code)),
    chart_country_name: sqlLiteral(plan.charts.map((c) => c.country.name)),
    chart_cat: sqlLiteral(plan.charts.map((c) => c.category)),
    chart_category: sqlLiteral(plan.charts.map((c) => CATEGORIES[c.category - 1].name)),
    chart_depth: sqlLiteral(plan.charts.map((c) => c.depth)),
    tracked_in_slot: sqlLiteral(trackedInSlot),
    slug_adjectives: sqlLiteral(SLUG_ADJECTIVES),
    slug_patterns: sqlLiteral(SLUG_PATTERNS),
    slug_nouns: sqlLiteral(CATEGORIES.flatMap((c) => c.slugNouns)),
  };
}
