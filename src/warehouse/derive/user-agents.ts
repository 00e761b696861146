import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sqlLiteral, type Literal } from './sql';

/**
 * User-agent classification from the OPAWG podcast user-agent list
 * (opawg/user-agents-v2), run inside ClickHouse: each list's patterns become
 * one constant array, and `multiMatchAllIndices` (Hyperscan) finds every
 * entry that matches; the smallest index is the list's first match, the
 * README's rule. The files are read when a statement is built, so updating
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

/** WITH constants the classification expressions read. */
export function userAgentConstants(lists: UserAgentLists): Record<string, string> {
  // Typed, so that an empty list (no list found) is still an Array(String) to multiMatchAllIndices.
  const column = (list: UserAgentList, pick: (e: UserAgentEntry) => Literal, type = 'String') => `CAST(${sqlLiteral(lists[list].map(pick))} AS Array(${type}))`;
  return {
    ua_bot_patterns: column('bots', (e) => e.pattern),
    ua_bot_names: column('bots', (e) => e.name),
    ua_app_patterns: column('apps', (e) => e.pattern),
    ua_app_names: column('apps', (e) => e.name),
    ua_library_patterns: column('libraries', (e) => e.pattern),
    ua_library_names: column('libraries', (e) => e.name),
    ua_library_is_bot: column('libraries', (e) => e.category === 'bot', 'Bool'),
    ua_browser_patterns: column('browsers', (e) => e.pattern),
    ua_browser_names: column('browsers', (e) => e.name),
    ua_device_patterns: column('devices', (e) => e.pattern),
    ua_device_names: column('devices', (e) => e.name),
    ua_device_categories: column('devices', (e) => e.category ?? ''),
    ua_device_os: column('devices', (e) => DEVICE_OS[e.name] ?? 'Other'),
    ua_referrer_patterns: column('referrers', (e) => e.pattern),
    ua_referrer_names: column('referrers', (e) => e.name),
  };
}

/** 0 when no pattern matches, else the 1-based index of the first entry that does. */
function firstMatch(ua: string, patterns: string): string {
  return `arrayMin(arrayPushBack(multiMatchAllIndices(${ua}, ${patterns}), 0x7FFFFFFF))`;
}

/**
 * Columns (as `expr AS name`) classifying the string column `ua` (newlines
 * removed first, as the list's README says), for a SELECT over a set of
 * distinct user agents: ua_type (bot, bot-library, app, library, browser or
 * unknown), ua_name (entry name, else the raw user agent), device_name,
 * device_type (the device entry's category) and os_name.
 */
export function classifyColumns(ua: string): string {
  const clean = `replaceAll(replaceAll(${ua}, '\\n', ''), '\\r', '')`;
  const none = '0x7FFFFFFF';
  return `
    ${clean} AS ua_clean,
    ${firstMatch('ua_clean', 'ua_bot_patterns')} AS ua_bot_i,
    if(ua_bot_i < ${none}, ${none}, ${firstMatch('ua_clean', 'ua_app_patterns')}) AS ua_app_i,
    if(ua_bot_i < ${none} OR ua_app_i < ${none}, ${none}, ${firstMatch('ua_clean', 'ua_library_patterns')}) AS ua_library_i,
    if(ua_bot_i < ${none} OR ua_app_i < ${none} OR ua_library_i < ${none}, ${none}, ${firstMatch('ua_clean', 'ua_browser_patterns')}) AS ua_browser_i,
    multiIf(
      ua_bot_i < ${none}, 'bot',
      ua_app_i < ${none}, 'app',
      ua_library_i < ${none}, if(ua_library_is_bot[ua_library_i], 'bot-library', 'library'),
      ua_browser_i < ${none}, 'browser',
      'unknown') AS ua_type,
    multiIf(
      ua_bot_i < ${none}, ua_bot_names[ua_bot_i],
      ua_app_i < ${none}, ua_app_names[ua_app_i],
      ua_library_i < ${none}, ua_library_names[ua_library_i],
      ua_browser_i < ${none}, ua_browser_names[ua_browser_i],
      ua_clean) AS ua_name,
    if(ua_type = 'bot', ${none}, ${firstMatch('ua_clean', 'ua_device_patterns')}) AS ua_device_i,
    if(ua_device_i < ${none}, ua_device_names[ua_device_i], '') AS device_name,
    if(ua_device_i < ${none}, ua_device_categories[ua_device_i], 'Other') AS device_type,
    if(ua_device_i < ${none}, ua_device_os[ua_device_i], 'Other') AS os_name`;
}

/**
 * OP3's bot types that a single request shows (bots.ts in the order of
 * ../shared/conformance/op3/bot-rules.json, except its 54 exact user agents
 * and rules 8–11, which need OP3's own lists and tags), plus IAB's Apple Watch
 * duplicates; '' when none applies. Needs classifyColumns' names and a
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
export function refererListNameSql(referer: string): string {
  return `arrayElement(arrayPushBack(ua_referrer_names, ''), least(${firstMatch(`replaceAll(${referer}, '\\n', '')`, 'ua_referrer_patterns')}, length(ua_referrer_names) + 1))`;
}
