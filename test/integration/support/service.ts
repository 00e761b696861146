import type { Express } from 'express';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { assembleLocalService } from '../../../src/assembly';
import type { Config, LogLevel } from '../../../src/config';
import type { CubeService, CubeServiceOptions } from '../../../src/cube/service';
import type { ShutdownGate } from '../../../src/http/shutdown-gate';
import { createLogger, type Logger } from '../../../src/log';
import type { Metrics } from '../../../src/metrics/registry';
import type { Readiness } from '../../../src/readiness';
import type { Warehouse } from '../../../src/warehouse/connection';
import { API_KEY } from './constants';
import { withContractChecks } from './contract';

export function testDataDir(): string {
  const dir = process.env.TEST_CHDB_DATA_DIR;
  if (!dir) throw new Error('TEST_CHDB_DATA_DIR is not set: run the tests through jest (global setup builds the data)');
  return dir;
}

export interface TestService {
  app: Express;
  config: Config;
  /** The service's own registry and instruments (GET /metrics serves metrics.registry). */
  metrics: Metrics;
  /** A key of each account asked for in `accounts`, by account id. */
  accountKeys: Record<string, string>;
  cube: CubeService;
  warehouse: Warehouse;
  readiness: Readiness;
  gate: ShutdownGate;
  logger: Logger;
  close(): Promise<void>;
}

export interface TestServiceOptions extends Partial<Pick<CubeServiceOptions, 'continueWaitSeconds' | 'modelsPollMs' | 'schemaPath' | 'watchModels'>> {
  /** Accounts to make a key for, in the service's own fresh key file. */
  accounts?: readonly string[];
  /** Receives the service's log lines (info and up, or from `logLevel`); silent otherwise. */
  log?: (line: string) => void;
  logLevel?: LogLevel;
  /** Start only once the models compile and validate, as the service does (default); false to test broken models. */
  waitForModels?: boolean;
  /** Take files from the import command through the data directory's inbox, as `npm start` does. */
  importInbox?: boolean;
}

/**
 * The real service (real Cube, real chDB) on the suite's dataset, without a
 * listening socket. API_KEY is its operator key (every account). Under jest
 * its answers of the data routes are checked against the OpenAPI document
 * (see contract.ts).
 */
export async function startService(env: Record<string, string> = {}, options: TestServiceOptions = {}): Promise<TestService> {
  const { accounts = [], log, logLevel = 'info', waitForModels = true, watchModels = false, ...cubeOptions } = options;
  const logger = log ? createLogger(logLevel, log) : createLogger('error', () => {});
  const service = await assembleLocalService({
    env: {
      NODE_ENV: 'test',
      API_KEYS: API_KEY,
      CHDB_DATA_DIR: testDataDir(),
      // Property and abuse tests send thousands of requests from one address; rate-limit tests set their own.
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_UNAUTHENTICATED: '1000000',
      // No refresh worker building rollups behind a test's back (test/integration/rollups/refresh-worker.suite.ts turns it on).
      CUBE_ROLLUP_REFRESH_SECONDS: '0',
      // Nor a look for imports every few seconds (test/integration/import/answers-follow.suite.ts turns it on).
      DATA_REFRESH_SECONDS: '0',
      ...env,
    },
    accounts,
    logger,
    // Production watches the models outside NODE_ENV=production; here only the tests of reloading do.
    watchModels,
    waitForModels,
    ...cubeOptions,
  });
  // Tests start from a steady state: hours and rollups made for the data at start, not being made behind the test's back.
  await service.cube.caughtUp();
  const { config, accountKeys } = service;
  const { cube, warehouse, readiness, gate, metrics } = service;
  return {
    app: await withContractChecks(service.app),
    config,
    metrics,
    accountKeys,
    cube,
    warehouse,
    readiness,
    gate,
    logger,
    close: () => service.close(),
  };
}

/**
 * Direct SQL over the same chDB data, bypassing the service: the oracle that
 * expected values come from. Written by hand in each test, never generated
 * by Cube.
 */
export interface Oracle {
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** The first column of the first row, as a number. */
  value(sql: string): Promise<number>;
  /** A statement without an answer, e.g. rows a freshness test adds and removes. */
  command(sql: string): Promise<void>;
  close(): Promise<void>;
}

export function openOracle(): Oracle {
  const connection = createChdbConnection({ path: testDataDir() });
  const client: ClickHouseClient = createClient({ connection: connection as never });
  const rows = async <T>(sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  return {
    rows,
    value: async (sql) => Number(Object.values((await rows<Record<string, unknown>>(sql))[0] ?? {})[0]),
    command: async (sql) => {
      await client.command({ query: sql });
    },
    close: async () => connection.close(),
  };
}
