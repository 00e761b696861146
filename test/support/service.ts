import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { parseConfig, type Config } from '../../src/config';
import { createCubeService, type CubeServiceOptions } from '../../src/cube/service';
import { createApp } from '../../src/http/app';
import { createAuthenticator } from '../../src/keys/authenticator';
import { openKeyRing } from '../../src/keys/ring';
import { createKey } from '../../src/keys/store';
import { createLogger } from '../../src/log';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection';
import { API_KEY } from './constants';

export function testDataDir(): string {
  const dir = process.env.TEST_CHDB_DATA_DIR;
  if (!dir) throw new Error('TEST_CHDB_DATA_DIR is not set: run the tests through jest (global setup builds the data)');
  return dir;
}

export interface TestService {
  app: Express;
  config: Config;
  /** The service's own engine connection, e.g. to time SQL beside the service's answers. */
  warehouse: Warehouse;
  /** A key of each account asked for in `accounts`, by account id. */
  accountKeys: Record<string, string>;
  close(): Promise<void>;
}

export interface TestServiceOptions extends Partial<Pick<CubeServiceOptions, 'continueWaitSeconds' | 'schemaPath'>> {
  /** Accounts to make a key for, in the service's own fresh key file. */
  accounts?: readonly string[];
  /** Receives the service's log lines (info and up); silent otherwise. */
  log?: (line: string) => void;
}

/**
 * The real service (real Cube, real chDB) on the suite's dataset, without a
 * listening socket. API_KEY is its operator key (every account).
 */
export async function startService(env: Record<string, string> = {}, options: TestServiceOptions = {}): Promise<TestService> {
  const { accounts = [], log, ...cubeOptions } = options;
  const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'analytics-api-keys-')), 'api-keys.json');
  const accountKeys: Record<string, string> = {};
  for (const account of accounts) {
    accountKeys[account] = (await createKey(keyFile, { account, name: `test ${account}` })).key;
  }
  const config = parseConfig({
    NODE_ENV: 'test',
    API_KEYS: API_KEY,
    CHDB_DATA_DIR: testDataDir(),
    API_KEYS_FILE: keyFile,
    // Property and abuse tests send thousands of requests from one address; rate-limit tests set their own.
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_UNAUTHENTICATED: '1000000',
    ...env,
  });
  const logger = log ? createLogger('info', log) : createLogger('error', () => {});
  const warehouse = await openWarehouse(config.warehouse);
  const ring = await openKeyRing({ file: config.keys.file, reloadIntervalMs: config.keys.reloadIntervalMs, logger });
  const authenticator = createAuthenticator({ operatorKeys: config.apiKeys, ring });
  const cube = createCubeService({ warehouse, query: config.query, logger, ...cubeOptions });
  return {
    app: createApp({ config, cube, authenticator, logger }),
    config,
    warehouse,
    accountKeys,
    close: async () => {
      ring.close();
      await cube.close();
      await warehouse.close();
    },
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
