import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { makeRunTemp } from '../support/run-temp';

/**
 * The system tier runs what `npm start` runs, `node dist/index.js`, in child
 * processes: built here once, as `npm start` builds it, so no test file runs
 * its own compiler into the shared dist/. The run's temporary directory:
 * test/support/run-temp.ts.
 */
export default function globalSetup(): void {
  makeRunTemp('system');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.resolve(__dirname, '..', '..'), stdio: 'inherit' });
}
