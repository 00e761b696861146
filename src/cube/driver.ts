import { ClickHouseDriver } from '@cubejs-backend/clickhouse-driver';
import type { ClickHouseClient } from '@clickhouse/client';
import type { QueryLimits, Warehouse } from '../warehouse/connection';
import { markDriverError } from './errors';

/**
 * Cube's ClickHouse driver, with its clients made by our warehouse module:
 * the driver keeps its SQL dialect, settings, result parsing and
 * cancellation, while the transport is chDB in-process or a ClickHouse
 * server, whichever the warehouse is. Its clients are the warehouse's query
 * clients: read-only and held to the query limits.
 */
export function createDriverFactory(warehouse: Warehouse, limits: QueryLimits): () => ClickHouseDriver {
  // A closure rather than a field: ClickHouseDriver's constructor calls
  // createClient before a subclass's fields exist.
  class WarehouseDriver extends ClickHouseDriver {
    protected override createClient(maxPoolSize: number): ClickHouseClient {
      return warehouse.queryClient(limits, {
        clickhouse_settings: this.config.clickhouseSettings,
        compression: this.config.compression,
        request_timeout: this.config.requestTimeout,
        max_open_connections: maxPoolSize,
        application: 'analytics-data-query-service',
      });
    }

    // Every statement (the connection test Cube runs first included) goes
    // through here, where the error object still has its codes.
    protected override async queryResponse(...args: Parameters<ClickHouseDriver['queryResponse']>) {
      try {
        return await super.queryResponse(...args);
      } catch (err) {
        throw markDriverError(err);
      }
    }
  }
  return () =>
    new WarehouseDriver({
      database: warehouse.config.database,
      readOnly: true,
      requestTimeout: limits.timeoutMs,
    });
}
