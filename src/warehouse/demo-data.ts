/**
 * Deterministic demo data for the six warehouse tables: a podcast-analytics
 * universe derived from a seed, generated inside the engine with
 * INSERT … SELECT FROM numbers(N). Every random choice is a cityHash64 of the
 * seed and the row's keys, so the same options always give the same rows.
 *
 * The universe:
 * - 40 tracked podcasts (reference-data TRACKED_PODCASTS), owned by four
 *   accounts (DEMO_ACCOUNTS), get a seeded Apple-style
 *   id, an 8-hex tracking token, a release schedule and a popularity; their
 *   episodes are `ep-NNN.mp3` files behind the tracking prefix.
 * - Listeners have a stable IP in a /16 that fixes city, country and ISP (a tiny
 *   GeoIP database built from the reference data), and a stable user agent.
 * - Charts rank the tracked shows among made-up shows per category.
 * - Smart links and website visits hang off the tracked shows; part of the web
 *   traffic comes from IPs that downloaded an episode shortly before.
 */
import { quoteIdentifier, TableName } from './ddl';
import { deriveDownloadsSql, type Places } from './derive/downloads';
import type { DownloadRuleSettings } from './derive/rules';
import type { UserAgentLists } from './derive/user-agents';
import {
  APPLE_CHART_COUNTRIES, BLACKLISTED_AGENTS, DEMO_ACCOUNTS, BOT_AGENTS, CATEGORIES, CITIES, COUNTRIES, Country,
  EPISODE_TITLE_TEMPLATES, FetchPattern, GUEST_FIRST_NAMES, GUEST_LAST_NAMES, HOSTING_NETWORKS, HOURLY_ACTIVITY,
  LINK_BROWSERS, LINK_DOMAIN, LINK_OPEN_APPS, LINK_OPEN_WEIGHTS, LINK_SOURCES, LISTEN_ON_APPS, LISTENER_AGENTS,
  MEDIA_HOSTS, MEMBERSHIP_TIERS, SHOP_PRODUCTS, SLUG_ADJECTIVES, SLUG_PATTERNS, SPOTIFY_CATEGORIES,
  SPOTIFY_CHART_COUNTRIES, TRACKED_PODCASTS, TRACKING_PREFIX, WEB_BROWSERS, WEEKDAY_ACTIVITY,
} from './reference-data';

export interface DemoDataOptions {
  /** Already-created database holding the six (empty) tables. */
  database: string;
  /** PRNG seed: the same seed, scale, endDate and days give identical rows. */
  seed: number;
  /** 1 = default size; 0.02 gives a small but non-empty set in every table. */
  scale: number;
  /** 'YYYY-MM-DD', the last UTC day of the window (inclusive). */
  endDate: string;
  /** Window length in days, default 90. */
  days?: number;
  /**
   * Rows one statement generates at most (estimated), DEFAULT_CHUNK_ROWS by
   * default. The two big steps (listener requests, downloads) run as several
   * statements over consecutive ranges of their input, which gives the same
   * rows as one statement: each row depends only on its own candidate number,
   * and the downloads of each range are derived after those before it, whose
   * rows the rolling windows read back (src/warehouse/derive).
   */
  chunkRows?: number;
  /** How requests become downloads: the same derivation imported logs go through. */
  downloads: { settings: DownloadRuleSettings; userAgents: UserAgentLists };
  /** Called before each statement, e.g. "podcast_events: listener requests, part 3 of 27 (~8,160,000 rows), 12% done". */
  onProgress?: (message: string) => void;
}

/**
 * A statement's memory is bounded by its part of the input, and ClickHouse
 * spills the downloads' GROUP BY and the window functions' sorts to disk
 * beyond these sizes, so a build at 100M downloads fits in a few GB. Two
 * insert threads sort and compress the new parts while the generator runs.
 */
export const DEFAULT_CHUNK_ROWS = 8_000_000;
const BUILD_SETTINGS = 'SETTINGS max_bytes_before_external_group_by = 1000000000, max_bytes_before_external_sort = 1000000000, max_insert_threads = 2';

/** Fills the six tables, one INSERT … SELECT per step; `run` executes one statement. */
export async function loadDemoData(run: (sql: string) => Promise<void>, options: DemoDataOptions): Promise<void> {
  const plan = makePlan(options);
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
  if (!(chunkRows >= 1)) throw new Error(`demo data: chunkRows must be at least 1, got ${chunkRows}`);
  const all = steps(plan, chunkRows);
  const total = all.reduce((n, step) => n + step.rows, 0);
  let done = 0;
  for (const step of all) {
    options.onProgress?.(`${step.message}, ${Math.floor((100 * done) / total)}% done`);
    await run(`${step.sql.trim()}\n${BUILD_SETTINGS}`);
    done += step.rows;
  }
}

const DAY = 86_400;
/** Weighted picks read a lookup table of this many slots instead of scanning cumulative weights per row. */
const LUT_SIZE = 16_384;
const SMALL_LUT_SIZE = 1_024;
/** Shows competing for each category chart; the chart keeps the top 100 (Apple) or 50, so the tail churns. */
const CHART_POOL = 130;
const CHART_DEPTH = { apple: 100, spotify: 50 } as const;
const EPISODE_CHART_DEPTH = 50;
const SNAPSHOT_HOUR_UTC = 6;
const MAX_TRACKED_PER_CATEGORY = 3;
/** Tracked shows' keys sit above every generated show key (categories × CHART_POOL), keeping ids unique. */
const TRACKED_SHOW_KEY = 5_000;
/** Share of download IPs whose owner later visits the show's website, in per mille. */
const VISITING_DOWNLOADERS_PER_MILLE = 70;
const FETCH_CODES: Record<FetchPattern, number> = { stream: 1, download: 2, browser: 3, speaker: 4 };

interface Step {
  message: string;
  sql: string;
  /** Rows the statement writes (estimated where the step does not fix them), for the progress percentage. */
  rows: number;
}

/** Rows per candidate or source row, measured at scale 1. */
const REQUESTS_PER_PLAY_CANDIDATE = 0.85;
const DOWNLOADS_PER_PLAY_CANDIDATE = 0.36;

/** Progress messages give exact counts where the step fixes them, else estimates (the ratios were measured). */
function steps(plan: Plan, chunkRows: number): Step[] {
  const { sizes } = plan;
  const snapshots = plan.charts.length * plan.days;
  const step = (message: string, rows: number, sql: string): Step => ({ message: `${message} (~${count(rows)} rows)`, rows, sql });
  const parts = <T>(label: string, items: T[], rows: number, sql: (item: T) => string): Step[] =>
    items.map((item, i) => step(items.length === 1 ? label : `${label}, part ${i + 1} of ${items.length}`, rows / items.length, sql(item)));

  const candidates = ranges(sizes.playCandidates, Math.ceil((sizes.playCandidates * REQUESTS_PER_PLAY_CANDIDATE) / chunkRows));
  const dayRanges = ranges(plan.days, Math.min(plan.days, Math.ceil((sizes.playCandidates * DOWNLOADS_PER_PLAY_CANDIDATE) / chunkRows)));
  return [
    step('channel_ranks', plan.charts.reduce((n, c) => n + c.depth, 0) * plan.days, channelRanksSql(plan)),
    step('episode_ranks', snapshots * EPISODE_CHART_DEPTH, episodeRanksSql(plan)),
    ...parts('podcast_events: listener requests', candidates, sizes.playCandidates * REQUESTS_PER_PLAY_CANDIDATE, (r) => listenerRequestsSql(plan, r)),
    step('podcast_events: bot requests', sizes.botRequests, botRequestsSql(plan)),
    step(`podcast_events: requests from ${sizes.blacklistedIps} blacklisted IPs`, sizes.blacklistedRequests, blacklistedRequestsSql(plan)),
    ...parts('downloads derived from podcast_events', dayRanges, sizes.playCandidates * DOWNLOADS_PER_PLAY_CANDIDATE, (r) => deriveDownloadsSql({
      ...plan.downloads,
      database: plan.database,
      places: demoPlaces(plan),
      from: plan.windowStart + r.offset * DAY,
      to: plan.windowStart + (r.offset + r.length) * DAY,
    })),
    step('link_views', sizes.linkVisits * 0.46, linkViewsSql(plan)),
    step('web_events: sessions of downloaders visiting the podcast websites', sizes.listeners * 0.2, downloaderWebEventsSql(plan)),
    step('web_events: events from organic visitors', sizes.organicSessions * 1.1, organicWebEventsSql(plan)),
  ];
}

interface Range {
  offset: number;
  length: number;
}

/** [0, total) cut into `parts` consecutive ranges of near-equal length. */
function ranges(total: number, parts: number): Range[] {
  const n = Math.max(1, parts);
  return Array.from({ length: n }, (_, i) => {
    const offset = Math.floor((total * i) / n);
    return { offset, length: Math.floor((total * (i + 1)) / n) - offset };
  });
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

// ---------------------------------------------------------------------------
// Plan: validated options plus the small universe computed in TypeScript.

interface Plan {
  database: string;
  downloads: DemoDataOptions['downloads'];
  days: number;
  /** First second of the window (00:00 UTC of endDate - days + 1). */
  windowStart: number;
  /** Last second of endDate. */
  windowEnd: number;
  table: (name: TableName) => string;
  random: SqlRandom;
  sizes: Sizes;
  podcasts: TrackedPodcast[];
  links: SmartLink[];
  blocks: GeoBlock[];
  charts: Chart[];
}

interface Sizes {
  listeners: number;
  playCandidates: number;
  botRequests: number;
  blacklistedRequests: number;
  blacklistedIps: number;
  linkVisits: number;
  linkViewers: number;
  organicSessions: number;
}

function makePlan(options: DemoDataOptions): Plan {
  const days = options.days ?? 90;
  if (!options.database) throw new Error('demo data: database is required');
  if (!Number.isSafeInteger(options.seed)) throw new Error(`demo data: seed must be an integer, got ${options.seed}`);
  if (!(options.scale > 0) || !Number.isFinite(options.scale)) throw new Error(`demo data: scale must be a positive number, got ${options.scale}`);
  if (!Number.isInteger(days) || days < 1 || days > 3_650) throw new Error(`demo data: days must be an integer in 1..3650, got ${days}`);
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(options.endDate);
  const endMs = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (!match || new Date(endMs).toISOString().slice(0, 10) !== options.endDate) {
    throw new Error(`demo data: endDate must be a valid YYYY-MM-DD date, got ${options.endDate}`);
  }
  const windowEnd = endMs / 1000 + DAY - 1;
  const windowStart = windowEnd + 1 - days * DAY;
  const db = quoteIdentifier(options.database);
  const podcasts = trackedPodcasts(options.seed, windowStart, windowEnd);
  return {
    database: options.database,
    downloads: options.downloads,
    days,
    windowStart,
    windowEnd,
    table: (name) => `${db}.${quoteIdentifier(name)}`,
    random: sqlRandom(options.seed),
    sizes: sizesFor(options.scale, days),
    podcasts,
    links: smartLinks(options.seed, podcasts, windowStart),
    blocks: geoBlocks(),
    charts: charts(options.scale),
  };
}

/** Audience sizes follow the scale; traffic volumes follow the scale and the window length (given per 90 days). */
function sizesFor(scale: number, days: number): Sizes {
  const scaled = (atScaleOne: number, minimum: number) => Math.max(minimum, Math.round(atScaleOne * scale));
  const perWindow = (per90Days: number, minimum: number) => scaled((per90Days * days) / 90, minimum);
  const linkVisits = perWindow(120_000, 500);
  return {
    listeners: scaled(60_000, 300),
    playCandidates: perWindow(2_600_000, 6_000),
    botRequests: perWindow(70_000, 150),
    blacklistedRequests: perWindow(35_000, 80),
    // Few addresses, each hammering: the blacklist stays short as traffic grows.
    blacklistedIps: Math.max(3, Math.round(25 * Math.sqrt(scale))),
    linkVisits,
    linkViewers: Math.round(linkVisits * 2.5),
    organicSessions: perWindow(60_000, 300),
  };
}

// ---------------------------------------------------------------------------
// Seeded choices made in TypeScript (the universe is small enough to inline).

/** FNV-1a over the key, finished with the murmur3 avalanche; uniform in [0, 1). */
function hashUnit(seed: number, ...parts: (string | number)[]): number {
  let h = 2166136261;
  for (const ch of `${seed}|${parts.join('|')}`) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 16777619);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** Redraws with an increasing attempt number until the value is new, so ids stay unique and deterministic. */
function uniqueDraw<T>(taken: Set<T>, draw: (attempt: number) => T): T {
  for (let attempt = 0; ; attempt++) {
    const value = draw(attempt);
    if (!taken.has(value)) {
      taken.add(value);
      return value;
    }
  }
}

interface TrackedPodcast {
  title: string;
  account: string;
  slug: string;
  /** 1-based index into CATEGORIES. */
  category: number;
  id: string;
  token: string;
  host: string;
  origin: string;
  appId: string;
  popularity: number;
  /** Underlying position in its category charts before country and daily noise. */
  chartRank: number;
  episodes: number;
  cadenceSeconds: number;
  /** Release time of the newest episode (number episodes); earlier ones follow the cadence backwards. */
  lastRelease: number;
  firstNumber: number;
  /** Oldest episode still getting its post-release spike inside the window (1-based). */
  freshFrom: number;
}

function slugify(title: string): string {
  return title.toLowerCase().replace(/&/g, 'and').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function trackedPodcasts(seed: number, windowStart: number, windowEnd: number): TrackedPodcast[] {
  const byPopularity = TRACKED_PODCASTS.map((_, i) => i).sort((a, b) => hashUnit(seed, 'popularity', a) - hashUnit(seed, 'popularity', b));
  const ids = new Set<string>();
  const tokens = new Set<string>();
  const lastDayStart = windowEnd + 1 - DAY;
  return TRACKED_PODCASTS.map(({ title, category }, i) => {
    const u = (...parts: (string | number)[]) => hashUnit(seed, 'podcast', i, ...parts);
    const popularityRank = byPopularity.indexOf(i);
    const slug = slugify(title);
    const cadenceDays = [4, 7, 7, 7, 14][Math.floor(u('cadence') * 5)];
    const cadenceSeconds = cadenceDays * DAY;
    const lastRelease = lastDayStart - daysSinceReleaseDay(lastDayStart, cadenceDays, u('weekday'), u('phase')) * DAY
      + (4 + Math.floor(u('hour') * 8)) * 3600 + Math.floor(u('minute') * 4) * 900;
    // Enough back catalogue that episode 1 predates the window: every play finds a published episode.
    let episodes = Math.ceil((windowEnd - windowStart) / cadenceSeconds) + 2 + Math.floor(u('catalogue') * 5);
    while (lastRelease - (episodes - 1) * cadenceSeconds >= windowStart) episodes++;
    let freshFrom = episodes;
    while (freshFrom > 1 && lastRelease - (episodes - freshFrom + 1) * cadenceSeconds >= windowStart - 10 * DAY) freshFrom--;
    return {
      title,
      account: DEMO_ACCOUNTS[i % DEMO_ACCOUNTS.length],
      slug,
      category: CATEGORIES.findIndex((c) => c.name === category) + 1,
      // Older shows have 9-digit Apple ids; newer ones sit above the generated chart shows' range.
      id: uniqueDraw(ids, (a) => String(u('old', a) < 0.3
        ? 200_000_000 + Math.floor(u('id', a) * 790_000_000)
        : 1_750_000_000 + Math.floor(u('id', a) * 40_000_000))),
      token: uniqueDraw(tokens, (a) => Math.floor(u('token', a) * 4294967296).toString(16).padStart(8, '0')),
      host: MEDIA_HOSTS[Math.floor(u('host') * MEDIA_HOSTS.length)],
      origin: `https://${slug.replace(/-/g, '')}.example`,
      appId: `site-${slug}`,
      popularity: 1 / Math.pow(popularityRank + 1, 0.75),
      chartRank: 1 + popularityRank * 2 + Math.floor(u('chart') * 3),
      episodes,
      cadenceSeconds,
      lastRelease,
      firstNumber: 1 + Math.floor(u('first-number') * 180),
      freshFrom,
    };
  });
}

/**
 * Days from the newest release to the window's last day. Weekly and biweekly
 * shows publish on a fixed weekday, mostly Tuesday to Thursday as real shows
 * do; twice-weekly ones just keep their rhythm.
 */
function daysSinceReleaseDay(lastDayStart: number, cadenceDays: number, weekdayDraw: number, phaseDraw: number): number {
  if (cadenceDays < 7) return Math.floor(phaseDraw * cadenceDays);
  const weekdayShares = [2, 3, 3, 3, 1]; // Monday..Friday
  const weekday = cumulative(weekdayShares).findIndex((c) => c > weekdayDraw);
  const lastWeekday = (lastDayStart / DAY + 3) % 7; // 1970-01-01 was a Thursday; 0 = Monday
  return ((lastWeekday - weekday + 7) % 7) + (cadenceDays === 14 && phaseDraw < 0.5 ? 7 : 0);
}

interface SmartLink {
  url: string;
  /** 1-based index into the tracked podcasts. */
  podcast: number;
  created: number;
  /** Show links collect views all along; episode links mostly right after release. */
  isShowLink: boolean;
  weight: number;
}

/** Five links per show: one for the show and one per latest four episodes. */
function smartLinks(seed: number, podcasts: TrackedPodcast[], windowStart: number): SmartLink[] {
  const ids = new Set<string>();
  const shortId = (key: string) => uniqueDraw(ids, (a) =>
    (Math.floor(hashUnit(seed, 'link', key, a) * 36 ** 4).toString(36).padStart(4, '0')
      + Math.floor(hashUnit(seed, 'link2', key, a) * 36 ** 3).toString(36).padStart(3, '0')));
  return podcasts.flatMap((podcast, i) => {
    const reach = Math.sqrt(podcast.popularity);
    const show: SmartLink = {
      url: `${LINK_DOMAIN}${podcast.slug}/${shortId(podcast.slug)}`,
      podcast: i + 1,
      created: windowStart - 30 * DAY,
      isShowLink: true,
      weight: reach,
    };
    const episodes = [0, 1, 2, 3].map((back): SmartLink => {
      const k = podcast.episodes - back;
      return {
        url: `${LINK_DOMAIN}${podcast.slug}/${shortId(`${podcast.slug}/${k}`)}`,
        podcast: i + 1,
        created: podcast.lastRelease - back * podcast.cadenceSeconds,
        isShowLink: false,
        weight: reach * 0.7,
      };
    });
    return [show, ...episodes];
  });
}

interface GeoBlock {
  /** The /16 as first * 256 + second octet. */
  prefix: number;
  /** 1-based index into CITIES. */
  city: number;
  org: string;
  listenerWeight: number;
  use: 'residential' | 'bot' | 'blacklist';
}

/**
 * A tiny GeoIP database: each /16 belongs to one ISP in one city, so city,
 * country, timezone and org are functions of the IP. It does not depend on the
 * seed, like a real GeoIP file would not.
 */
function geoBlocks(): GeoBlock[] {
  const cityIndex = (name: string) => CITIES.findIndex((c) => c.name === name) + 1;
  const blocks: GeoBlock[] = HOSTING_NETWORKS.map((net) => ({
    prefix: net.prefix[0] * 256 + net.prefix[1],
    city: cityIndex(net.city),
    org: net.org,
    listenerWeight: 0,
    use: net.use,
  }));
  const used = new Set(blocks.map((b) => b.prefix));
  const listenerTotal = COUNTRIES.reduce((n, c) => n + c.listenerShare, 0);
  for (const country of COUNTRIES.filter((c) => c.listenerShare > 0)) {
    const cities = CITIES.filter((c) => c.country === country.code && c.weight > 0);
    const cityTotal = cities.reduce((n, c) => n + c.weight, 0);
    for (const city of cities) {
      for (const [org, share] of country.isps) {
        const first = country.ipFirstOctets[blocks.length % country.ipFirstOctets.length];
        let second = Math.floor(hashUnit(0, city.name, org) * 256);
        while (used.has(first * 256 + second)) second = (second + 1) % 256;
        used.add(first * 256 + second);
        blocks.push({
          prefix: first * 256 + second,
          city: cityIndex(city.name),
          org,
          listenerWeight: (country.listenerShare / listenerTotal) * (city.weight / cityTotal) * share,
          use: 'residential',
        });
      }
    }
  }
  return blocks;
}

interface Chart {
  platform: 'apple' | 'spotify';
  country: Country;
  /** 1-based index into CATEGORIES. */
  category: number;
  depth: number;
}

/** One chart per platform, country and category; more countries as the scale grows. */
function charts(scale: number): Chart[] {
  const countries = (codes: string[], atScaleOne: number) =>
    codes.slice(0, Math.min(codes.length, Math.max(1, Math.round(atScaleOne * scale))))
      .map((code) => COUNTRIES.find((c) => c.code === code) as Country);
  const categoryIndex = (name: string) => CATEGORIES.findIndex((c) => c.name === name) + 1;
  return [
    ...countries(APPLE_CHART_COUNTRIES, 8).flatMap((country) => CATEGORIES.map((c) =>
      ({ platform: 'apple' as const, country, category: categoryIndex(c.name), depth: CHART_DEPTH.apple }))),
    ...countries(SPOTIFY_CHART_COUNTRIES, 4).flatMap((country) => SPOTIFY_CATEGORIES.map((name) =>
      ({ platform: 'spotify' as const, country, category: categoryIndex(name), depth: CHART_DEPTH.spotify }))),
  ];
}

// ---------------------------------------------------------------------------
// SQL building blocks.

type Literal = string | number | boolean | Literal[];

function sql(value: Literal): string {
  if (Array.isArray(value)) return `[${value.map(sql).join(', ')}]`;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`demo data: cannot inline ${value}`);
    return String(value);
  }
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function withClause(constants: Record<string, string>): string {
  return `WITH\n${Object.entries(constants).map(([name, expr]) => `  ${expr} AS ${name}`).join(',\n')}`;
}

function cumulative(weights: number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const lastPositive = weights.reduce((last, w, i) => (w > 0 ? i : last), -1);
  let running = 0;
  // Exactly 1 from the last positive weight on, so rounding never hands a draw to a zero-weight entry.
  return weights.map((w, i) => (i >= lastPositive ? 1 : (running += w) / total));
}

/** slot → 1-based index, each index owning a share of slots proportional to its weight. */
function lookupTable(weights: number[], size = LUT_SIZE): string {
  return `arrayMap(i -> arrayFirstIndex(c -> c > (i + 0.5) / ${size}, ${sql(cumulative(weights))}), range(${size}))`;
}

/** One lookup table per group, laid end to end, because indexing nested constant arrays per row is slow. */
function groupedLookupTables(groups: number[][]): string {
  return `arrayFlatten([${groups.map((w) => lookupTable(w, SMALL_LUT_SIZE)).join(', ')}])`;
}

interface SqlRandom {
  /** UInt64 hash of the seed, a tag naming the decision, and the row keys. */
  hash(tag: string, ...keys: string[]): string;
  /** Uniform in (0, 1). */
  unit(tag: string, ...keys: string[]): string;
  /** Standard normal (Box–Muller). */
  normal(tag: string, ...keys: string[]): string;
  /** Weighted 1-based index through a lookupTable constant. */
  pick(table: string, tag: string, ...keys: string[]): string;
  /** Weighted 1-based index within group `group` of a groupedLookupTables constant. */
  pickIn(table: string, group: string, tag: string, ...keys: string[]): string;
}

function sqlRandom(seed: number): SqlRandom {
  const hash = (tag: string, ...keys: string[]) => `cityHash64(${seed}, ${sql(tag)}${keys.map((k) => `, ${k}`).join('')})`;
  const unit = (tag: string, ...keys: string[]) => `((${hash(tag, ...keys)} % 1000000 + 0.5) / 1000000)`;
  return {
    hash,
    unit,
    normal: (tag, ...keys) => `(sqrt(-2 * ln(${unit(`${tag}/r`, ...keys)})) * cos(2 * pi() * ${unit(`${tag}/a`, ...keys)}))`,
    pick: (table, tag, ...keys) => `${table}[1 + ${hash(tag, ...keys)} % ${LUT_SIZE}]`,
    pickIn: (table, group, tag, ...keys) =>
      `${table}[(${group} - 1) * ${SMALL_LUT_SIZE} + 1 + ${hash(tag, ...keys)} % ${SMALL_LUT_SIZE}]`,
  };
}

/** 32 hex digits from two hashes, shaped as a version-4 UUID string like trackers generate. */
function uuidSql(high: string, low: string): string {
  const hex = `lower(concat(leftPad(hex(${high}), 16, '0'), leftPad(hex(${low}), 16, '0')))`;
  return `concat(substring(${hex}, 1, 8), '-', substring(${hex}, 9, 4), '-4', substring(${hex}, 14, 3), '-', `
    + `['8', '9', 'a', 'b'][1 + ${low} % 4], substring(${hex}, 18, 3), '-', substring(${hex}, 21, 12))`;
}

/**
 * byte_range_larger_one: false exactly for a probe whose Range ends at byte 0
 * or 1 ('bytes=0-1', 'bytes=0-0'); true for no Range header, open-ended ranges
 * and any range reaching past byte 1.
 */
function largerThanOneByteSql(byteRange: string): string {
  return `NOT match(${byteRange}, '^bytes=0-[01]$')`;
}

/** Relative traffic level at a UTC time, for a place `offset` seconds from UTC: hour of day × weekday × growth. */
function activitySql(plan: Plan, ts: string, offset: string): string {
  return `(hour_activity[1 + intDiv((${ts} + ${offset}) % ${DAY}, 3600)]`
    + ` * weekday_activity[1 + (intDiv(${ts}, ${DAY}) + 3) % 7]`
    + ` * (0.8 + 0.2 * (${ts} - ${plan.windowStart}) / ${plan.days * DAY}))`;
}

/**
 * Newest episode of tracked podcast p published at time ts (Int64 seconds).
 * Chart rows evaluate it with p = 0 for untracked shows; intDivOrZero keeps
 * that harmless even where if() evaluates both branches.
 */
function latestEpisodeSql(p: string, ts: string): string {
  return `if(${ts} >= pod_last_release[${p}], pod_episodes[${p}], `
    + `pod_episodes[${p}] - intDivOrZero(pod_last_release[${p}] - ${ts} - 1, pod_cadence[${p}]) - 1)`;
}

function releaseSql(p: string, k: string): string {
  return `(pod_last_release[${p}] - (pod_episodes[${p}] - ${k}) * pod_cadence[${p}])`;
}

function episodeLabelSql(number: string): string {
  return `leftPad(toString(${number}), 3, '0')`;
}

/** Title of episode k (public number `number`) of the show with key showKey in category cat. */
function episodeTitleSql(random: SqlRandom, cat: string, showKeyExpr: string, kExpr: string, number: string): string {
  // cityHash64 hashes numbers by type: fixed key types give the same title in every statement.
  const showKey = `toUInt64(${showKeyExpr})`;
  const k = `toUInt64(${kExpr})`;
  const choose = (list: string, size: number, tag: string) => `${list}[1 + ${random.hash(tag, showKey, k)} % ${size}]`;
  const topicsPerCategory = CATEGORIES[0].topics.length;
  const topic = `title_topics[(${cat} - 1) * ${topicsPerCategory} + 1 + ${random.hash('topic', showKey, k)} % ${topicsPerCategory}]`;
  const guest = `concat(${choose('guest_first_names', GUEST_FIRST_NAMES.length, 'guest-first')}, ' ', ${choose('guest_last_names', GUEST_LAST_NAMES.length, 'guest-last')})`;
  const template = choose('title_templates', EPISODE_TITLE_TEMPLATES.length, 'title-template');
  return `replaceOne(replaceOne(replaceOne(replaceOne(${template}, '{topic}', ${topic}), '{name}', ${guest}), `
    + `'{n}', toString(${number})), '{part}', toString(1 + ${random.hash('part', showKey, k)} % 3))`;
}

// Named constants each statement inlines in its WITH clause.

function podcastConstants(plan: Plan): Record<string, string> {
  const p = plan.podcasts;
  const int64s = (values: number[]) => `CAST(${sql(values)} AS Array(Int64))`;
  return {
    pod_account: sql(p.map((x) => x.account)),
    pod_token: sql(p.map((x) => x.token)),
    pod_slug: sql(p.map((x) => x.slug)),
    pod_title: sql(p.map((x) => x.title)),
    pod_id: sql(p.map((x) => x.id)),
    pod_category: sql(p.map((x) => x.category)),
    pod_host: sql(p.map((x) => x.host)),
    pod_origin: sql(p.map((x) => x.origin)),
    pod_app_id: sql(p.map((x) => x.appId)),
    pod_chart_rank: sql(p.map((x) => x.chartRank)),
    pod_episodes: int64s(p.map((x) => x.episodes)),
    pod_cadence: int64s(p.map((x) => x.cadenceSeconds)),
    pod_last_release: int64s(p.map((x) => x.lastRelease)),
    pod_first_number: int64s(p.map((x) => x.firstNumber)),
    pod_fresh_from: int64s(p.map((x) => x.freshFrom)),
    pod_lut: lookupTable(p.map((x) => x.popularity)),
  };
}

function geoConstants(plan: Plan): Record<string, string> {
  const countryOf = (code: string) => COUNTRIES.find((c) => c.code === code) as Country;
  return {
    blk_prefix: sql(plan.blocks.map((b) => b.prefix)),
    blk_city: sql(plan.blocks.map((b) => b.city)),
    blk_org: sql(plan.blocks.map((b) => b.org)),
    listener_block_lut: lookupTable(plan.blocks.map((b) => b.listenerWeight)),
    city_name: sql(CITIES.map((c) => c.name)),
    city_country: sql(CITIES.map((c) => countryOf(c.country).name)),
    city_continent: sql(CITIES.map((c) => countryOf(c.country).continent)),
    city_timezone: sql(CITIES.map((c) => c.timezone)),
    city_offset: sql(CITIES.map((c) => c.utcOffsetMinutes * 60)),
    city_language: sql(CITIES.map((c) => countryOf(c.country).acceptLanguage)),
    city_lat: sql(CITIES.map((c) => c.lat)),
    city_lon: sql(CITIES.map((c) => c.lon)),
  };
}

function listenerAgentConstants(): Record<string, string> {
  return {
    agent_ua: sql(LISTENER_AGENTS.map((a) => a.ua)),
    agent_app: sql(LISTENER_AGENTS.map((a) => a.app)),
    agent_os: sql(LISTENER_AGENTS.map((a) => a.os)),
    agent_device: sql(LISTENER_AGENTS.map((a) => a.device)),
    agent_fetch: sql(LISTENER_AGENTS.map((a) => FETCH_CODES[a.pattern])),
    agent_lut: lookupTable(LISTENER_AGENTS.map((a) => a.weight)),
  };
}

function activityConstants(): Record<string, string> {
  return { hour_activity: sql(HOURLY_ACTIVITY), weekday_activity: sql(WEEKDAY_ACTIVITY) };
}

function titleConstants(): Record<string, string> {
  return {
    title_templates: sql(EPISODE_TITLE_TEMPLATES),
    title_topics: sql(CATEGORIES.flatMap((c) => c.topics)),
    guest_first_names: sql(GUEST_FIRST_NAMES),
    guest_last_names: sql(GUEST_LAST_NAMES),
  };
}

function chartConstants(plan: Plan): Record<string, string> {
  const trackedInSlot = CATEGORIES.flatMap((_, c) => {
    const members = plan.podcasts.map((p, i) => (p.category === c + 1 ? i + 1 : 0)).filter((i) => i > 0);
    if (members.length > MAX_TRACKED_PER_CATEGORY) throw new Error(`demo data: too many tracked shows in ${CATEGORIES[c].name}`);
    return Array.from({ length: MAX_TRACKED_PER_CATEGORY }, (_, slot) => members[slot] ?? 0);
  });
  return {
    chart_platform: sql(plan.charts.map((c) => c.platform)),
    chart_country_code: sql(plan.charts.map((c) => c.country.code)),
    chart_country_name: sql(plan.charts.map((c) => c.country.name)),
    chart_cat: sql(plan.charts.map((c) => c.category)),
    chart_category: sql(plan.charts.map((c) => CATEGORIES[c.category - 1].name)),
    chart_depth: sql(plan.charts.map((c) => c.depth)),
    tracked_in_slot: sql(trackedInSlot),
    slug_adjectives: sql(SLUG_ADJECTIVES),
    slug_patterns: sql(SLUG_PATTERNS),
    slug_nouns: sql(CATEGORIES.flatMap((c) => c.slugNouns)),
  };
}

// ---------------------------------------------------------------------------
// Charts.

/**
 * Columns of one chart candidate, given `day` (0-based in the window), `chart`
 * (1-based) and `slot` (0..CHART_POOL-1): the first slots of a category hold
 * its tracked shows, the rest are made-up shows with unique ids and slugs.
 */
function chartShowColumns(plan: Plan): string {
  const r = plan.random;
  const nouns = CATEGORIES[0].slugNouns.length;
  const adjectives = SLUG_ADJECTIVES.length;
  const combos = adjectives * nouns * SLUG_PATTERNS.length;
  // A step coprime with the number of combinations walks distinct combinations, so slugs never repeat.
  const combo = `(${r.hash('slug-offset', 'cat')} % ${combos} + slot * 1009) % ${combos}`;
  const generatedSlug = `replaceOne(replaceOne(slug_patterns[1 + intDiv(${combo}, ${adjectives * nouns})], `
    + `'{a}', slug_adjectives[1 + ${combo} % ${adjectives}]), `
    + `'{n}', slug_nouns[(cat - 1) * ${nouns} + 1 + intDiv(${combo}, ${adjectives}) % ${nouns}])`;
  return `
      chart_cat[chart] AS cat,
      if(slot < ${MAX_TRACKED_PER_CATEGORY}, tracked_in_slot[(cat - 1) * ${MAX_TRACKED_PER_CATEGORY} + slot + 1], 0) AS tp,
      tp > 0 AS is_tracked,
      if(is_tracked, ${TRACKED_SHOW_KEY} + tp, (cat - 1) * ${CHART_POOL} + slot) AS show_key,
      if(is_tracked, pod_id[tp], toString(1000000000 + show_key * 300000 + ${r.hash('podcast-id', 'show_key')} % 300000)) AS podcast_id,
      if(is_tracked, pod_slug[tp], ${generatedSlug}) AS podcast_slug,
      -- 37 is coprime with the pool size: generated shows get distinct base ranks
      if(is_tracked, pod_chart_rank[tp], 1 + (slot * 37 + ${r.hash('rank-offset', 'cat')}) % ${CHART_POOL}) AS base_rank,
      intDiv(${plan.windowStart}, ${DAY}) + day AS abs_day,
      if(chart_country_code[chart] = 'us', 0, 0.35 * ${r.normal('country-taste', 'show_key', 'chart_country_code[chart]')})
        + if(chart_platform[chart] = 'spotify', 0.4 * ${r.normal('platform-taste', 'show_key')}, 0) AS taste`;
}

/**
 * Score = log of the base rank (Zipf: the top is stable, the tail churns)
 * + country/platform taste + a slow wave + small daily noise; ranks come from
 * row_number over (score, podcast_id), a total order.
 */
function channelRanksSql(plan: Plan): string {
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
function episodeRanksSql(plan: Plan): string {
  const r = plan.random;
  const pool = plan.charts.length * CHART_POOL * 2;
  const snapshot = `toInt64(${plan.windowStart} + day * ${DAY} + ${SNAPSHOT_HOUR_UTC * 3600})`;
  const cadence = `[1, 2, 3, 7, 7, 7, 7, 14][1 + ${r.hash('cadence', 'show_key')} % 8]`;
  const launch = `(intDiv(${plan.windowStart}, ${DAY}) - 200 - toInt64(${r.hash('launch', 'show_key')} % 2500))`;
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

// ---------------------------------------------------------------------------
// podcast_events and downloads.

const EVENT_COLUMNS = 'account_id, request_id, ts, ip4, ip_blacklisted, url, redirect_url, raw_ua, parsed_ua, token, byte_range, '
  + 'byte_range_larger_one, city, country, referer, details_key, details_value';

/** request_id from the row's unique key; the tag keeps listener, bot and blacklisted ids apart. */
function requestIdSql(random: SqlRandom, tag: string, ...keys: string[]): string {
  return `toUUID(${uuidSql(random.hash(tag, ...keys), random.hash(`${tag}/low`, ...keys))})`;
}

function mediaPathSql(p: string, k: string): string {
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
function listenerRequestsSql(plan: Plan, candidates: Range): string {
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
  concat(${sql(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
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
function botRequestsSql(plan: Plan): string {
  const r = plan.random;
  const networks = new Map(HOSTING_NETWORKS.map((n, i) => [n.key, i + 1]));
  return `
INSERT INTO ${plan.table('podcast_events')} (${EVENT_COLUMNS})
${withClause({
    ...podcastConstants(plan),
    ...geoConstants(plan),
    bot_ua: sql(BOT_AGENTS.map((b) => b.ua)),
    bot_app: sql(BOT_AGENTS.map((b) => b.app)),
    bot_block: sql(BOT_AGENTS.map((b) => networks.get(b.network) as number)),
    bot_lut: lookupTable(BOT_AGENTS.map((b) => b.weight)),
  })}
SELECT
  pod_account[p],
  ${requestIdSql(r, 'bot-request', 'request')},
  toDateTime(t, 'UTC'),
  toIPv4(blk_prefix[block] * 65536 + 1 + ${r.hash('bot-host', 'bot', 'address')} % 65534),
  false,
  concat(${sql(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
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
function blacklistedRequestsSql(plan: Plan): string {
  const r = plan.random;
  const blacklistBlocks = plan.blocks.flatMap((b, i) => (b.use === 'blacklist' ? [i + 1] : []));
  return `
INSERT INTO ${plan.table('podcast_events')} (${EVENT_COLUMNS})
${withClause({
    ...podcastConstants(plan),
    ...geoConstants(plan),
    blacklisted_ua: sql(BLACKLISTED_AGENTS.map((a) => a.ua)),
    blacklisted_app: sql(BLACKLISTED_AGENTS.map((a) => a.app)),
    blacklist_blocks: sql(blacklistBlocks),
  })}
SELECT
  pod_account[p],
  ${requestIdSql(r, 'blacklisted-request', 'request')},
  toDateTime(t, 'UTC'),
  toIPv4(blk_prefix[block] * 65536 + 1 + ${r.hash('offender-host', 'offender')} % 65534),
  true,
  concat(${sql(TRACKING_PREFIX)}, pod_token[p], '/', media_path),
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
function demoPlaces(plan: Plan): Places {
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

// ---------------------------------------------------------------------------
// link_views.

/**
 * Visits to smart links, each with 1–3 views by the same viewer. Show links
 * are visited all along; episode links mostly in the days after release.
 * Viewers are stable ids with a country, language and browser; the traffic
 * source can replace the browser family with an in-app browser.
 */
function linkViewsSql(plan: Plan): string {
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
    link_url: sql(plan.links.map((l) => l.url)),
    link_account: sql(plan.links.map((l) => plan.podcasts[l.podcast - 1].account)),
    link_created: `CAST(${sql(plan.links.map((l) => l.created))} AS Array(Int64))`,
    link_is_show: sql(plan.links.map((l) => l.isShowLink)),
    link_lut: lookupTable(plan.links.map((l) => l.weight)),
    viewer_country_code: sql(COUNTRIES.map((c) => c.code)),
    viewer_country_name: sql(COUNTRIES.map((c) => c.name)),
    country_offset: sql(COUNTRIES.map((c) => primaryCity(c.code).utcOffsetMinutes * 60)),
    country_lut: lookupTable(COUNTRIES.map((c) => c.listenerShare)),
    viewer_language: sql(languages.map((l) => l.name)),
    language_lut: groupedLookupTables(COUNTRIES.map((c) =>
      languages.map((l) => (l.country === c.code ? (c.languages.find(([name]) => name === l.name) as [string, number])[1] : 0)))),
    browser_family: sql(LINK_BROWSERS.map((b) => b.family)),
    browser_platform: sql(LINK_BROWSERS.map((b) => platforms.indexOf(b.platform) + 1)),
    browser_lut: lookupTable(LINK_BROWSERS.map((b) => b.weight)),
    source_source: sql(LINK_SOURCES.map((s) => s.source)),
    source_medium: sql(LINK_SOURCES.map((s) => s.medium)),
    source_campaign: sql(LINK_SOURCES.map((s) => s.campaign)),
    source_referer: sql(LINK_SOURCES.map((s) => s.refererDomain)),
    source_in_app: sql(LINK_SOURCES.map((s) => s.inAppFamily)),
    source_lut: lookupTable(LINK_SOURCES.map((s) => s.weight)),
    open_app: sql(LINK_OPEN_APPS),
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

// ---------------------------------------------------------------------------
// web_events.

const WEB_COLUMNS = 'account_id, track_ts, ingest_ts, event_id, app_id, origin, session_id, ua, ip4, page_title, page_url, '
  + 'se_category, se_action, se_label, se_value, latitude, longitude, city, country';
const WEB_OS_GROUPS = ['iOS', 'Android', 'macOS', 'Windows', 'Linux'];
/** Conversion kinds (se_category 'conversion'), in the order of their weights in webConstants. */
const CONVERSION_ACTIONS = ['newsletter_signup', 'purchase', 'membership_start'];

function webConstants(plan: Plan): Record<string, string> {
  return {
    ...podcastConstants(plan),
    ...geoConstants(plan),
    ...titleConstants(),
    ...activityConstants(),
    web_ua: sql(WEB_BROWSERS.map((b) => b.ua)),
    web_lut: lookupTable(WEB_BROWSERS.map((b) => b.weight)),
    web_os_lut: groupedLookupTables(WEB_OS_GROUPS.map((os) => WEB_BROWSERS.map((b) => (b.os === os ? b.weight : 0)))),
    // after the landing page: browse, play, pause, listen-on click, newsletter form, add to cart
    event_kind_lut: lookupTable([50, 18, 6, 10, 8, 8]),
    conversion_lut: lookupTable([60, 25, 15]),
    conversion_action: sql(CONVERSION_ACTIONS),
    shop_product: sql(SHOP_PRODUCTS.map(([name]) => name)),
    shop_price: `CAST(${sql(SHOP_PRODUCTS.map(([, price]) => price))} AS Array(Float64))`,
    membership_tier: sql(MEMBERSHIP_TIERS.map(([name]) => name)),
    membership_price: `CAST(${sql(MEMBERSHIP_TIERS.map(([, price]) => price))} AS Array(Float64))`,
    listen_on_app: sql(LISTEN_ON_APPS),
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
function webEventsSql(plan: Plan, sessions: string): string {
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

function cityCoordinatesSql(random: SqlRandom, ci: string, key: string): string {
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
function downloaderWebEventsSql(plan: Plan): string {
  const r = plan.random;
  const device = 'download.5';
  const osGroup = `if(${device} IN ('smartphone', 'tablet', 'desktop'), transform(download.4, ${sql(WEB_OS_GROUPS)}, [1, 2, 3, 4, 5], 1), 1)`;
  return webEventsSql(plan, `
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
      SELECT ip4, argMin((ts, token, url, os_name, device_type, city, country), (${r.hash('visited-download', 'ip4', 'ts', 'url', 'raw_ua')}, ts, url, raw_ua)) AS download
      FROM ${plan.table('downloads')}
      WHERE ${r.hash('visitor', 'ip4')} % 1000 < ${VISITING_DOWNLOADERS_PER_MILLE}
      GROUP BY ip4
    )
    WHERE start_ms <= ${(plan.windowEnd - 3600) * 1000}`);
}

/** Everyone else: visitors from the upper half of residential /16s, which never download. */
function organicWebEventsSql(plan: Plan): string {
  const r = plan.random;
  return webEventsSql(plan, `
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
    WHERE ${r.unit('keep', 'number')} < ${activitySql(plan, 'start_s', 'city_offset[ci]')}`);
}
