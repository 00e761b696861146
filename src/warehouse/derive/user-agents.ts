import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { sqlLiteral } from './sql';

/**
 * User-agent classification from the OPAWG podcast user-agent list
 * (opawg/user-agents-v2), run inside ClickHouse: the bots', apps',
 * libraries' and browsers' patterns, in that order, are scanned by
 * `multiMatchAllIndices` (Hyperscan) in sets of PATTERNS_PER_SET, and the
 * smallest index that matches is the first match, the README's rule. The
 * files are read when a statement is built, so updating
 * the list is copying a newer `src/` folder over USER_AGENTS_DIR and running
 * `npm run warehouse -- derive` (downloads already derived keep their old
 * classification until then).
 */
/**
 * `../shared/conformance/user-agents-v2/src` beside the repository (the
 * same path from src/ and dist/), or beside the folder holding it when the
 * repository is one of several work trees there.
 */
export const DEFAULT_USER_AGENTS_DIR = besideRepository(path.join('shared', 'conformance', 'user-agents-v2', 'src'));

function besideRepository(relative: string): string {
  const repository = path.resolve(__dirname, '..', '..', '..');
  const candidates = [path.resolve(repository, '..', relative), path.resolve(repository, '..', '..', relative)];
  return candidates.find((dir) => existsSync(dir)) ?? candidates[0];
}

export const USER_AGENT_LISTS = ['bots', 'apps', 'libraries', 'browsers', 'devices', 'referrers'] as const;
export type UserAgentList = (typeof USER_AGENT_LISTS)[number];

export interface UserAgentEntry {
  name: string;
  pattern: string;
  category?: string;
  examples?: string[];
}

export type UserAgentLists = Record<UserAgentList, UserAgentEntry[]>;

export class UserAgentListError extends Error {}

export function readUserAgentLists(dir: string): UserAgentLists {
  const lists = {} as UserAgentLists;
  for (const list of USER_AGENT_LISTS) {
    const file = path.join(dir, `${list}.json`);
    if (!existsSync(file)) {
      throw new UserAgentListError(`USER_AGENTS_DIR ${dir} has no ${list}.json: expected the src/ folder of opawg/user-agents-v2`);
    }
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { entries?: UserAgentEntry[] };
    if (!Array.isArray(parsed.entries) || parsed.entries.some((e) => typeof e.name !== 'string' || typeof e.pattern !== 'string')) {
      throw new UserAgentListError(`${file}: expected {"entries": [{"name", "pattern", …}]}`);
    }
    lists[list] = parsed.entries;
  }
  return lists;
}

/**
 * The lists for a derivation. The OPAWG list is not published as a package, so a
 * clone without `../shared` beside it has none at the default place: then user
 * agents stay unclassified (no bot dropped, no app named) and a warning says so,
 * rather than the service not starting. A USER_AGENTS_DIR set by hand must hold
 * the list.
 */
export function loadUserAgentLists(dir: string, warn: (message: string, fields: Record<string, unknown>) => void): UserAgentLists {
  if (dir === path.resolve(DEFAULT_USER_AGENTS_DIR) && !existsSync(dir)) {
    warn(
      'user-agent list not found: downloads are derived without classifying user agents (no bot filtering, no app names); set USER_AGENTS_DIR to the src/ folder of opawg/user-agents-v2',
      { USER_AGENTS_DIR: dir },
    );
    return Object.fromEntries(USER_AGENT_LISTS.map((list) => [list, []])) as unknown as UserAgentLists;
  }
  return readUserAgentLists(dir);
}

/**
 * The operating system each device entry implies: the list names devices,
 * not systems, and these names say which system runs on them. Devices the
 * table does not name leave os_name 'Other'.
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

/**
 * Bot words OP3 applies to user agents no list entry matches ("unknown-bot",
 * its bots.ts rule 3), and the Apple Watch duplicates IAB v2.3 5.5.2 item 7
 * names (UAs starting `atc/` and containing `watchOS`, or containing
 * `(null)/(null) watchOS`).
 */
const UNKNOWN_BOT_PATTERN = '(?i)bot|crawler|spider';
const APPLE_WATCH_PATTERN = '^atc/.*watchOS|\\(null\\)/\\(null\\) watchOS';

/**
 * The entries a user agent is classified by, in the README's order of
 * files (bots, apps, libraries, browsers), each with the type it gives.
 */
function typedEntries(lists: UserAgentLists): { entry: UserAgentEntry; type: string }[] {
  return [
    ...lists.bots.map((entry) => ({ entry, type: 'bot' })),
    ...lists.apps.map((entry) => ({ entry, type: 'app' })),
    ...lists.libraries.map((entry) => ({ entry, type: entry.category === 'bot' ? 'bot-library' : 'library' })),
    ...lists.browsers.map((entry) => ({ entry, type: 'browser' })),
  ];
}

/** WITH constants the classification expressions read: what an entry gives, by its 1-based index (typedEntries' for user agents). */
export function userAgentConstants(lists: UserAgentLists): Record<string, string> {
  // Typed, so that an empty list (no list found) is still an Array(String).
  const column = (values: string[]) => `CAST(${sqlLiteral(values)} AS Array(String))`;
  const typed = typedEntries(lists);
  return {
    ua_entry_types: column(typed.map((t) => t.type)),
    ua_entry_names: column(typed.map((t) => t.entry.name)),
    ua_device_names: column(lists.devices.map((e) => e.name)),
    ua_device_categories: column(lists.devices.map((e) => e.category ?? '')),
    ua_device_os: column(lists.devices.map((e) => DEVICE_OS[e.name] ?? 'Other')),
    ua_referrer_names: column(lists.referrers.map((e) => e.name)),
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

/** The pattern lists a classification matches: the entries' (typedEntries), the devices', the referrers'. */
function matchedLists(lists: UserAgentLists): string[][] {
  return [typedEntries(lists).map((t) => t.entry.pattern), lists.devices.map((e) => e.pattern), lists.referrers.map((e) => e.pattern)];
}

/**
 * Statements compiling every pattern set a classification scans, each on
 * its own: run before a process's first classifying statement where other
 * statements wait between statements (an import into the running service),
 * a few tenths of a second each the first time, milliseconds after.
 */
export function compileUserAgentPatternsSql(lists: UserAgentLists): string[] {
  return matchedLists(lists).flatMap((patterns) => patternSets(patterns).map((set) => `SELECT length(multiMatchAllIndices('', ${sqlLiteral(set.patterns)}))`));
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
export async function compileUserAgentPatterns(client: ClickHouseClient, lists: UserAgentLists): Promise<void> {
  for (const query of compileUserAgentPatternsSql(lists)) {
    if (compiledSets.has(query)) continue;
    await (await client.query({ query, format: 'JSONEachRow' })).json();
    compiledSets.add(query);
  }
}

/** NONE when no pattern matches, else the 1-based index of the first that does. */
function firstMatch(value: string, patterns: string[]): string {
  const scans = patternSets(patterns).map(
    (set) => `arrayMin(arrayPushBack(multiMatchAllIndices(${value}, ${sqlLiteral(set.patterns)}), ${NONE_INDEX - set.offset})) + ${set.offset}`,
  );
  if (scans.length === 0) return NONE;
  return scans.length === 1 ? scans[0] : `least(${scans.join(', ')})`;
}

/**
 * `source`'s rows with the classification of its String column `ua`
 * (newlines removed first, as the list's README says): ua_clean, ua_type
 * (bot, bot-library, app, library, browser or unknown), ua_name (entry
 * name, else the cleaned user agent), device_name, device_type (the device
 * entry's category) and os_name. Meant for a set of distinct user agents.
 * The first match over all four files (the first bot, else the first app,
 * …) is a column of an inner SELECT: the analyser copies an alias's
 * expression into every place that reads it, and a scan per file, each
 * read by the next, grew the query tree with every set the lists are cut in.
 */
export function classifiedSql(source: string, ua: string, lists: UserAgentLists): string {
  return `
    SELECT *,
      if(ua_entry_i < ${NONE}, ua_entry_types[ua_entry_i], 'unknown') AS ua_type,
      if(ua_entry_i < ${NONE}, ua_entry_names[ua_entry_i], ua_clean) AS ua_name,
      if(ua_type = 'bot', ${NONE}, ua_device_match) AS ua_device_i,
      if(ua_device_i < ${NONE}, ua_device_names[ua_device_i], '') AS device_name,
      if(ua_device_i < ${NONE}, ua_device_categories[ua_device_i], 'Other') AS device_type,
      if(ua_device_i < ${NONE}, ua_device_os[ua_device_i], 'Other') AS os_name
    FROM (
      SELECT *, ${firstMatch('ua_clean', matchedLists(lists)[0])} AS ua_entry_i, ${firstMatch('ua_clean', matchedLists(lists)[1])} AS ua_device_match
      FROM (SELECT *, ${cleanSql(ua)} AS ua_clean FROM (${source}))
    )`;
}

/**
 * classifiedSql's ua_name as one expression over its ua_clean, for a row
 * that needs it (a column, not a SELECT of its own: it is evaluated only
 * where asked). Reads userAgentConstants.
 */
export function uaNameSql(uaClean: string, lists: UserAgentLists): string {
  return `arrayElement(arrayPushBack(ua_entry_names, ${uaClean}), least(${firstMatch(uaClean, matchedLists(lists)[0])}, length(ua_entry_names) + 1))`;
}

/** A user agent as the list's README matches it: without newlines. */
export function cleanSql(ua: string): string {
  return `replaceAll(replaceAll(${ua}, '\\n', ''), '\\r', '')`;
}

/**
 * OP3's bot types that a single request shows (bots.ts in the order of
 * ../shared/conformance/op3/bot-rules.json, except its 54 exact user agents
 * and rules 8–11, which need OP3's own lists and tags), plus IAB's Apple Watch
 * duplicates; '' when none applies. Needs classifiedSql's columns and a
 * `referer` column.
 */
export function botTypeSql(): string {
  return `multiIf(
      ua_type = 'bot', 'bot',
      ua_type = 'bot-library', 'bot-lib',
      ua_type = 'unknown' AND match(ua_clean, ${sqlLiteral(UNKNOWN_BOT_PATTERN)}), 'unknown-bot',
      ua_clean = '', 'no-ua',
      ua_type = 'browser' AND ua_name = 'Opera' AND device_type = 'computer' AND referer_name = '', 'opera-desktop-sans-referrer',
      ua_type = 'browser' AND referer_name = 'Podverse', 'podverse-web-preload',
      match(ua_clean, ${sqlLiteral(APPLE_WATCH_PATTERN)}), 'apple-watch',
      '')`;
}

/** The referrer entry's name for a referer, '' when none matches; it applies to browsers only (the only type the list names referrers for). */
export function refererListNameSql(referer: string, lists: UserAgentLists): string {
  return `arrayElement(arrayPushBack(ua_referrer_names, ''), least(${firstMatch(`replaceAll(${referer}, '\\n', '')`, matchedLists(lists)[2])}, length(ua_referrer_names) + 1))`;
}
