/**
 * Rollup builds run under their own limits (CUBE_ROLLUP_BUILD_TIMEOUT_SECONDS,
 * CUBE_ROLLUP_BUILD_MAX_MEMORY_MB), not the query limits: a build reads all
 * of a cube's rows, which no client query may.
 */
import path from 'node:path';
import { openOracle, startService, type TestService } from '../support/service';
import { load } from '../support/api';

const DB = 'analytics_rollups_build_limits';
/** A rollup whose build needs about 10 MB, and whose table is one row. */
const HEAVY_SCHEMA = path.join(__dirname, '..', 'fixtures', 'heavy-rollup-schema');
const query = { measures: ['HeavyBuild.count'], timeDimensions: [{ dimension: 'HeavyBuild.ts', dateRange: ['2026-01-01', '2026-01-01'] }] };

const withService = async (env: Record<string, string>, run: (service: TestService) => Promise<void>) => {
  const oracle = openOracle();
  await oracle.command(`DROP DATABASE IF EXISTS ${DB} SYNC`);
  const service = await startService({ CUBE_ROLLUP_DATABASE: DB, ...env }, { schemaPath: HEAVY_SCHEMA });
  try {
    await run(service);
  } finally {
    await service.close();
    await oracle.command(`DROP DATABASE IF EXISTS ${DB} SYNC`);
    await oracle.close();
  }
};

it('a build over its memory limit fails, while the same limit for queries does not touch it', async () => {
  await withService({ CUBE_ROLLUP_BUILD_MAX_MEMORY_MB: '1' }, async (service) => {
    const res = await load(service, query);
    // A query waiting for a build that fails gets that build's error.
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('query_too_expensive');
  });
  await withService({ QUERY_MAX_MEMORY_MB: '1', CUBE_ROLLUP_BUILD_MAX_MEMORY_MB: '4096' }, async (service) => {
    // The build succeeds under its own limit; reading the rollup (one row) fits in the query's.
    const res = await load(service, query);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ 'HeavyBuild.count': '200000' }]);
  });
}, 120_000);
