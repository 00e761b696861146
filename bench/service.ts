import path from 'node:path';
import { assembleLocalService, type LocalService } from '../src/assembly';
import type { DemoConfig } from '../src/config';
import { createLogger } from '../src/log';

/** The database names the service's configuration defaults to (CLICKHOUSE_DATABASE, CUBE_ROLLUP_DATABASE). */
export const DATABASE = 'analytics';
export const ROLLUP_DATABASE = 'analytics_rollups';
/** The operator key of the benchmarks' service: it reads every account. */
export const API_KEY = 'bench-key-0123456789abcdef';
/** The fuzzer's dataset: small, so it builds in seconds; it ends today so relative ranges find rows. */
export const FUZZ_DEMO: DemoConfig = { enabled: true, scale: 0.02, seed: 7, days: 30 };

/**
 * The service in this process on the demo data in `dataDir`, wired as
 * production wires it (src/assembly.ts), with API_KEY as its operator key
 * and a key for each of `accounts`.
 */
export function startBenchService(
  dataDir: string,
  env: Record<string, string | undefined>,
  accounts: readonly string[] = [],
  options: { importInbox?: boolean } = {},
): Promise<LocalService> {
  return assembleLocalService({
    ...options,
    env: { NODE_ENV: 'test', API_KEYS: API_KEY, CHDB_DATA_DIR: dataDir, ...env },
    accounts,
    logger: createLogger('error', () => {}),
    // Compiled to build/bench/, so the service's default (relative to build/src/cube/) misses the models.
    schemaPath: path.resolve(__dirname, '..', '..', 'schema'),
  });
}
