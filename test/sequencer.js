const { statSync } = require('node:fs');
const path = require('node:path');
const { BUNDLES, INTEGRATION_DIR, SUITE, suitesOf } = require('./integration/support/bundles');
// jest's own default sequencer (a dependency of jest 29.7.0 itself).
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest starts the longest files first, so both workers stay busy to the end;
 * without times from an earlier run (a clean clone) it takes a file's size
 * for its length. A bundle (test/integration/support/bundles.js), the file
 * that runs its folders' suites, is a few lines and would start last,
 * leaving one worker alone with the tier's longest files; here it weighs
 * what its suites weigh.
 */
class SuitesBySize extends Sequencer {
  sort(tests) {
    const sizes = new Map(tests.map((test) => [test.path, sizeOf(test.path)]));
    for (const test of tests) test.duration = this.time(test);
    return tests.sort((a, b) => {
      if (this.hasFailed(a) !== this.hasFailed(b)) return this.hasFailed(a) ? -1 : 1;
      // As jest does: files without a time (new ones) first.
      if ((a.duration == null) !== (b.duration == null)) return a.duration == null ? -1 : 1;
      if (a.duration != null) return b.duration - a.duration;
      return sizes.get(b.path) - sizes.get(a.path);
    });
  }
}

/** A file's size, or for a bundle the size of its suites. */
function sizeOf(file) {
  const bundle = path.basename(file);
  if (path.dirname(file) !== INTEGRATION_DIR || !(bundle in BUNDLES)) return statSync(file).size;
  return suitesOf(bundle).reduce((sum, suite) => sum + statSync(path.join(INTEGRATION_DIR, `${suite}${SUITE}`)).size, 0);
}

module.exports = SuitesBySize;
