/**
 * `npm run models -- validate` and `sql`: Cube's own compile errors with the
 * file, cube and member to blame, the description rule, and the account rule
 * checked in the engine against the suite's tables (downloads has an
 * account_id column, channel_ranks does not).
 */
import { models, modelDir, problemLines, SCHEMA_DIR } from './support';

/** A cube selecting `from`, with a count and a country, after the file's `head` lines. */
const owned = (name: string, head: string, from: string) =>
  `${head}cubes:\n  - name: ${name}\n    sql: "${from}"\n    measures:\n      - name: count\n        description: Number of downloads.\n        type: count\n    dimensions:\n      - name: country\n        sql: country\n        type: string\n`;

const CHARTS = `cubes:
  - name: Charts
    sql_table: channel_ranks
    measures:
      - name: count
        description: Number of chart entries.
        type: count
        drill_members: [platform]
    dimensions:
      - name: platform
        sql: platform
        type: string
`;

describe('validate', () => {
  it('passes the models of schema/', async () => {
    const { code, stdout } = await models(['validate', '--dir', SCHEMA_DIR]);
    expect(problemLines(stdout)).toEqual([]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: `${SCHEMA_DIR}: the models compile and pass every check.\n` });
  });

  it('reports a YAML syntax error with its file and line', async () => {
    const broken = CHARTS.replace('drill_members: [platform]', 'drill_members: [platform');
    const { code, stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': broken, 'Other.yml': CHARTS.replace(/Charts/g, 'Other') })]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual([expect.stringMatching(/^ {2}Charts\.yml: YAML syntax error: .*\(line 9, column \d+\)$/)]);
  });

  it('reports a JavaScript syntax error with its file', async () => {
    const { code, stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': CHARTS, 'Broken.js': "cube('Broken', { sql: `SELECT 1`,\n" })]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual([expect.stringMatching(/^ {2}Broken\.js: syntax error: /)]);
  });

  it('reports a drill member that does not exist with its file, cube and measure', async () => {
    const { code, stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': CHARTS.replace('[platform]', '[platform, nothere]') })]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual(['  Charts.yml: Charts.count: nothere is not a member of the cube or a cube (in drillMembers)']);
  });

  it('reports a member referring to a cube member that does not exist', async () => {
    const { code, stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': CHARTS.replace('sql: platform', 'sql: "{Charts.nothere}"') })]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual([expect.stringMatching(/^ {2}Charts\.yml: Charts\.platform: Charts\.nothere cannot be resolved/)]);
  });

  describe('the rules, on models that compile', () => {
    let out: { code: number; stdout: string };
    beforeAll(async () => {
      out = await models([
        'validate',
        '--dir',
        modelDir({
          'Charts.yml': CHARTS,
          'Undescribed.yml': CHARTS.replace(/Charts/g, 'Undescribed').replace('        description: Number of chart entries.\n', ''),
          'Leaky.yml': owned('Leaky', '', 'SELECT * FROM downloads'),
          'LeakyJoined.yml': owned('LeakyJoined', '', "SELECT d.* FROM channel_ranks c JOIN downloads d ON d.token = c.podcast_id WHERE 1 = 1"),
          'Shared.yml': owned('Shared', '# access: public\n', 'SELECT * FROM downloads'),
          'Isolated.yml': owned('Isolated', '# access: account\n', "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}"),
          'Promised.yml': owned('Promised', '# access: account\n', 'SELECT *, country_code AS country FROM channel_ranks'),
          'Typo.yml': owned('Typo', '# access: acount\n', "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}"),
          'BadColumn.yml': CHARTS.replace(/Charts/g, 'BadColumn').replace('sql: platform', 'sql: platfrom'),
        }),
      ]);
    });
    const linesOf = (file: string) => problemLines(out.stdout).filter((line) => line.startsWith(`  ${file}: `));

    it('exits 1', () => {
      expect(out.code).toBe(1);
    });

    it('reports a measure without a description', () => {
      expect(linesOf('Undescribed.yml')).toEqual(['  Undescribed.yml: Undescribed.count: the measure has no description: say what it counts']);
    });

    it('reports a cube over an account-owned table without the account filter, not declared public', () => {
      expect(linesOf('Leaky.yml')).toEqual([expect.stringMatching(/^ {2}Leaky\.yml: Leaky: reads analytics\.downloads, whose rows belong to accounts \(account_id column\), but its SQL does not restrict by account/)]);
    });

    it('finds the account-owned table behind a join', () => {
      expect(linesOf('LeakyJoined.yml')).toEqual([expect.stringMatching(/^ {2}LeakyJoined\.yml: LeakyJoined: reads analytics\.downloads, whose rows/)]);
    });

    it('holds a cube declared "access: account" to its promise, whatever its tables', () => {
      expect(linesOf('Promised.yml')).toEqual([expect.stringMatching(/^ {2}Promised\.yml: Promised: declared "access: account" but its SQL does not restrict by account/)]);
    });

    it('reports a declaration it cannot read', () => {
      expect(linesOf('Typo.yml')).toEqual(['  Typo.yml: "access: acount" is not a declaration: write "access: public" or "access: account"']);
    });

    it('reports a column ClickHouse does not find, with the member', () => {
      expect(linesOf('BadColumn.yml')).toEqual([expect.stringMatching(/^ {2}BadColumn\.yml: BadColumn\.platform: ClickHouse rejects the member's SQL: .*platfrom/)]);
    });

    it('passes a public declaration, an account filter, and a table without account_id', () => {
      expect([...linesOf('Shared.yml'), ...linesOf('Isolated.yml'), ...linesOf('Charts.yml')]).toEqual([]);
    });
  });
});

describe('sql', () => {
  const dir = modelDir({ 'Plays.yml': owned('Plays', '# access: account\n', "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}") });

  it("prints the SQL Cube generates, with the key's account as a parameter", async () => {
    const { code, stdout } = await models(['sql', '{"measures":["Plays.count"]}', '--account', 'northwind-audio', '--dir', dir]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^SELECT[\s\S]*\(SELECT \* FROM downloads WHERE account_id = \?\)[\s\S]*\n\n-- parameters: \["northwind-audio"\]\n$/);
  });

  it('prints an unrestricted statement without --account (an operator key)', async () => {
    const { code, stdout } = await models(['sql', '{"measures":["Plays.count"]}', '--dir', dir]);
    expect(code).toBe(0);
    expect(stdout).not.toContain('account_id');
    expect(stdout).toMatch(/-- parameters: \[\]\n$/);
  });

  it('answers an unknown member with an error, exit 1', async () => {
    const { code, stderr } = await models(['sql', '{"measures":["Plays.nothere"]}', '--dir', dir]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: .*nothere/);
  });

  it('answers a query that is not JSON with usage, exit 2', async () => {
    const { code, stderr } = await models(['sql', '{measures']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^error: the query is not JSON/);
  });
});
