import { ClickHouseDriver } from '@cubejs-backend/clickhouse-driver';
// How the driver words a failed statement, which errors.ts reads.
import { formatError } from '@cubejs-backend/clickhouse-driver/dist/src/utils.js';
// The driver's own parameter formatting (its `query` uses it too).
import { formatMySql } from '@cubejs-backend/shared';
import type { ClickHouseClient, ClickHouseClientConfigOptions } from '@clickhouse/client';
import type { QueryLimits, Warehouse } from '../../warehouse/connection';
import { statementTicket, type Ticket } from '../../warehouse/statement-queue';
import { markDriverError } from './errors';
import { BuildStamps } from './build-stamps';
import { jsonLinesInSlices } from './row-reader';

/** What the driver finds of the load a statement serves: its ticket in the statement queue, and the timing its time adds to. */
export interface StatementsOf {
  ticket: Ticket;
  timing?: { warehouseMs: number };
}

/** Statements of no load in flight: Cube's background work. */
const BACKGROUND: Ticket = { lane: 'background' };

/** Column names, then their types, then one JSON array a row: the format of the driver's own stream(). */
export const ROW_FORMAT = 'JSONCompactEachRowWithNamesAndTypes';

/**
 * Cube's ClickHouse driver, with its clients made by our warehouse module:
 * the driver keeps its SQL dialect, settings, result parsing and
 * cancellation, while the transport is chDB in-process or a ClickHouse
 * server, whichever the warehouse is. Its clients are the warehouse's query
 * clients: read-only and held to the query limits. Each statement is sent
 * under the ticket of the load Cube names by its request id (`loadOf`),
 * which decides its place in the statement queue, and adds its time to the
 * load's timing; a statement of no known load (a background refresh after
 * its request ended) waits in a lane of its own.
 *
 * The one exception to read-only: the statements that build Cube's rollups
 * (isRollupWrite) go through the warehouse's rollup client instead, which
 * may write. Cube sends them through the same driver methods as queries.
 */
export function createDriverFactory(
  warehouse: Warehouse,
  limits: QueryLimits,
  loadOf: (requestId: string | undefined) => StatementsOf | undefined,
  /** Time and memory of one rollup build (CUBE_ROLLUP_BUILD_*); the query limits otherwise. */
  buildLimits: Pick<QueryLimits, 'timeoutMs' | 'maxMemoryBytes'> = limits,
): () => ClickHouseDriver {
  const Driver = warehouseDriver({ warehouse, limits, rollupLimits: { ...limits, ...buildLimits }, loadOf, buildStamps: new BuildStamps() });
  return () => new Driver({ database: warehouse.config.database, readOnly: true, requestTimeout: limits.timeoutMs });
}

/** What the drivers of one factory share. */
interface DriverSetup {
  warehouse: Warehouse;
  limits: QueryLimits;
  rollupLimits: QueryLimits;
  loadOf: (requestId: string | undefined) => StatementsOf | undefined;
  buildStamps: BuildStamps;
}

/**
 * The driver's class for one factory. A class made in a closure rather than
 * one holding its setup in a field: ClickHouseDriver's constructor calls
 * createClient before a subclass's fields exist.
 */
function warehouseDriver(setup: DriverSetup) {
  const { warehouse, limits, loadOf, buildStamps } = setup;
  const { rollupDatabase } = warehouse.config;
  const RollupWriter = rollupWriter(setup);

  return class WarehouseDriver extends RowReadingDriver {
    private writer?: InstanceType<typeof RollupWriter>;

    /** When Cube names a rollup table it is about to build (BuildStamps). */
    override nowTimestamp(): number {
      return buildStamps.next();
    }

    override async getTablesQuery(schemaName: string): ReturnType<ClickHouseDriver['getTablesQuery']> {
      const tables = await super.getTablesQuery(schemaName);
      buildStamps.saw(tables.map((t) => t.table_name ?? ''));
      return tables;
    }

    private rollupWriter(): InstanceType<typeof RollupWriter> {
      this.writer ??= new RollupWriter({ database: warehouse.config.database, requestTimeout: setup.rollupLimits.timeoutMs, maxPoolSize: 1 });
      return this.writer;
    }

    protected override createClient(maxPoolSize: number): ClickHouseClient {
      return warehouse.queryClient(limits, clientOptions(this.config, maxPoolSize, 'analytics-data-query-service'));
    }

    // Cube's queue passes the queued request, with its requestId, as the options.
    override async query<R = unknown>(query: string, values: unknown[], options?: { requestId?: string }): Promise<R[]> {
      const load = loadOf(options?.requestId);
      const started = performance.now();
      try {
        return await statementTicket.run(load?.ticket ?? BACKGROUND, () =>
          isRollupWrite(query, rollupDatabase) ? this.rollupWriter().query<R>(query, values, options) : this.rowsOf<R>(query, values, options),
        );
      } finally {
        // Its wait in the statement queue included.
        if (load?.timing) load.timing.warehouseMs += performance.now() - started;
      }
    }

    // Cube creates the rollup database and drops old rollup tables with commands.
    override async command(query: string, options?: { requestId?: string }): Promise<void> {
      await statementTicket.run(loadOf(options?.requestId)?.ticket ?? BACKGROUND, () =>
        isRollupWrite(query, rollupDatabase) ? this.rollupWriter().command(query, options) : super.command(query, options),
      );
    }

    override async release(): Promise<void> {
      await Promise.all([super.release(), this.writer?.release()]);
    }
  };
}

/** The driver of rollup builds' statements, on the warehouse's rollup client (the one that may write). */
function rollupWriter({ warehouse, rollupLimits }: DriverSetup) {
  return class RollupWriter extends ClickHouseDriver {
    // Cube fills a rollup table with a CREATE … AS SELECT sent as a query,
    // whose answer the driver parses as JSON; ClickHouse answers such a
    // statement with nothing. Sent as a command, it answers no rows.
    override async query<R = unknown>(query: string, values: unknown[], options?: { requestId?: string }): Promise<R[]> {
      await this.command(formatMySql(query, values), options);
      return [];
    }

    protected override createClient(maxPoolSize: number): ClickHouseClient {
      return warehouse.rollupClient(rollupLimits, clientOptions(this.config, maxPoolSize, 'analytics-data-query-service rollups'));
    }
  };
}

/**
 * Cube's ClickHouse driver reading answers as this service needs them:
 * 64-bit integers as strings, a slice of rows at a time, Float64 without
 * binary noise, and errors with what their cause chain knows.
 */
class RowReadingDriver extends ClickHouseDriver {
  constructor(...args: ConstructorParameters<typeof ClickHouseDriver>) {
    super(...args);
    // chDB writes 64-bit integers in JSON unquoted, and a JavaScript number past 2^53 is another number: a UInt64
    // sum or key would come back rounded, with no error. Quoted, it stays the string of digits the API answers.
    this.config.clickhouseSettings = { ...this.config.clickhouseSettings, output_format_json_quote_64bit_integers: 1 };
  }

  /**
   * The driver's query (its queryResponse, then normaliseResponse), with
   * the answer read a slice of rows at a time: the driver asks for
   * JSONCompact and parses the whole answer with one JSON.parse, then
   * turns every row into an object, in one synchronous piece that held the
   * event loop for hundreds of milliseconds on a 50,000-row answer. Here
   * ClickHouse writes the same values one row a line (its JSON formats
   * share one writer of values, settings included), each slice of lines
   * is parsed on its own turn of the event loop, and the driver's own
   * normaliseResponse turns the slice's rows into the objects it returns.
   */
  protected async rowsOf<R>(query: string, values: unknown[], options?: { requestId?: string }): Promise<R[]> {
    const sql = formatMySql(query, values).trim().replace(/;+$/, '');
    try {
      return await this.withCancel(async (client, queryId, signal) => {
        try {
          const answer = await client.exec({
            query: `${sql}\nFORMAT ${ROW_FORMAT}`,
            query_id: queryId,
            clickhouse_settings: this.config.clickhouseSettings,
            abort_signal: signal,
          });
          const format = answer.response_headers['x-clickhouse-format'];
          if (format && format !== ROW_FORMAT)
            throw new Error(`Unexpected x-clickhouse-format in response: expected ${ROW_FORMAT}, received ${String(format)}`);
          return await this.normalisedInSlices<R>(answer.stream as AsyncIterable<Uint8Array>);
        } catch (err) {
          throw new Error(`Query failed: ${formatError(err)}; query id: ${queryId}`, { cause: err });
        }
      }, options);
    } catch (err) {
      throw markDriverError(err);
    }
  }

  private async normalisedInSlices<R>(chunks: AsyncIterable<Uint8Array>): Promise<R[]> {
    const header: unknown[] = [];
    let meta: { name: string; type: string }[] = [];
    const rows: R[] = [];
    for await (const lines of jsonLinesInSlices(chunks)) {
      while (header.length < 2 && lines.length > 0) header.push(lines.shift());
      if (header.length < 2 || lines.length === 0) continue;
      if (meta.length === 0) {
        const [names, types] = header as string[][];
        meta = names.map((name, i) => ({ name, type: types[i] }));
      }
      for (const row of this.normaliseResponse<R>({ meta, data: lines } as unknown as Parameters<ClickHouseDriver['normaliseResponse']>[0])) rows.push(row);
    }
    return rows;
  }

  protected override normaliseResponse<R = unknown>(res: Parameters<ClickHouseDriver['normaliseResponse']>[0]): R[] {
    return withoutBinaryNoise(super.normaliseResponse<R>(res), res.meta);
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

type ClientSettings = ClickHouseClientConfigOptions['clickhouse_settings'];
type ClientCompression = ClickHouseClientConfigOptions['compression'];

/** The client options the driver itself would use, for one of the warehouse's clients. */
function clientOptions(
  config: { clickhouseSettings?: ClientSettings; compression?: ClientCompression; requestTimeout?: number },
  maxPoolSize: number,
  application: string,
) {
  return {
    clickhouse_settings: config.clickhouseSettings,
    compression: config.compression,
    request_timeout: config.requestTimeout,
    max_open_connections: maxPoolSize,
    application,
  };
}

/**
 * Whether a statement is one of a rollup build's: creating the rollup
 * database, or creating, filling, indexing, renaming or dropping a table in it. The
 * table name must be qualified with that database; nothing else may write.
 */
export function isRollupWrite(sql: string, rollupDatabase: string): boolean {
  const db = rollupDatabase.replace(/[^A-Za-z0-9_]/g, '');
  const table = `\`?${db}\`?\\.`;
  const forms = [
    `CREATE\\s+DATABASE\\s+IF\\s+NOT\\s+EXISTS\\s+\`?${db}\`?\\s*$`,
    `CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?${table}`,
    `INSERT\\s+INTO\\s+${table}`,
    // Cube adds a rollup's declared indexes after creating its table.
    `ALTER\\s+TABLE\\s+${table}[^\\s;]+\\s+ADD\\s+INDEX\\s`,
    `DROP\\s+TABLE\\s+(IF\\s+EXISTS\\s+)?${table}[^\\s;]+\\s*$`,
    `RENAME\\s+TABLE\\s+${table}[^\\s;]+\\s+TO\\s+${table}[^\\s;]+\\s*$`,
  ];
  return new RegExp(`^\\s*(${forms.join('|')})`, 'i').test(sql);
}

/**
 * A Float64 holds about 15.95 significant decimal digits; a sum or an average
 * of floats carries the error of every addition in its last one or two
 * (61848.5 summed as 61848.499999999956). Each Float64 of an answer, whatever
 * measure, dimension or rollup it comes from, is written with the 15
 * significant digits it holds: 61848.5. Other types (integers beyond 2^53,
 * decimals) are left exactly as ClickHouse wrote them.
 */
export function withoutBinaryNoise<R>(rows: R[], meta: { name: string; type: string }[] | undefined): R[] {
  const floats = (meta ?? []).filter((column) => /^(Nullable\()?Float64\)?$/.test(column.type)).map((column) => column.name);
  if (floats.length === 0) return rows;
  for (const row of rows as Record<string, unknown>[]) {
    for (const name of floats) {
      const value = row[name];
      if (typeof value === 'number') row[name] = rounded(value);
      else if (typeof value === 'string' && value !== '') row[name] = String(rounded(Number(value)));
    }
  }
  return rows;
}

function rounded(value: number): number {
  return Number.isFinite(value) ? Number(value.toPrecision(15)) : value;
}
