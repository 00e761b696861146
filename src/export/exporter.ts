import type { Config } from '../config';
import { classifyGatewayError, CubeFailure } from '../cube/errors';
import { withNumericPaging } from '../query/paging';
import { refuse } from '../query/rules';
import type { CubeService, Query, RequestContext } from '../cube/service';
import type { Warehouse } from '../warehouse/connection';
import { statementTicket } from '../warehouse/statement-queue';
import type { ExportFormat } from './formats';

/** What left rows out of an export: the query's own limit, or one of the export caps. */
export type CutBy = 'limit' | 'EXPORT_MAX_ROWS' | 'EXPORT_MAX_BYTES';

export interface OpenedExport {
  /** The members, in the order of the file's columns. */
  members: string[];
  /** Rows the file may hold at most: the query's limit or EXPORT_MAX_ROWS, whichever is less. */
  rows: number;
  /** What cuts the file at `rows`. */
  rowCap: CutBy;
  /**
   * Known before the first byte for the formats the engine is told the
   * exact row count for (csv, parquet): whether `rows` left rows out.
   * Undefined for ndjson, whose closing line says it.
   */
  truncated?: boolean;
  /** The engine's bytes; they hold one row more than `rows` when truncated is undefined and rows were left out. */
  chunks: AsyncIterable<Uint8Array>;
}

export interface Exporter {
  /** Checks the query, generates Cube's SQL for it and starts the engine on it; rejects before any byte is written. */
  open(query: Query, format: ExportFormat, context: RequestContext, signal: AbortSignal): Promise<OpenedExport>;
}

export interface ExporterOptions {
  cube: Pick<CubeService, 'exportSql'>;
  warehouse: Pick<Warehouse, 'stream'>;
  limits: Pick<Config['query'], 'timeoutMs' | 'maxMemoryBytes'>;
  caps: Config['exports'];
}

/**
 * Exports run Cube's own SQL for the query and the key (CubeService.exportSql),
 * so an export holds what the load of the same query answers, in the same
 * order, and the account's filter is in it. The engine writes the file: its
 * columns renamed to the members' names around Cube's statement, in the
 * format asked for. Each statement waits its turn in the statement queue in
 * the key's lane, like a load's, and is held to the query time and memory
 * limits.
 */
export function createExporter({ cube, warehouse, limits, caps }: ExporterOptions): Exporter {
  const stream = (query: string, format: string, settings: Record<string, string | number>, maxResultRows: number, context: RequestContext, signal: AbortSignal) =>
    statementTicket.run({ lane: context.lane ?? 'unnamed', signal }, () =>
      warehouse.stream({ query, format, settings, signal, limits: { timeoutMs: limits.timeoutMs, maxMemoryBytes: limits.maxMemoryBytes, maxResultRows } }),
    );

  return {
    async open(sent, format, context, signal) {
      const query = withNumericPaging(sent);
      const { limit } = query;
      if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
        refuse('paging', '"limit" must be a whole number of at least 1.');
      }
      const rows = Math.min(limit ?? caps.maxRows, caps.maxRows);
      const rowCap: CutBy = limit !== undefined && limit <= caps.maxRows ? 'limit' : 'EXPORT_MAX_ROWS';
      // One row more than the file may hold: whether it exists says whether rows were left out.
      const { sql, columns } = await cube.exportSql(query, rows + 1, context);
      const projection = columns.map(({ alias, member }) => `${quoteName(alias)} AS ${quoteName(member)}`).join(', ');
      const members = columns.map((c) => c.member);
      try {
        if (format.records === 'lines') {
          return { members, rows, rowCap, chunks: await stream(`SELECT ${projection} FROM (${sql})`, format.clickhouse, format.settings, rows + 1, context, signal) };
        }
        // A CSV header or a Parquet file says nothing after its first byte, so
        // the extra row is counted first, by a statement of its own.
        const counted = await stream(`SELECT count() FROM (${sql})`, 'TabSeparated', {}, 1, context, signal);
        let text = '';
        for await (const chunk of counted) text += Buffer.from(chunk).toString('utf8');
        const truncated = Number(text.trim()) > rows;
        return { members, rows, rowCap, truncated, chunks: await stream(`SELECT ${projection} FROM (${sql}) LIMIT ${rows}`, format.clickhouse, format.settings, rows, context, signal) };
      } catch (err) {
        throw exportFailure(err, signal);
      }
    },
  };
}

/** A failure of the engine as the error envelope names it; a stop asked for (the client left, the deadline) as its reason. */
export function exportFailure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof CubeFailure) return err;
  return classifyGatewayError(500, { error: err instanceof Error ? err.message : String(err) });
}

/** A ClickHouse name in backquotes. */
function quoteName(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}
