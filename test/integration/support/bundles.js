// @ts-check
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');

/** test/integration: the bundles at its top level, the suites in its folders. */
const INTEGRATION_DIR = path.resolve(__dirname, '..');

/**
 * The jest files of suites (test/integration/<bundle>) and the folders whose
 * suites each runs: every `*.suite.ts` under them, found when the bundle
 * loads, so a new suite runs without being listed. Jest gives
 * every test file a fresh module registry, in which Cube's 3,900 modules load
 * again and the models compile again (9-10 s of CPU); a file of many suites
 * pays that once. Four files of about one length keep the tier's two workers
 * busy to the end; a folder goes where it evens them out.
 */
const BUNDLES = {
  'api.test.ts': ['data-api', 'query-language', 'warehouse'],
  'operations-queries-limits.test.ts': ['abuse', 'cubejs-api', 'errors', 'import', 'isolation', 'limits', 'observability', 'query', 'result-cache'],
  'lifecycle-models-rollups.test.ts': ['lifecycle', 'models', 'rollups'],
  'pages-export-derive.test.ts': ['derive', 'explorer', 'export'],
};

const SUITE = '.suite.ts';

/** Every suite under root, by name: its path from root without `.suite.ts` (`query-language/time`), in name order. */
function findSuites(root = INTEGRATION_DIR) {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(SUITE))
    .map((file) => file.slice(0, -SUITE.length).split(path.sep).join('/'))
    .sort();
}

/**
 * @param {readonly string[]} folders
 * @param {string} suite
 */
const inFolders = (folders, suite) => folders.some((folder) => suite.startsWith(`${folder}/`));

/**
 * What keeps a suite from running exactly once: a suite in no bundle's
 * folders (it would never run) or in two (it would run twice), a bundle
 * whose file is missing, a folder that holds no suite. None when the
 * bundles run every suite once.
 * @param {string} [root]
 * @param {Record<string, readonly string[]>} [bundles]
 * @returns {string[]}
 */
function bundleProblems(root = INTEGRATION_DIR, bundles = BUNDLES) {
  const suites = findSuites(root);
  const problems = [];
  for (const suite of suites) {
    const runners = Object.keys(bundles).filter((bundle) => inFolders(bundles[bundle], suite));
    if (runners.length === 0) problems.push(`${suite}${SUITE} is in no bundle's folders, so no jest file runs it`);
    if (runners.length > 1) problems.push(`${suite}${SUITE} is in the folders of ${runners.join(' and ')}, so it runs ${runners.length} times`);
  }
  for (const [bundle, folders] of Object.entries(bundles)) {
    if (!existsSync(path.join(root, bundle))) problems.push(`${bundle} is missing`);
    for (const folder of folders) {
      if (!suites.some((suite) => inFolders([folder], suite))) problems.push(`${bundle}'s folder ${folder} holds no suite`);
    }
  }
  return problems;
}

/**
 * The suites a bundle runs, in name order.
 * @param {string} bundle its file name, e.g. `api.test.ts`
 * @param {string} [root]
 * @param {Record<string, readonly string[]>} [bundles]
 */
function suitesOf(bundle, root = INTEGRATION_DIR, bundles = BUNDLES) {
  const folders = bundles[bundle];
  if (!folders) throw new Error(`${bundle} is not a bundle of test/integration/support/bundles.js`);
  return findSuites(root).filter((suite) => inFolders(folders, suite));
}

module.exports = { BUNDLES, INTEGRATION_DIR, SUITE, bundleProblems, findSuites, suitesOf };
