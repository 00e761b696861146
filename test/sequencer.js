const { existsSync, readFileSync, statSync } = require('node:fs');
const path = require('node:path');
// jest's own default sequencer (a dependency of jest 29.7.0 itself).
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest starts the longest files first, so both workers stay busy to the end;
 * without times from an earlier run (a clean clone) it takes a file's size
 * for its length. A folder's file of suites (test/integration/support/suites.ts) is a few
 * lines naming them and would start last, leaving one worker alone with the
 * tier's longest files; here it weighs what its suites weigh.
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

/** A file's size, or for a file of suites the size of the suites it names (`'<folder>/<name>'` or `'<name>'` beside it). */
function sizeOf(file) {
  const text = readFileSync(file, 'utf8');
  const call = text.indexOf('runSuites(');
  if (call < 0) return statSync(file).size;
  const dir = path.dirname(file);
  return [...text.slice(call).matchAll(/'([^']+)'/g)]
    .map((match) => path.join(dir, `${match[1]}.suite.ts`))
    .filter((suite) => existsSync(suite))
    .reduce((sum, suite) => sum + statSync(suite).size, 0);
}

module.exports = SuitesBySize;
