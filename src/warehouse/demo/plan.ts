/** The demo universe: validated options, sizes, and the small world (podcasts, links, GeoIP blocks, charts) computed in TypeScript from the seed. */
import type { TableName } from '../ddl';
import type { DownloadRuleSettings } from '../derive/rules';
import type { UserAgentSet } from '../derive/user-agents';
import { quoteIdentifier } from '../sql';
import {
  APPLE_CHART_COUNTRIES,
  CATEGORIES,
  CITIES,
  COUNTRIES,
  type Country,
  DEMO_ACCOUNTS,
  type FetchPattern,
  HOSTING_NETWORKS,
  LINK_DOMAIN,
  MEDIA_HOSTS,
  SPOTIFY_CATEGORIES,
  SPOTIFY_CHART_COUNTRIES,
  TRACKED_PODCASTS,
} from '../reference-data';
import { cumulative, sqlRandom, type SqlRandom } from './random';

export interface DemoDataOptions {
  /** Already-created database holding the six (empty) tables. */
  database: string;
  /** PRNG seed: the same seed, scale, days and calendarEndDate give identical rows, moved to end on endDate. */
  seed: number;
  /** 1 = default size; 0.02 gives a small but non-empty set in every table. */
  scale: number;
  /** 'YYYY-MM-DD', the last UTC day of the window (inclusive). */
  endDate: string;
  /**
   * 'YYYY-MM-DD', the day whose calendar the rows follow (weekly rhythms and release weekdays), endDate by default.
   * A fixed one gives the same rows whatever endDate is, each moved by the days between them.
   */
  calendarEndDate?: string;
  /** Window length in days, default 90. */
  days?: number;
  /**
   * Rows one statement generates at most (estimated), DEFAULT_CHUNK_ROWS (demo-data.ts) by
   * default. The two big steps (listener requests, downloads) run as several
   * statements over consecutive ranges of their input, which gives the same
   * rows as one statement: each row depends only on its own candidate number,
   * and the downloads of each range are derived after those before it, whose
   * rows the rolling windows read back (src/warehouse/derive).
   */
  chunkRows?: number;
  /** How requests become downloads: the same derivation imported logs go through. */
  downloads: { settings: DownloadRuleSettings; userAgents: UserAgentSet };
  /** Called before each statement, e.g. "podcast_events: listener requests, part 3 of 27 (~8,160,000 rows), 12% done". */
  onProgress?: (message: string) => void;
}

/** A part of a step's input: its first candidate and how many. */
export interface Range {
  offset: number;
  length: number;
}

export const DAY = 86_400;
/** Shows competing for each category chart; the chart keeps the top 100 (Apple) or 50, so the tail churns. */
export const CHART_POOL = 130;
export const CHART_DEPTH = { apple: 100, spotify: 50 } as const;
export const EPISODE_CHART_DEPTH = 50;
export const SNAPSHOT_HOUR_UTC = 6;
export const MAX_TRACKED_PER_CATEGORY = 3;
/** Tracked shows' keys sit above every generated show key (categories × CHART_POOL), keeping ids unique. */
export const TRACKED_SHOW_KEY = 5_000;
/** Share of download IPs whose owner later visits the show's website, in per mille. */
export const VISITING_DOWNLOADERS_PER_MILLE = 70;
export const FETCH_CODES: Record<FetchPattern, number> = { stream: 1, download: 2, browser: 3, speaker: 4 };

// ---------------------------------------------------------------------------
// Plan: validated options plus the small universe computed in TypeScript.

export interface Plan {
  database: string;
  downloads: DemoDataOptions['downloads'];
  days: number;
  /** First second of the window (00:00 UTC of endDate - days + 1). */
  windowStart: number;
  /** Last second of endDate. */
  windowEnd: number;
  /**
   * Seconds from a time of the window to the same time on the calendar the rows follow (calendarEndDate's), a
   * whole number of days: weekdays, release days and the charts' daily draws read it, so the rows depend on the
   * calendar date and never on where the window is placed.
   */
  calendarOffset: number;
  table: (name: TableName) => string;
  random: SqlRandom;
  sizes: Sizes;
  podcasts: TrackedPodcast[];
  links: SmartLink[];
  blocks: GeoBlock[];
  charts: Chart[];
}

export interface Sizes {
  listeners: number;
  playCandidates: number;
  botRequests: number;
  blacklistedRequests: number;
  blacklistedIps: number;
  linkVisits: number;
  linkViewers: number;
  organicSessions: number;
}

export function makePlan(options: DemoDataOptions): Plan {
  const days = options.days ?? 90;
  if (!options.database) throw new Error('demo data: database is required');
  if (!Number.isSafeInteger(options.seed)) throw new Error(`demo data: seed must be an integer, got ${options.seed}`);
  if (!(options.scale > 0) || !Number.isFinite(options.scale)) throw new Error(`demo data: scale must be a positive number, got ${options.scale}`);
  if (!Number.isInteger(days) || days < 1 || days > 3_650) throw new Error(`demo data: days must be an integer in 1..3650, got ${days}`);
  const endMs = utcDayMs('endDate', options.endDate);
  const calendarOffset = (utcDayMs('calendarEndDate', options.calendarEndDate ?? options.endDate) - endMs) / 1000;
  const windowEnd = endMs / 1000 + DAY - 1;
  const windowStart = windowEnd + 1 - days * DAY;
  const db = quoteIdentifier(options.database);
  const podcasts = trackedPodcasts(options.seed, windowStart, windowEnd, calendarOffset);
  return {
    database: options.database,
    downloads: options.downloads,
    days,
    windowStart,
    windowEnd,
    calendarOffset,
    table: (name) => `${db}.${quoteIdentifier(name)}`,
    random: sqlRandom(options.seed),
    sizes: sizesFor(options.scale, days),
    podcasts,
    links: smartLinks(options.seed, podcasts, windowStart),
    blocks: geoBlocks(),
    charts: charts(options.scale),
  };
}

/** Midnight UTC of a 'YYYY-MM-DD' option, in epoch milliseconds. */
function utcDayMs(option: string, value: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (!match || new Date(ms).toISOString().slice(0, 10) !== value) throw new Error(`demo data: ${option} must be a valid YYYY-MM-DD date, got ${value}`);
  return ms;
}

/** Audience sizes follow the scale; traffic volumes follow the scale and the window length (given per 90 days). */
export function sizesFor(scale: number, days: number): Sizes {
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
export function hashUnit(seed: number, ...parts: (string | number)[]): number {
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
export function uniqueDraw<T>(taken: Set<T>, draw: (attempt: number) => T): T {
  for (let attempt = 0; ; attempt++) {
    const value = draw(attempt);
    if (!taken.has(value)) {
      taken.add(value);
      return value;
    }
  }
}

export interface TrackedPodcast {
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

export function slugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function trackedPodcasts(seed: number, windowStart: number, windowEnd: number, calendarOffset: number): TrackedPodcast[] {
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
    const lastRelease =
      lastDayStart -
      daysSinceReleaseDay(lastDayStart + calendarOffset, cadenceDays, u('weekday'), u('phase')) * DAY +
      (4 + Math.floor(u('hour') * 8)) * 3600 +
      Math.floor(u('minute') * 4) * 900;
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
      id: uniqueDraw(ids, (a) =>
        String(u('old', a) < 0.3 ? 200_000_000 + Math.floor(u('id', a) * 790_000_000) : 1_750_000_000 + Math.floor(u('id', a) * 40_000_000)),
      ),
      token: uniqueDraw(tokens, (a) =>
        Math.floor(u('token', a) * 4294967296)
          .toString(16)
          .padStart(8, '0'),
      ),
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
export function daysSinceReleaseDay(lastDayStart: number, cadenceDays: number, weekdayDraw: number, phaseDraw: number): number {
  if (cadenceDays < 7) return Math.floor(phaseDraw * cadenceDays);
  const weekdayShares = [2, 3, 3, 3, 1]; // Monday..Friday
  const weekday = cumulative(weekdayShares).findIndex((c) => c > weekdayDraw);
  const lastWeekday = (lastDayStart / DAY + 3) % 7; // 1970-01-01 was a Thursday; 0 = Monday
  return ((lastWeekday - weekday + 7) % 7) + (cadenceDays === 14 && phaseDraw < 0.5 ? 7 : 0);
}

export interface SmartLink {
  url: string;
  /** 1-based index into the tracked podcasts. */
  podcast: number;
  created: number;
  /** Show links collect views all along; episode links mostly right after release. */
  isShowLink: boolean;
  weight: number;
}

/** Five links per show: one for the show and one per latest four episodes. */
export function smartLinks(seed: number, podcasts: TrackedPodcast[], windowStart: number): SmartLink[] {
  const ids = new Set<string>();
  const shortId = (key: string) =>
    uniqueDraw(
      ids,
      (a) =>
        Math.floor(hashUnit(seed, 'link', key, a) * 36 ** 4)
          .toString(36)
          .padStart(4, '0') +
        Math.floor(hashUnit(seed, 'link2', key, a) * 36 ** 3)
          .toString(36)
          .padStart(3, '0'),
    );
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

export interface GeoBlock {
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
export function geoBlocks(): GeoBlock[] {
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

export interface Chart {
  platform: 'apple' | 'spotify';
  country: Country;
  /** 1-based index into CATEGORIES. */
  category: number;
  depth: number;
}

/** One chart per platform, country and category; more countries as the scale grows. */
export function charts(scale: number): Chart[] {
  const countries = (codes: string[], atScaleOne: number) =>
    codes.slice(0, Math.min(codes.length, Math.max(1, Math.round(atScaleOne * scale)))).map((code) => COUNTRIES.find((c) => c.code === code) as Country);
  const categoryIndex = (name: string) => CATEGORIES.findIndex((c) => c.name === name) + 1;
  return [
    ...countries(APPLE_CHART_COUNTRIES, 8).flatMap((country) =>
      CATEGORIES.map((c) => ({ platform: 'apple' as const, country, category: categoryIndex(c.name), depth: CHART_DEPTH.apple })),
    ),
    ...countries(SPOTIFY_CHART_COUNTRIES, 4).flatMap((country) =>
      SPOTIFY_CATEGORIES.map((name) => ({ platform: 'spotify' as const, country, category: categoryIndex(name), depth: CHART_DEPTH.spotify })),
    ),
  ];
}
