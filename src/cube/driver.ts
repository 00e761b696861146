import { ClickHouseDriver } from '@cubejs-backend/clickhouse-driver';
import type { ClickHouseClient } from '@clickhouse/client';
import type { QueryLimits, Warehouse } from '../warehouse/connection';
import { statementTicket, type Ticket } from '../warehouse/statement-queue';
import { markDriverError } from './errors';

/**
 * Cube's ClickHouse driver, with its clients made by our warehouse module:
 * the driver keeps its SQL dialect, settings, result parsing and
 * cancellation, while the transport is chDB in-process or a ClickHouse
 * server, whichever the warehouse is. Its clients are the warehouse's query
 * clients: read-only and held to the query limits. Each statement is sent
 * under the ticket of the request Cube names (`ticketOf`), which decides its
 * place in the statement queue; a statement of no known request (a
 * background refresh after its request ended) waits in a lane of its own.
 */
export function createDriverFactory(
  warehouse: Warehouse,
  limits: QueryLimits,
  ticketOf: (requestId: string | undefined) => Ticket | undefined,
  /** Told how long each statement took (its wait in the statement queue included), with the id of the request Cube names. */
  onStatement: (requestId: string | undefined, ms: number) => void = () => {},
): () => ClickHouseDriver {
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

    // Cube's queue passes the queued request, with its requestId, as the options.
    override async query<R = unknown>(query: string, values: unknown[], options?: { requestId?: string }): Promise<R[]> {
      const ticket = ticketOf(options?.requestId) ?? { lane: 'background' };
      const started = performance.now();
      try {
        return await statementTicket.run(ticket, () => super.query<R>(query, values, options));
      } finally {
        onStatement(options?.requestId, performance.now() - started);
      }
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
