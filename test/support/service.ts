import type { Express } from 'express';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { parseConfig, type Config } from '../../src/config';
import { createCubeService, type CubeServiceOptions } from '../../src/cube/service';
import { createApp } from '../../src/http/app';
import { createLogger } from '../../src/log';
import { openWarehouse } from '../../src/warehouse/connection';
import { API_KEY } from './constants';

export function testDataDir(): string {
  const dir = process.env.TEST_CHDB_DATA_DIR;
  if (!dir) throw new Error('TEST_CHDB_DATA_DIR is not set: run the tests through jest (global setup builds the data)');
  return dir;
}

export interface TestService {
  app: Express;
  config: Config;
  close(): Promise<void>;
}

/** The real service (real Cube, real chDB) on the suite's dataset, without a listening socket. */
export async function startService(
  env: Record<string, string> = {},
  cubeOptions: Partial<Pick<CubeServiceOptions, 'continueWaitSeconds' | 'schemaPath'>> = {},
): Promise<TestService> {
  const config = parseConfig({ NODE_ENV: 'test', API_KEYS: API_KEY, CHDB_DATA_DIR: testDataDir(), ...env });
  const logger = createLogger('error', () => {});
  const warehouse = await openWarehouse(config.warehouse);
  const cube = createCubeService({ warehouse, query: config.query, logger, ...cubeOptions });
  return {
    app: createApp({ config, cube, logger }),
    config,
    close: async () => {
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
  close(): Promise<void>;
}

export function openOracle(): Oracle {
  const connection = createChdbConnection({ path: testDataDir() });
  const client: ClickHouseClient = createClient({ connection: connection as never });
  const rows = async <T>(sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  return {
    rows,
    value: async (sql) => Number(Object.values((await rows<Record<string, unknown>>(sql))[0] ?? {})[0]),
    close: async () => connection.close(),
  };
}
