import type { openOracle, Oracle, startService, TestService } from './service';

/**
 * One service as `startService()` makes it (the suite's defaults, no
 * environment of its own, no account keys), for the suites of one jest file
 * that need nothing else: started by the first suite that asks and closed
 * after the file's last test (default-service-hooks.ts), instead of a start
 * and a model compile per suite. Suites that change a service's state
 * (environment, keys, models, caches they count on being empty) start
 * their own.
 */
let shared: Promise<TestService> | undefined;

// Required on first use: a jest file that never asks does not load the service (and Cube) for it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const serviceModule = () => require('./service') as { startService: typeof startService; openOracle: typeof openOracle };

export function defaultService(): Promise<TestService> {
  shared ??= serviceModule().startService();
  return shared;
}

export async function closeDefaultService(): Promise<void> {
  const started = shared;
  shared = undefined;
  // A start that failed has failed the suites that asked for it; there is nothing to close.
  await started?.then(
    (service) => service.close(),
    () => undefined,
  );
}

/** A suite's service and the oracle over the same data, there from the suite's first test to its last. */
export interface ServiceAndOracle {
  readonly service: TestService;
  readonly oracle: Oracle;
}

function serviceAndOracle(start: () => Promise<TestService>, own: boolean): ServiceAndOracle {
  const held: { service?: TestService; oracle?: Oracle } = {};
  beforeAll(async () => {
    held.service = await start();
    held.oracle = serviceModule().openOracle();
  });
  afterAll(async () => {
    await held.oracle?.close();
    if (own) await held.service?.close();
  });
  return {
    get service() {
      return held.service!;
    },
    get oracle() {
      return held.oracle!;
    },
  };
}

/** The shared default service (closed after the file's last test) and an oracle, for the suite that calls it. */
export const withDefaultService = (): ServiceAndOracle => serviceAndOracle(defaultService, false);

/** A service of the suite's own as `startService()` makes it, and an oracle, for the suite that calls it. */
export const withOwnService = (): ServiceAndOracle => serviceAndOracle(() => serviceModule().startService(), true);
