import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drainPending } from 'chdb';
import { createLogger } from '../../../src/log';
import { makeRunTemp } from '../../support/run-temp';
import { openWarehouse } from '../../../src/warehouse/connection';
import { applyDdl, ensureDemo } from '../../../src/warehouse/setup';
import { DATABASE, ROLLUP_DATABASE, TEST_DEMO, TEST_END_DATE } from './constants';

/**
 * Builds one small demo dataset in a fresh temporary chDB directory for the
 * whole run; each worker copies it before its first test (worker-data.ts).
 * Both live in the run's temporary directory (test/support/run-temp.ts).
 */
export default async function globalSetup(): Promise<void> {
  makeRunTemp('integration');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-test-'));
  process.env.TEST_CHDB_DATA_BASE = dataDir;
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  await applyDdl(warehouse);
  await ensureDemo(warehouse, TEST_DEMO, createLogger('error'), { endDate: TEST_END_DATE, unprovenRows: 'move-aside' });
  await warehouse.close();
  await drainPending();
}
