import path from 'node:path';
import fc from 'fast-check';
import { bundleProblems, INTEGRATION_DIR, suitesOf } from './bundles';

/**
 * Runs the suites of a bundle's folders (bundles.js) in one jest file, each
 * inside a describe of its name (`query-language/time`), so its hooks (its
 * own service, with its own environment) start before its tests and close
 * after them, as in a file of its own. Fails the file when some suite would
 * run in no bundle or in two. Suites run in name order, or in the order
 * TEST_SUITE_SEED shuffles them to: every order must pass.
 */
export function runBundle(file: string): void {
  const problems = bundleProblems();
  if (problems.length > 0) throw new Error(`The integration suites and their bundles (test/integration/support/bundles.js):\n${problems.join('\n')}`);
  const bundle = path.basename(file);
  const seed = process.env.TEST_SUITE_SEED;
  const names = seed === undefined ? suitesOf(bundle) : shuffled(suitesOf(bundle), seed);
  if (seed !== undefined) process.stderr.write(`${bundle}, TEST_SUITE_SEED=${seed}: ${names.join(', ')}\n`);
  for (const name of names) {
    describe(name, () => {
      // Required inside the describe, so the suite's hooks and tests are registered in it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(path.join(INTEGRATION_DIR, `${name}.suite`));
    });
  }
}

function shuffled(names: string[], seed: string): string[] {
  if (!/^\d+$/.test(seed)) throw new Error(`TEST_SUITE_SEED must be a whole number, not "${seed}"`);
  const [order] = fc.sample(fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }), { seed: Number(seed), numRuns: 1 });
  return order;
}
