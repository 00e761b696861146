import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';

/** The repository root: children run `dist/…` from here, as `npm start` does. */
export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A child's whole environment: only PATH and HOME from the test's own, so a developer's `.env` or shell cannot change
 * what a test sees. The metrics port is off unless a test asks for one: the tier runs files on two workers, and two
 * services on the default 9464 would refuse to start. TMPDIR is the run's (test/support/run-temp.ts), so what a child
 * killed on purpose leaves there goes with the run. No drain at SIGTERM (5 s by default, for load balancers to notice):
 * a test stops a ready child to read its data directory, and no balancer is watching; each such stop waited 5 s for
 * nothing. The tests of the drain itself (lifecycle/sigterm.test.ts) set their own. GEO_DB_DIR is the run's
 * IP database of a few networks (global-setup.ts): every start on a new directory loads one, and the real one costs
 * each such start seconds of load and of building its dictionaries (clone/fresh-clone.test.ts starts on the real one).
 */
export function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const tmp = process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {};
  const geo = process.env.TMPDIR ? { GEO_DB_DIR: path.join(process.env.TMPDIR, TINY_GEO_DIR) } : {};
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...tmp, ...geo, METRICS_PORT: '0', SHUTDOWN_DRAIN_SECONDS: '0', ...vars };
}

/** The folder of the run's temporary directory that holds the small IP database. */
export const TINY_GEO_DIR = 'tiny-geo';
