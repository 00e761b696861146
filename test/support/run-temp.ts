import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * One temporary directory for a tier's whole run, made by its global setup and
 * removed by its global teardown: TMPDIR points into it, so everything the
 * tests, the code under test and the system tier's children put in
 * `os.tmpdir()` goes with it, even what a child SIGKILLed on purpose could
 * not remove (before, a run left a thousand directories in /tmp). jest forks
 * its workers after global setup, so they inherit TMPDIR. Tiers run in one jest
 * (every project's setup before any test, every teardown after all) share the
 * first one's.
 */
const OUTER = 'TEST_OUTER_TMPDIR';

export function makeRunTemp(tier: string): string {
  if (process.env[OUTER] !== undefined && process.env.TMPDIR) return process.env.TMPDIR;
  const dir = mkdtempSync(path.join(os.tmpdir(), `analytics-${tier}-tests-`));
  process.env[OUTER] = process.env.TMPDIR ?? '';
  process.env.TMPDIR = dir;
  return dir;
}

export function removeRunTemp(): void {
  const dir = process.env.TMPDIR;
  const outer = process.env[OUTER];
  if (outer === undefined || !dir) return;
  if (outer) process.env.TMPDIR = outer;
  else delete process.env.TMPDIR;
  delete process.env[OUTER];
  rmSync(dir, { recursive: true, force: true });
}
