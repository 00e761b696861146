import type { startService, TestService } from './service';

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

export function defaultService(): Promise<TestService> {
  // Required on first use: a jest file that never asks does not load the service (and Cube) for it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  shared ??= (require('./service') as { startService: typeof startService }).startService();
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
