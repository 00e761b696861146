/**
 * `npm run models -- validate` and `sql`: Cube's own compile errors with the
 * file, cube and member to blame, the description rule, and the account rule
 * checked in the engine against the suite's tables (downloads has an
 * account_id column, channel_ranks does not).
 */
import { startService } from '../support/service';
import { models, modelDir, problemLines, removeModelDirs, SCHEMA_DIR } from './support';

afterAll(removeModelDirs);

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
          'LeakyJoined.yml': owned('LeakyJoined', '', 'SELECT d.* FROM channel_ranks c JOIN downloads d ON d.token = c.podcast_id WHERE 1 = 1'),
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
      expect(linesOf('Leaky.yml')).toEqual([
        expect.stringMatching(
          /^ {2}Leaky\.yml: Leaky: reads analytics\.downloads, whose rows belong to accounts \(account_id column\), but its SQL does not restrict by account/,
        ),
      ]);
    });

    it('finds the account-owned table behind a join', () => {
      expect(linesOf('LeakyJoined.yml')).toEqual([expect.stringMatching(/^ {2}LeakyJoined\.yml: LeakyJoined: reads analytics\.downloads, whose rows/)]);
    });

    it('holds a cube declared "access: account" to its promise, whatever its tables', () => {
      expect(linesOf('Promised.yml')).toEqual([
        expect.stringMatching(/^ {2}Promised\.yml: Promised: declared "access: account" but its SQL does not restrict by account/),
      ]);
    });

    it('reports a declaration it cannot read', () => {
      expect(linesOf('Typo.yml')).toEqual(['  Typo.yml: "access: acount" is not a declaration: write "access: public" or "access: account"']);
    });

    it('reports a column ClickHouse does not find, with the member', () => {
      expect(linesOf('BadColumn.yml')).toEqual([
        expect.stringMatching(
          /^ {2}BadColumn\.yml: BadColumn\.platform: the member cannot be queried, so queries naming it are refused: ClickHouse rejects the member's SQL: .*platfrom/,
        ),
      ]);
    });

    it('passes a public declaration, an account filter, and a table without account_id', () => {
      expect([...linesOf('Shared.yml'), ...linesOf('Isolated.yml'), ...linesOf('Charts.yml')]).toEqual([]);
    });
  });
});

describe('duplicates, which Cube would resolve by keeping one definition silently', () => {
  const twice = CHARTS.replace('    dimensions:\n', '    dimensions:\n      - name: platform\n        sql: country_code\n        type: string\n');

  it('reports a member defined twice in a cube, at both lines', async () => {
    const { code, stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': twice })]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual([
      '  Charts.yml: Charts.platform: the dimension platform is defined 2 times in the cube, at lines 10 and 13 of Charts.yml; Cube would keep only the last: remove or rename the others',
    ]);
  });

  it('reports a cube defined in two files, naming both', async () => {
    const js = "cube('Charts', {\n  sql_table: 'channel_ranks',\n  measures: { count: { type: 'count', description: 'Chart entries.' } },\n});\n";
    const { code, stdout } = await models([
      'validate',
      '--dir',
      modelDir({ 'Charts.yml': CHARTS, 'More.yml': `${CHARTS}${CHARTS.replace('cubes:\n', '')}`, 'Legacy.js': js }),
    ]);
    expect(code).toBe(1);
    expect(problemLines(stdout)).toEqual([
      '  Charts.yml: Charts: the cube Charts is defined 4 times, at Charts.yml line 2 and Legacy.js line 1 and More.yml line 2 and More.yml line 13; Cube would serve only one of them: remove or rename the others',
    ]);
  });

  it('reports a measure defined twice', async () => {
    const measures = CHARTS.replace('        drill_members: [platform]\n', '      - name: count\n        description: Again.\n        type: count\n');
    const { stdout } = await models(['validate', '--dir', modelDir({ 'Charts.yml': measures })]);
    expect(problemLines(stdout)).toEqual([
      expect.stringMatching(/^ {2}Charts\.yml: Charts\.count: the measure count is defined 2 times in the cube, at lines 5 and 8 of Charts\.yml;/),
    ]);
  });

  it('refuses to start the service on them', async () => {
    await expect(startService({ CUBE_MODELS_DIR: modelDir({ 'Charts.yml': twice }) })).rejects.toMatchObject({
      name: 'ModelsInvalid',
      problems: [expect.objectContaining({ file: 'Charts.yml', cube: 'Charts', member: 'platform' })],
    });
  });
});

describe('sql', () => {
  let dir: string;
  beforeAll(() => {
    dir = modelDir({
      'Plays.yml': owned('Plays', '# access: account\n', "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}"),
    });
  });

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
