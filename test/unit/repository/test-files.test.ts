import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUNDLES, bundleProblems, suitesOf } from '../../integration/support/bundles';

const TEST_DIR = path.resolve(__dirname, '..', '..');

const TIERS = ['unit', 'integration', 'system'];

/** The files under test/<tier>, as paths from test/, but the models and data tests read (fixtures/). */
const allFilesOf = (tier: string) =>
  readdirSync(path.join(TEST_DIR, tier), { recursive: true, encoding: 'utf8', withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(TEST_DIR, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((file) => !file.split('/').includes('fixtures'));
const filesOf = (tier: string) => allFilesOf(tier).filter((file) => file.endsWith('.ts'));

/** docs/guides/testing.md, "Test files and their names": `<topic>[.security].<test|suite>.ts`, the topic lower-case words joined by `-`. */
const TEST_NAME = /^[a-z0-9]+(-[a-z0-9]+)*(\.security)?\.(test|suite)\.ts$/;
/** What jest would take for a test file of its own (its default testMatch), in any naming. */
const JEST_MATCH = /(^|\/)__tests__\/|\.(test|spec)\.[cm]?[jt]sx?$/;
/** A call that registers a test or a group at a file's top level. */
const REGISTERS = /^(describe|it|test)(\.\w+)*\(/m;

/** Why a file under test/ breaks the naming scheme, or undefined. */
function misnamed(file: string): string | undefined {
  const [tier, ...rest] = file.split('/');
  const name = rest.at(-1)!;
  const test = name.endsWith('.test.ts') || name.endsWith('.suite.ts');
  if (!test) {
    if (JEST_MATCH.test(file)) return 'jest would run it as a test file: name it <topic>.test.ts or <topic>.suite.ts';
    if (file.endsWith('.ts') && REGISTERS.test(readFileSync(path.join(TEST_DIR, file), 'utf8'))) return 'registers tests, but no jest file runs it';
    return undefined;
  }
  if (!TEST_NAME.test(name)) return 'not <topic>[.security].test.ts or <topic>[.security].suite.ts';
  if (name.endsWith('.suite.ts') && (tier !== 'integration' || rest.length < 2)) return 'a suite outside an area folder of test/integration';
  if (tier === 'integration' && rest.length === 1 && !(name in BUNDLES)) return 'a jest file at the top of test/integration that is not a bundle';
  return undefined;
}

/**
 * The test files themselves: every integration suite runs, once. A suite runs only inside a bundle, the jest file of
 * its folder (test/integration/support/bundles.js), so one in no bundle's folders would never run, and one in two
 * would run twice. The bundles check the same when they load, so the integration tier fails too.
 */
describe('the integration bundles', () => {
  it('run every suite of test/integration exactly once', () => {
    expect(bundleProblems()).toEqual([]);
  });

  describe('over a planted tree', () => {
    let root: string;
    const plant = (file: string) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), '');
    };
    beforeEach(() => {
      root = mkdtempSync(path.join(os.tmpdir(), 'bundles-'));
      for (const file of ['one.test.ts', 'two.test.ts', 'a/x.suite.ts', 'a/deeper/y.suite.ts', 'b/z.suite.ts', 'b/helper.ts']) plant(file);
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));
    const bundles = { 'one.test.ts': ['a'], 'two.test.ts': ['b'] };

    it('finds a folder’s suites at any depth, and nothing else', () => {
      expect(bundleProblems(root, bundles)).toEqual([]);
      expect(suitesOf('one.test.ts', root, bundles)).toEqual(['a/deeper/y', 'a/x']);
      expect(suitesOf('two.test.ts', root, bundles)).toEqual(['b/z']);
    });

    it('names a suite in no bundle’s folders, one in two bundles’, a folder without suites and a missing bundle', () => {
      plant('c/new.suite.ts');
      plant('top.suite.ts');
      plant('d/helper.ts');
      const problems = bundleProblems(root, { ...bundles, 'two.test.ts': ['a', 'b', 'd'], 'three.test.ts': ['b'] });
      expect(problems).toEqual([
        'a/deeper/y.suite.ts is in the folders of one.test.ts and two.test.ts, so it runs 2 times',
        'a/x.suite.ts is in the folders of one.test.ts and two.test.ts, so it runs 2 times',
        'b/z.suite.ts is in the folders of two.test.ts and three.test.ts, so it runs 2 times',
        "c/new.suite.ts is in no bundle's folders, so no jest file runs it",
        "top.suite.ts is in no bundle's folders, so no jest file runs it",
        "two.test.ts's folder d holds no suite",
        'three.test.ts is missing',
      ]);
    });
  });
});

describe('test file names', () => {
  it('follow one scheme, and every file that registers tests is run', () => {
    const wrong = TIERS.flatMap(allFilesOf).flatMap((file) => {
      const why = misnamed(file);
      return why === undefined ? [] : [`${file}: ${why}`];
    });
    expect(wrong).toEqual([]);
  });

  it.each([
    ['unit/query/paging.test.ts', undefined],
    ['integration/isolation/cubes.security.suite.ts', undefined],
    ['integration/api.test.ts', undefined],
    ['integration/data-api/load.happy.suite.ts', 'not <topic>[.security].test.ts or <topic>[.security].suite.ts'],
    ['system/lifecycle/sigterm.process.test.ts', 'not <topic>[.security].test.ts or <topic>[.security].suite.ts'],
    ['unit/query/Paging.test.ts', 'not <topic>[.security].test.ts or <topic>[.security].suite.ts'],
    ['integration/limits/redis.spec.ts', 'jest would run it as a test file: name it <topic>.test.ts or <topic>.suite.ts'],
    ['integration/load.suite.ts', 'a suite outside an area folder of test/integration'],
    ['unit/query/paging.suite.ts', 'a suite outside an area folder of test/integration'],
    ['integration/everything.test.ts', 'a jest file at the top of test/integration that is not a bundle'],
  ])('%s: %s', (file, why) => {
    expect(misnamed(file)).toBe(why);
  });
});

describe('requests to the service', () => {
  it('go through one harness, test/integration/support/api.ts, in the tiers that run the service', () => {
    const own = ['integration', 'system'].flatMap(filesOf).filter((file) => /from 'supertest'/.test(readFileSync(path.join(TEST_DIR, file), 'utf8')));
    expect(own).toEqual(['integration/support/api.ts']);
  });
});
