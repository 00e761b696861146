import { readFileSync } from 'node:fs';
import path from 'node:path';
import { withClause } from '../../../src/warehouse/sql';
import { BUILT_IN_USER_AGENTS, classifiedSql, ISBOT_PATTERNS, userAgentConstants, type UserAgentListEntry } from '../../../src/warehouse/derive/user-agents';
import { BLACKLISTED_AGENTS, BOT_AGENTS, LISTENER_AGENTS } from '../../../src/warehouse/reference-data';
import { openOracle, type Oracle } from '../support/service';
import { OPAWG_LISTS } from './support';

/**
 * The built-in pattern set (src/warehouse/derive/user-agent-patterns.json)
 * against the OPAWG list (user-agents-v2 at 8008a31, read from
 * ../shared/conformance here, never from the repository), classified by the
 * warehouse's own expression in chDB. What each example should be is worked
 * out in this file: the list's patterns as JavaScript regular expressions,
 * walked in the README's order (bots, apps, libraries, browsers; the first
 * entry that matches anywhere in the agent without newlines). Every example
 * the set classifies otherwise is listed in docs/reference/downloads.md, and that
 * table is read here: a new miss, or a listed one now right, fails.
 */
let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

const FILES = [
  ['bots', 'bot'],
  ['apps', 'app'],
  ['libraries', 'library'],
  ['browsers', 'browser'],
] as const;

/** An entry's type as OP3 names it: the file's, a library of category bot a bot-library. */
function typeOf(file: (typeof FILES)[number], entry: UserAgentListEntry): string {
  return file[1] === 'library' && entry.category === 'bot' ? 'bot-library' : file[1];
}

const WALK = FILES.flatMap((file) => OPAWG_LISTS[file[0]].map((entry) => ({ entry, type: typeOf(file, entry), re: new RegExp(entry.pattern) })));

/** The list's answer for an agent: `type: name`, or `unknown`. */
function listAnswer(ua: string): string {
  const clean = ua.replace(/[\r\n]/g, '');
  const hit = WALK.find((w) => w.re.test(clean));
  return hit ? `${hit.type}: ${hit.entry.name}` : 'unknown';
}

interface Example {
  ua: string;
  /** The entry and which of its examples, as the docs' table names it: `app: Overcast | 2 of 5`. */
  label: string;
  expected: string;
}

const EXAMPLES: Example[] = FILES.flatMap((file) =>
  OPAWG_LISTS[file[0]].flatMap((entry) =>
    (entry.examples ?? []).map((ua, i, all) => ({ ua, label: `${typeOf(file, entry)}: ${entry.name} | ${i + 1} of ${all.length}`, expected: listAnswer(ua) })),
  ),
);

function literal(ua: string): string {
  return `'${ua.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
}

/** The built-in set's answer for each agent, from the warehouse's classification. */
async function classify(agents: string[]): Promise<Map<string, { answer: string; device: string; generic: boolean }>> {
  const rows = await oracle.rows<{ ua: string; ua_type: string; ua_name: string; device_name: string; ua_generic_bot: number | boolean }>(`
    ${withClause(userAgentConstants(BUILT_IN_USER_AGENTS))}
    SELECT ua, ua_type, ua_name, device_name, ua_generic_bot
    FROM (${classifiedSql(`SELECT arrayJoin([${agents.map(literal).join(', ')}]) AS ua`, 'ua', BUILT_IN_USER_AGENTS)})`);
  return new Map(
    rows.map((r) => [
      r.ua,
      { answer: r.ua_type === 'unknown' ? 'unknown' : `${r.ua_type}: ${r.ua_name}`, device: r.device_name, generic: Boolean(Number(r.ua_generic_bot)) },
    ]),
  );
}

/** docs/reference/downloads.md's table of the examples the built-in set classifies otherwise: `label → what we give`. */
function documentedMisses(): string[] {
  const docs = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'downloads.md'), 'utf8');
  const start = docs.indexOf('<!-- built-in user-agent misses -->');
  const end = docs.indexOf('<!-- end of built-in user-agent misses -->');
  expect(start).toBeGreaterThan(0);
  return docs
    .slice(start, end)
    .split('\n')
    .map((line) => /^\| (.+?) \| (\d+ of \d+) \| (.+?) \|$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[1] !== 'List entry')
    .map((m) => `${m[1]} | ${m[2]} → ${m[3]}`);
}

describe('the built-in user-agent set against the OPAWG list (opawg/user-agents-v2 8008a31)', () => {
  let answers: Map<string, { answer: string; device: string; generic: boolean }>;
  beforeAll(async () => {
    answers = await classify([...new Set([...EXAMPLES.map((e) => e.ua), ...OPAWG_LISTS.devices.flatMap((d) => d.examples ?? [])])]);
  });

  it('classifies at least 95 % of the bot, app, library and browser examples as the list does, and misses exactly the ones the docs list', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(1420);
    // The list's own check: each example resolves to the entry that lists it.
    expect(EXAMPLES.filter((e) => e.expected !== e.label.slice(0, e.label.indexOf(' | ')))).toEqual([]);
    const misses = EXAMPLES.filter((e) => answers.get(e.ua)?.answer !== e.expected).map((e) => `${e.label} → ${answers.get(e.ua)?.answer}`);
    expect(misses).toEqual(documentedMisses());
    expect(1 - misses.length / EXAMPLES.length).toBeGreaterThanOrEqual(0.95);
  });

  it('classifies every example of the apps, players and bots the demo data names as the list does, and each demo agent as the demo names it', async () => {
    const named = new Set([...LISTENER_AGENTS, ...BOT_AGENTS, ...BLACKLISTED_AGENTS].map((a) => a.app));
    const examples = EXAMPLES.filter((e) => named.has(e.label.slice(e.label.indexOf(': ') + 2, e.label.indexOf(' | '))));
    expect(examples.length).toBeGreaterThan(100);
    expect(examples.map((e) => `${e.label} → ${answers.get(e.ua)?.answer}`)).toEqual(examples.map((e) => `${e.label} → ${e.expected}`));
    // The demo writes each request's parsed_ua itself: the name its downloads get from the set.
    const agents = [...LISTENER_AGENTS, ...BOT_AGENTS, ...BLACKLISTED_AGENTS];
    const demo = await classify(agents.map((a) => a.ua));
    expect(agents.map((a) => `${a.ua} → ${demo.get(a.ua)?.answer.replace(/^[a-z-]+: /, '')}`)).toEqual(agents.map((a) => `${a.ua} → ${a.app}`));
    expect(agents.map((a) => `${a.ua} → ${demo.get(a.ua)?.answer}`)).toEqual(agents.map((a) => `${a.ua} → ${listAnswer(a.ua)}`));
  });

  it('gives the device examples the device the list’s first match gives, for at least 95 % of them', () => {
    const devices = OPAWG_LISTS.devices.map((d) => ({ name: d.name, re: new RegExp(d.pattern) }));
    const examples = OPAWG_LISTS.devices.flatMap((d) => d.examples ?? []);
    // Bots get no device, in either walk.
    const listed = examples.filter((ua) => !listAnswer(ua).startsWith('bot: '));
    const differ = listed.filter((ua) => answers.get(ua)?.device !== devices.find((d) => d.re.test(ua.replace(/[\r\n]/g, '')))?.name);
    process.stdout.write(`built-in set, device examples: ${listed.length - differ.length} of ${listed.length} as the list's first match\n`);
    expect(1 - differ.length / listed.length).toBeGreaterThanOrEqual(0.95);
  });

  it('flags no listener example of the list as a generic bot (isbot’s patterns kept), and flags the unnamed ones OP3’s words and isbot catch', async () => {
    const listeners = EXAMPLES.filter((e) => !/^bot/.test(e.expected)).map((e) => e.ua);
    const flagging = ISBOT_PATTERNS.filter((p) => {
      const re = new RegExp(p, 'i');
      return [...listeners, ...OPAWG_LISTS.devices.flatMap((d) => d.examples ?? [])].some((ua) => re.test(ua));
    });
    expect(flagging).toEqual([]);
    const unnamed = [
      'SomeUnlistedCrawler/1.0',
      'Mozilla/5.0 (compatible; Unlisted-Spider)',
      'Mozilla/5.0 (compatible; SiteAuditor/1.0)',
      'Unlisted Player/1.0 (iPhone)',
    ];
    const classified = await classify(unnamed);
    expect(unnamed.map((ua) => `${ua} → ${classified.get(ua)?.answer} ${classified.get(ua)?.generic}`)).toEqual([
      'SomeUnlistedCrawler/1.0 → unknown true',
      'Mozilla/5.0 (compatible; Unlisted-Spider) → unknown true',
      'Mozilla/5.0 (compatible; SiteAuditor/1.0) → unknown true',
      'Unlisted Player/1.0 (iPhone) → unknown false',
    ]);
  });
});
