import { mkdirSync, readFileSync } from 'node:fs';
import { createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';

// chdb types its connection against the older @clickhouse/client-common
// package; the interface is the same one @clickhouse/client accepts.
type Connection = NonNullable<ClickHouseClientConfigOptions['connection']>;
import type { WarehouseConfig } from '../config';

/**
 * Where queries go: the chDB engine inside this process, or a ClickHouse
 * server. Both are reached through @clickhouse/client, so everything above
 * this module (Cube's ClickHouse driver, DDL, demo data) is the same code for
 * both.
 */
export interface Warehouse {
  readonly config: WarehouseConfig;
  /** A client with the given options; `close()` on it never closes the shared chDB engine. */
  client(options?: ClientOptions): ClickHouseClient;
  close(): Promise<void>;
}

export type ClientOptions = Omit<ClickHouseClientConfigOptions, 'url' | 'username' | 'password' | 'database' | 'connection' | 'tls'>;

export async function openWarehouse(config: WarehouseConfig): Promise<Warehouse> {
  return config.kind === 'chdb' ? openChdb(config) : openServer(config);
}

function openServer(config: Extract<WarehouseConfig, { kind: 'server' }>): Warehouse {
  const tls = config.caCertPath ? { ca_cert: readFileSync(config.caCertPath) } : undefined;
  return {
    config,
    client: (options = {}) =>
      createClient({
        ...options,
        url: config.url,
        username: config.username,
        password: config.password,
        database: config.database,
        tls,
      }),
    close: async () => {},
  };
}

async function openChdb(config: Extract<WarehouseConfig, { kind: 'chdb' }>): Promise<Warehouse> {
  mkdirSync(config.dataDir, { recursive: true });
  // libchdb binds one data directory per process, so every client shares one
  // connection, and closing a client must not close it: Cube's driver closes
  // the clients it makes, e.g. one per cancelled query.
  const connection = createChdbConnection({ path: config.dataDir });
  const shared: Connection = new Proxy(connection as unknown as Connection, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  // chDB ignores the client's `database` option; the session's current
  // database plays its part, so unqualified table names resolve as they do
  // on a server.
  const setup = createClient({ connection: shared });
  await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${config.database}` });
  await setup.command({ query: `USE ${config.database}` });
  return {
    config,
    client: (options = {}) => createClient({ ...options, connection: shared }),
    close: () => connection.close(),
  };
}
