import { ModelsInvalid } from './cube/models/problems';
import type { CubeService } from './cube/service';
import type { Warehouse } from './warehouse/connection';

/**
 * Whether this instance should get traffic: the warehouse answers `SELECT 1`
 * within `warehouseTimeoutMs`, the models are compiled, the start's catch-up
 * with the data is done (CubeService.caughtUp), and no shutdown has begun.
 * `check` lists the reasons it should not; none means ready.
 */
export interface Readiness {
  check(): Promise<string[]>;
  /** From now on every check says the service is shutting down. */
  markShuttingDown(): void;
}

export function createReadiness(deps: { warehouse: Warehouse; cube: Pick<CubeService, 'models' | 'caughtUp'>; warehouseTimeoutMs?: number }): Readiness {
  const { warehouse, cube, warehouseTimeoutMs = 1000 } = deps;
  let shuttingDown = false;
  let models: 'compiling' | 'compiled' | 'failed' = 'compiling';
  let attempt: Promise<void> | undefined;
  // Invalid models stay failed; a warehouse that could not be reached to
  // check them leaves them compiling, and the next probe tries again.
  const settle = () =>
    (attempt ??= cube.models.ready().then(
      () => {
        models = 'compiled';
      },
      (err: unknown) => {
        if (err instanceof ModelsInvalid) models = 'failed';
        attempt = undefined;
      },
    ));
  void settle();
  let caughtUp = false;
  void cube.caughtUp().then(() => {
    caughtUp = true;
  });

  return {
    check: async () => {
      const reasons: string[] = [];
      if (shuttingDown) reasons.push('the service is shutting down');
      if (models === 'compiling') void settle();
      if (models === 'compiling') reasons.push('the models are still compiling');
      // The answer is public: the compiler's and the warehouse's own words
      // (paths, SQL, hosts) stay out of it.
      if (models === 'failed') reasons.push('the models failed to compile');
      else if (!caughtUp) reasons.push('the rollups are being brought up to the data the service started on');
      try {
        await warehouse.ping(warehouseTimeoutMs);
      } catch {
        reasons.push(`the warehouse did not answer a probe within ${warehouseTimeoutMs / 1000} s`);
      }
      return reasons;
    },
    markShuttingDown: () => {
      shuttingDown = true;
    },
  };
}
