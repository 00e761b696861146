import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { list as isbotPatterns } from 'isbot';
import { WarehouseSetupError } from '../data-dir';
import builtInPatterns from './user-agent-patterns.json';
import { sqlLiteral } from '../sql';

/**
 * User-agent classification, run inside ClickHouse: the agents' patterns, in
 * the set's order, are scanned by `multiMatchAllIndices` (Hyperscan) in sets
 * of PATTERNS_PER_SET, and the smallest index that matches is the first
 * match. The set is the project's own (user-agent-patterns.json, see
 * docs/reference/downloads.md), or the OPAWG list (opawg/user-agents-v2) when
 * USER_AGENTS_DIR names its `src/` folder, read once by each process that
 * imports or derives (the service at start-up, each CLI run): a changed set
 * applies to what is imported after, and `npm run warehouse -- derive`
 * classifies the stored requests and their downloads again (deriveAll).
 */

/** What an agent entry is: OP3's agent types (a bot-library is an HTTP client library OP3 counts as a bot). */
export const AGENT_TYPES = ['bot', 'app', 'library', 'bot-library', 'browser'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** Each entry's pattern is a regular expression that Hyperscan and RE2 both run (no lookaround, no backreference). */
export interface AgentEntry {
  type: AgentType;
  name: string;
  pattern: string;
}

export interface DeviceEntry {
  name: string;
  /** mobile, computer, smart_speaker, smart_tv, watch or auto: device_type. */
  category: string;
  /** os_name. */
  os: string;
  pattern: string;
}

export interface ReferrerEntry {
  name: string;
  pattern: string;
}

/** A classification's entries, each list in first-match order. */
export interface UserAgentSet {
  agents: AgentEntry[];
  devices: DeviceEntry[];
  referrers: ReferrerEntry[];
}

/** A USER_AGENTS_DIR that does not hold the list: one line for the operator, as the warehouse's other set-up failures. */
export class UserAgentListError extends WarehouseSetupError {}

/** The set user-agent-patterns.json holds: each entry's `match` alternatives are one pattern. */
export const BUILT_IN_USER_AGENTS: UserAgentSet = {
  agents: builtInPatterns.agents.map((e) => ({ type: e.type as AgentType, name: e.name, pattern: e.match.join('|') })),
  devices: builtInPatterns.devices.map((e) => ({ name: e.name, category: e.category, os: e.os, pattern: e.match.join('|') })),
  referrers: builtInPatterns.referrers.map((e) => ({ name: e.name, pattern: e.match.join('|') })),
};

/** The files of the OPAWG list's `src/` folder. */
export const USER_AGENT_LISTS = ['bots', 'apps', 'libraries', 'browsers', 'devices', 'referrers'] as const;
export type UserAgentList = (typeof USER_AGENT_LISTS)[number];

export interface UserAgentListEntry {
  name: string;
  pattern: string;
  category?: string;
  examples?: string[];
}

export type UserAgentLists = Record<UserAgentList, UserAgentListEntry[]>;

/** The OPAWG list's files, as they are. */
export function readUserAgentLists(dir: string): UserAgentLists {
  const lists = {} as UserAgentLists;
  for (const list of USER_AGENT_LISTS) {
    const file = path.join(dir, `${list}.json`);
    if (!existsSync(file)) {
      throw new UserAgentListError(`USER_AGENTS_DIR ${dir} has no ${list}.json: expected the src/ folder of opawg/user-agents-v2`);
    }
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { entries?: UserAgentListEntry[] };
    if (!Array.isArray(parsed.entries) || parsed.entries.some((e) => typeof e.name !== 'string' || typeof e.pattern !== 'string')) {
      throw new UserAgentListError(`${file}: expected {"entries": [{"name", "pattern", …}]}`);
    }
    lists[list] = parsed.entries;
  }
  return lists;
}

/**
 * The operating system each OPAWG device entry implies: the list names
 * devices, not systems. Devices the table does not name give os_name 'Other'.
 */
const DEVICE_OS: Record<string, string> = {
  'Apple HomePod': 'audioOS',
  'Apple iPad': 'iOS',
  'Apple TV': 'tvOS',
  'Apple iPhone': 'iOS',
  'Apple Watch': 'watchOS',
  'Apple iPod': 'iOS',
  'Apple Computer': 'macOS',
  'Google Chromebook': 'ChromeOS',
  'Android Tablet': 'Android',
  'Android Phone': 'Android',
  'Windows Computer': 'Windows',
};

/** The OPAWG list as a set: its files in the order its README matches them (bots, apps, libraries, browsers). */
export function userAgentSetOf(lists: UserAgentLists): UserAgentSet {
  return {
    agents: [
      ...lists.bots.map((e) => ({ type: 'bot' as const, name: e.name, pattern: e.pattern })),
      ...lists.apps.map((e) => ({ type: 'app' as const, name: e.name, pattern: e.pattern })),
      ...lists.libraries.map((e) => ({ type: e.category === 'bot' ? ('bot-library' as const) : ('library' as const), name: e.name, pattern: e.pattern })),
      ...lists.browsers.map((e) => ({ type: 'browser' as const, name: e.name, pattern: e.pattern })),
    ],
    devices: lists.devices.map((e) => ({ name: e.name, category: e.category ?? '', os: DEVICE_OS[e.name] ?? 'Other', pattern: e.pattern })),
    referrers: lists.referrers.map((e) => ({ name: e.name, pattern: e.pattern })),
  };
}

/** The set a derivation classifies by: the OPAWG list in USER_AGENTS_DIR when it is set, else the built-in one. */
export function loadUserAgents(dir: string | undefined): UserAgentSet {
  return dir === undefined ? BUILT_IN_USER_AGENTS : userAgentSetOf(readUserAgentLists(dir));
}

/**
 * isbot's patterns that flag podcast apps' and players' own agents (on the
 * OPAWG list's app, library, browser and device examples: bare product
 * tokens, words such as "download", "feed" or "rss", long agents without
 * spaces): isbot is written for web traffic, where such agents are scripts.
 * The oracle test fails naming any kept pattern that flags one.
 */
const ISBOT_LEFT_OUT = new Set([
  '\\.com\\b',
  '^[\\w \\.\\-\\(?:\\):%]+(?:/v?\\d+(?:\\.\\d+)?(?:\\.\\d{1,10})*?)?(?:,|$)',
  '^[\\w\\-]+/[\\w]+$',
  '^[^ ]{50,}$',
  '^\\d+\\b',
  '^\\w+/[\\w\\(\\)]*$',
  '^avsdevicesdk/',
  '^client/',
  '^downcast/',
  '^duckduckgo',
  '^facebook',
  '^read',
  '^reed',
  '^rss',
  '^whatsapp',
  '^yandex',
  'agent\\b',
  'archive',
  'catch',
  'download',
  'feed',
  'grab',
  'parser',
  'proxy',
  'rss\\b',
  'server',
  'url',
]);

/** isbot's patterns this classification runs: less those above, and those with lookaround, which neither RE2 nor Hyperscan runs. */
export const ISBOT_PATTERNS = isbotPatterns.filter((p) => !/\(\?<?[=!]/.test(p) && !ISBOT_LEFT_OUT.has(p));

/**
 * The bot words of agents no entry names: OP3's ("unknown-bot", its bots.ts
 * rule 3: bot, crawler, spider; it covers isbot's own `bot` word, one of those
 * with lookaround) and isbot's.
 */
const GENERIC_BOT_PATTERN = `(?i)bot|crawler|spider|${ISBOT_PATTERNS.join('|')}`;

/**
 * The Apple Watch duplicates IAB v2.3 5.5.2 item 7 names (UAs starting
 * `atc/` and containing `watchOS`, or containing `(null)/(null) watchOS`).
 */
const APPLE_WATCH_PATTERN = '^atc/.*watchOS|\\(null\\)/\\(null\\) watchOS';

/** WITH constants the classification expressions read: what an entry gives, by its 1-based index. */
export function userAgentConstants(set: UserAgentSet): Record<string, string> {
  // Typed, so that an empty list is still an Array(String).
  const column = (values: string[]) => `CAST(${sqlLiteral(values)} AS Array(String))`;
  return {
    ua_entry_types: column(set.agents.map((e) => e.type)),
    ua_entry_names: column(set.agents.map((e) => e.name)),
    ua_device_names: column(set.devices.map((e) => e.name)),
    ua_device_categories: column(set.devices.map((e) => e.category)),
    ua_device_os: column(set.devices.map((e) => e.os)),
    ua_referrer_names: column(set.referrers.map((e) => e.name)),
  };
}

const NONE_INDEX = 0x7fffffff;
const NONE = String(NONE_INDEX);

/**
 * Patterns one Hyperscan database holds at most. ClickHouse compiles a
 * pattern array the first time a process scans with it and keeps it; the
 * lists whole compiled in the first classifying statement, 1.6–6.5 s on
 * chDB's one statement lane (the apps alone 0.9–3.4 s). Sets of 100 compile
 * in 0.1–0.2 s each (12 sets; load average 2–9), so compileUserAgentPatternsSql
 * runs them as statements of their own. Smaller sets did worse: 25 or 50 to
 * a set, some sets pushed others out of ClickHouse's cache (it keeps one per
 * hash bucket), which compiled them again in every statement, and each set
 * scanned costs a statement about 10 ms even when compiled.
 */
const PATTERNS_PER_SET = 100;

/** The pattern sets firstMatch scans for these patterns, each with the index of its first pattern less one. */
function patternSets(patterns: string[]): { offset: number; patterns: string[] }[] {
  const sets = [];
  for (let offset = 0; offset < patterns.length; offset += PATTERNS_PER_SET) sets.push({ offset, patterns: patterns.slice(offset, offset + PATTERNS_PER_SET) });
  return sets;
}

/** The pattern lists a classification matches: the agents', the devices', the referrers'. */
function matchedLists(set: UserAgentSet): string[][] {
  return [set.agents.map((e) => e.pattern), set.devices.map((e) => e.pattern), set.referrers.map((e) => e.pattern)];
}

/**
 * Statements compiling every pattern set a classification scans, each on
 * its own: run before a process's first classifying statement where other
 * statements wait between statements (an import into the running service),
 * a few tenths of a second each the first time, milliseconds after.
 */
export function compileUserAgentPatternsSql(set: UserAgentSet): string[] {
  return matchedLists(set).flatMap((patterns) => patternSets(patterns).map((s) => `SELECT length(multiMatchAllIndices('', ${sqlLiteral(s.patterns)}))`));
}

/** The compile statements this process has run (compileUserAgentPatterns). */
const compiledSets = new Set<string>();

/**
 * Runs compileUserAgentPatternsSql's statements that this process has not
 * run yet. The compiled sets stay in ClickHouse's cache for the process
 * (chDB's engine is in it; closing a chDB session and opening another keeps
 * them), so running them again compiled nothing, yet each still cost 3–10
 * ms on the lane: an import ran all twelve twice (before validating, before
 * deriving), 24 of a 9-row import's 61 statements, about 100 ms of its
 * 700 ms after the first import of a process. On a ClickHouse server the
 * cache is the server's: one restarted under a running service compiles in
 * the next classifying statement, which waits for no other there.
 */
export async function compileUserAgentPatterns(client: ClickHouseClient, set: UserAgentSet): Promise<void> {
  for (const query of compileUserAgentPatternsSql(set)) {
    if (compiledSets.has(query)) continue;
    await (await client.query({ query, format: 'JSONEachRow' })).json();
    compiledSets.add(query);
  }
}

/** NONE when no pattern matches, else the 1-based index of the first that does. */
function firstMatch(value: string, patterns: string[]): string {
  const scans = patternSets(patterns).map(
    (s) => `arrayMin(arrayPushBack(multiMatchAllIndices(${value}, ${sqlLiteral(s.patterns)}), ${NONE_INDEX - s.offset})) + ${s.offset}`,
  );
  if (scans.length === 0) return NONE;
  return scans.length === 1 ? scans[0] : `least(${scans.join(', ')})`;
}

/**
 * `source`'s rows with the classification of its String column `ua`
 * (newlines removed first, as the OPAWG list's README says): ua_clean,
 * ua_type (bot, bot-library, app, library, browser or unknown), ua_name
 * (entry name, else the cleaned user agent), device_name, device_type (the
 * device entry's category) and os_name, ua_generic_bot (an unknown agent
 * with a bot word, GENERIC_BOT_PATTERN) and ua_apple_watch. Meant for a set
 * of distinct user agents: each match runs once per agent, not per request.
 * The first match over all entries is a column of an inner SELECT: the
 * analyser copies an alias's expression into every place that reads it, and
 * a scan per file, each read by the next, grew the query tree with every set
 * the lists are cut in.
 */
export function classifiedSql(source: string, ua: string, set: UserAgentSet): string {
  return `
    SELECT *,
      if(ua_entry_i < ${NONE}, ua_entry_types[ua_entry_i], 'unknown') AS ua_type,
      if(ua_entry_i < ${NONE}, ua_entry_names[ua_entry_i], ua_clean) AS ua_name,
      if(ua_type = 'bot', ${NONE}, ua_device_match) AS ua_device_i,
      if(ua_device_i < ${NONE}, ua_device_names[ua_device_i], '') AS device_name,
      if(ua_device_i < ${NONE}, ua_device_categories[ua_device_i], 'Other') AS device_type,
      if(ua_device_i < ${NONE}, ua_device_os[ua_device_i], 'Other') AS os_name,
      ua_type = 'unknown' AND match(ua_clean, ${sqlLiteral(GENERIC_BOT_PATTERN)}) AS ua_generic_bot,
      match(ua_clean, ${sqlLiteral(APPLE_WATCH_PATTERN)}) AS ua_apple_watch
    FROM (
      SELECT *, ${firstMatch('ua_clean', matchedLists(set)[0])} AS ua_entry_i, ${firstMatch('ua_clean', matchedLists(set)[1])} AS ua_device_match
      FROM (SELECT *, ${cleanSql(ua)} AS ua_clean FROM (${source}))
    )`;
}

/**
 * classifiedSql's ua_name as one expression over its ua_clean, for a row
 * that needs it (a column, not a SELECT of its own: it is evaluated only
 * where asked). Reads userAgentConstants.
 */
export function uaNameSql(uaClean: string, set: UserAgentSet): string {
  return `arrayElement(arrayPushBack(ua_entry_names, ${uaClean}), least(${firstMatch(uaClean, matchedLists(set)[0])}, length(ua_entry_names) + 1))`;
}

/** A user agent as the classification matches it: without newlines. */
export function cleanSql(ua: string): string {
  return `replaceAll(replaceAll(${ua}, '\\n', ''), '\\r', '')`;
}

/**
 * OP3's bot types that a single request shows (bots.ts in the order of
 * ../shared/conformance/op3/bot-rules.json, except its 54 exact user agents
 * and rules 8–11, which need OP3's own lists and tags; its rule 3 with
 * isbot's words too), plus IAB's Apple Watch duplicates; '' when none
 * applies. Needs classifiedSql's columns, `referer` and `referer_name`
 * (refererListNameSql's, for browsers). OP3 names a browser's referrer by
 * the list, else by the Referer's registrable domain: "no referrer" is a
 * Referer without one.
 */
export function botTypeSql(): string {
  return `multiIf(
      ua_type = 'bot', 'bot',
      ua_type = 'bot-library', 'bot-lib',
      ua_generic_bot, 'unknown-bot',
      ua_clean = '', 'no-ua',
      ua_type = 'browser' AND ua_name = 'Opera' AND device_type = 'computer' AND cutToFirstSignificantSubdomain(referer) = '', 'opera-desktop-sans-referrer',
      ua_type = 'browser' AND referer_name = 'Podverse', 'podverse-web-preload',
      ua_apple_watch, 'apple-watch',
      '')`;
}

/** The referrer entry's name for a referer, '' when none matches; it applies to browsers only (the only type the list names referrers for). */
export function refererListNameSql(referer: string, set: UserAgentSet): string {
  return `arrayElement(arrayPushBack(ua_referrer_names, ''), least(${firstMatch(`replaceAll(${referer}, '\\n', '')`, matchedLists(set)[2])}, length(ua_referrer_names) + 1))`;
}
