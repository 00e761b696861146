import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { makeRunTemp } from '../support/run-temp';
import { writeTinyGeo } from '../support/tiny-geo';
import { TINY_GEO_DIR } from './support/child';

/**
 * The system tier runs what `npm start` runs, `node dist/index.js`, in child
 * processes: built here once, as `npm start` builds it, so no test file runs
 * its own compiler into the shared dist/. The run's temporary directory:
 * test/support/run-temp.ts; the small IP database the children load
 * (support/child.ts) is written into it.
 */
export default function globalSetup(): void {
  writeTinyGeo(path.join(makeRunTemp('system'), TINY_GEO_DIR));
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.resolve(__dirname, '..', '..'), stdio: 'inherit' });
}
