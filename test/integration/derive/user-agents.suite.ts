import { withClause } from '../../../src/warehouse/sql';
import {
  classifiedSql,
  cleanSql,
  compileUserAgentPatternsSql,
  refererListNameSql,
  uaNameSql,
  userAgentConstants,
  type UserAgentList,
} from '../../../src/warehouse/derive/user-agents';
import { openOracle, type Oracle } from '../support/service';
import { OPAWG_LISTS, USER_AGENTS } from './support';

/**
 * The OPAWG list as USER_AGENTS_DIR's override of the built-in set: every
 * example string of the list (user-agents-v2 at 8008a31, the snapshot in
 * ../shared/conformance) classified by the warehouse's expression, against the folder README's oracles: bot/app/library/browser
 * examples resolve to their own entry and file by first match in the order
 * bots, apps, libraries, browsers; device examples to their own entry, but
 * for the one example the README names as caught first by an earlier entry.
 */
let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

const TYPES: Record<string, UserAgentList> = { bot: 'bots', app: 'apps', library: 'libraries', 'bot-library': 'libraries', browser: 'browsers' };

async function classify(examples: string[]): Promise<{ ua: string; ua_type: string; ua_name: string; device_name: string }[]> {
  const rows = examples.map((ua) => `'${ua.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ');
  return oracle.rows(`
    ${withClause(userAgentConstants(USER_AGENTS))}
    SELECT ua, ua_type, ua_name, device_name FROM (${classifiedSql(`SELECT arrayJoin([${rows}]) AS ua`, 'ua', USER_AGENTS)})`);
}

describe('user-agent classification by the OPAWG list through USER_AGENTS_DIR (opawg/user-agents-v2 8008a31)', () => {
  it('resolves all bot, app, library and browser examples to their own entry and file', async () => {
    const expected = (['bots', 'apps', 'libraries', 'browsers'] as const).flatMap((list) =>
      OPAWG_LISTS[list].flatMap((entry) => (entry.examples ?? []).map((ua) => `${ua} → ${list}: ${entry.name}`)),
    );
    expect(expected.length).toBeGreaterThanOrEqual(1420);
    const rows = await classify(expected.map((line) => line.slice(0, line.lastIndexOf(' → ', line.lastIndexOf(': ')))));
    expect(rows.map((r) => `${r.ua} → ${TYPES[r.ua_type] ?? r.ua_type}: ${r.ua_name}`)).toEqual(expected);
  });

  it('resolves device examples to their own entry, except the Apple Watch example the README names', async () => {
    const shadowed = 'Watch/1140 CFNetwork/3860.200.71 Darwin/25.1.0';
    const examples = OPAWG_LISTS.devices.flatMap((entry) => (entry.examples ?? []).map((ua) => ({ ua, name: ua === shadowed ? 'Apple iPhone' : entry.name })));
    // Bots get no device; the list's device examples that are also bots are checked by their own entry only upstream.
    const rows = await classify(examples.map((e) => e.ua));
    const botExamples = new Set(rows.filter((r) => r.ua_type === 'bot').map((r) => r.ua));
    expect(rows.filter((r) => !botExamples.has(r.ua)).map((r) => `${r.ua} → ${r.device_name}`)).toEqual(
      examples.filter((e) => !botExamples.has(e.ua)).map((e) => `${e.ua} → ${e.name}`),
    );
  });

  it("names a user agent in one expression (the import's fallback): its entry's name, else the agent without newlines", async () => {
    const named = (['bots', 'apps', 'libraries', 'browsers'] as const).flatMap((list) =>
      OPAWG_LISTS[list].flatMap((entry) => (entry.examples ?? []).map((ua) => ({ ua, name: entry.name }))),
    );
    const expected = [...named, { ua: 'no\nknown\ragent', name: 'noknownagent' }];
    const literals = expected.map(({ ua }) => `'${ua.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`);
    const rows = await oracle.rows<{ ua: string; ua_name: string }>(`
      ${withClause(userAgentConstants(USER_AGENTS))}
      SELECT ua, ${uaNameSql(cleanSql('ua'), USER_AGENTS)} AS ua_name FROM (SELECT arrayJoin([${literals.join(', ')}]) AS ua)`);
    expect(rows.map((r) => `${r.ua} → ${r.ua_name}`)).toEqual(expected.map((e) => `${e.ua} → ${e.name}`));
  });

  it('compiles every pattern set a classification scans in statements of their own, after which classifying compiles none', async () => {
    const statements = compileUserAgentPatternsSql(USER_AGENTS);
    // Cut into sets (each of them a statement on the import's lane), not the lists whole.
    expect(statements.length).toBeGreaterThan(6);
    const compiled = () => oracle.value(`SELECT sum(value) FROM system.events WHERE name = 'RegexpWithMultipleNeedlesCreated'`);
    for (const query of statements) await oracle.rows(query);
    const before = await compiled();
    await classify(OPAWG_LISTS.devices.flatMap((e) => e.examples ?? []));
    await oracle.rows(`
      ${withClause(userAgentConstants(USER_AGENTS))}
      SELECT ${refererListNameSql('ua', USER_AGENTS)}, ${uaNameSql('ua', USER_AGENTS)} FROM (SELECT 'https://podcasts.apple.com/' AS ua)`);
    // Compiled sets stay compiled side by side (ClickHouse's cache keeps one per hash bucket).
    for (const query of statements) await oracle.rows(query);
    expect(await compiled()).toBe(before);
  });
});
