import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drainPending } from 'chdb';
import { createLogger } from '../../../src/log';
import { makeRunTemp } from '../../support/run-temp';
import { openWarehouse } from '../../../src/warehouse/connection';
import { applyDdl, ensureDemo } from '../../../src/warehouse/setup';
import { DATABASE, ENGINE_TIME_ZONE, ROLLUP_DATABASE, TEST_CALENDAR_END_DATE, TEST_DEMO, TEST_END_DATE } from './constants';

/**
 * Builds one small demo dataset in a fresh temporary chDB directory for the
 * whole run; each worker copies it before its first test (worker-data.ts).
 * Both live in the run's temporary directory (test/support/run-temp.ts).
 */
export default async function globalSetup(): Promise<void> {
  // The engine takes its time zone from the machine (chDB: TZ or /etc/localtime; a server: its setting). Everything
  // the service writes and asks is in UTC whatever that zone is: a run in a zone 14 hours from UTC, set before this
  // process and the workers start their engines, shows any statement that leans on the engine's own zone.
  process.env.TZ = ENGINE_TIME_ZONE;
  process.env.TEST_END_DATE = TEST_END_DATE.toISOString().slice(0, 10);
  makeRunTemp('integration');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'analytics-api-test-'));
  process.env.TEST_CHDB_DATA_BASE = dataDir;
  const warehouse = await openWarehouse({ kind: 'chdb', dataDir, database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
  await applyDdl(warehouse);
  await ensureDemo(warehouse, TEST_DEMO, createLogger('error'), {
    endDate: TEST_END_DATE,
    calendarEndDate: TEST_CALENDAR_END_DATE,
    unprovenRows: 'move-aside',
  });
  await warehouse.close();
  await drainPending();
}
