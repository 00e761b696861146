import patterns from '../../../src/warehouse/derive/user-agent-patterns.json';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarehouseSetupError } from '../../../src/warehouse/data-dir';
import { AGENT_TYPES, BUILT_IN_USER_AGENTS, loadUserAgents } from '../../../src/warehouse/derive/user-agents';

/**
 * The built-in user-agent set's file as docs/reference/downloads.md describes it
 * (its agreement with the OPAWG list is the integration test's:
 * test/integration/derive/built-in-agents.suite.ts).
 */
describe('the built-in user-agent set (user-agent-patterns.json)', () => {
  const all = [...patterns.agents, ...patterns.devices, ...patterns.referrers];

  it('gives each agent entry one of the agent types, and each device a category and a system', () => {
    expect(patterns.agents.filter((e) => !(AGENT_TYPES as readonly string[]).includes(e.type))).toEqual([]);
    const categories = ['mobile', 'computer', 'smart_speaker', 'smart_tv', 'watch', 'auto'];
    expect(patterns.devices.filter((d) => !categories.includes(d.category) || d.os === '')).toEqual([]);
  });

  it('names each entry once within its type', () => {
    const names = patterns.agents.map((e) => `${e.type}: ${e.name}`);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(patterns.devices.map((d) => d.name).filter((n, i, a) => a.indexOf(n) !== i)).toEqual([]);
  });

  it('writes patterns Hyperscan and RE2 both run: no lookaround, no backreference, each a valid expression', () => {
    const patternsOf = all.flatMap((e) => e.match.map((p) => `${e.name}: ${p}`));
    expect(patternsOf.filter((p) => /\(\?<?[=!]|\\[1-9]/.test(p))).toEqual([]);
    expect(all.filter((e) => e.match.length === 0).map((e) => e.name)).toEqual([]);
    for (const e of all) for (const p of e.match) expect(() => new RegExp(p)).not.toThrow();
  });

  it('joins an entry’s alternatives into the one pattern the engine scans', () => {
    const overcast = BUILT_IN_USER_AGENTS.agents.find((e) => e.type === 'app' && e.name === 'Overcast');
    expect(overcast?.pattern).toBe(patterns.agents.find((e) => e.type === 'app' && e.name === 'Overcast')?.match.join('|'));
    expect(BUILT_IN_USER_AGENTS.agents).toHaveLength(patterns.agents.length);
  });
});

describe('USER_AGENTS_DIR', () => {
  it('unset, classifies by the built-in set; naming a folder without the OPAWG list, stops the set-up with the folder named', () => {
    expect(loadUserAgents(undefined)).toBe(BUILT_IN_USER_AGENTS);
    const empty = mkdtempSync(path.join(os.tmpdir(), 'user-agents-'));
    try {
      expect(() => loadUserAgents(empty)).toThrow(WarehouseSetupError);
      expect(() => loadUserAgents(empty)).toThrow(`USER_AGENTS_DIR ${empty} has no bots.json`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
