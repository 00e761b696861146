import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The system tier runs what `npm start` runs, `node dist/index.js`, in child
 * processes: built here once, as `npm start` builds it, so no test file runs
 * its own compiler into the shared dist/.
 */
export default function globalSetup(): void {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.resolve(__dirname, '..', '..'), stdio: 'inherit' });
}
