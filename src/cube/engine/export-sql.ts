import { formatMySql } from '@cubejs-backend/shared';
import { ServiceError } from '../../errors';
import { TIES_AS_READ } from './dialect';

/**
 * The SQL an export runs: the very SQL Cube generates for the query and the
 * key (the models' account filter, the dialect, rollups), as its load would
 * run it, with Cube's column aliases renamed to the members' names, so the
 * engine writes the file's header itself.
 */
export interface ExportSql {
  /** Cube's statement, parameters in place, its limit the one asked for. */
  sql: string;
  /** The answer's columns in the order a load answer gives them: Cube's alias and the member's name. */
  columns: { alias: string; member: string }[];
}

type Loose = Record<string, any>;

/** The parts of Cube's API gateway this reads: plain JavaScript methods of 0.33's gateway. */
export interface SqlGateway {
  getNormalizedQueries(query: Loose, context: Loose, persistent: boolean): Promise<[string, Loose[]]>;
  getSqlQueriesInternal(context: Loose, normalized: Loose[]): Promise<Loose[]>;
}

/**
 * Cube's SQL for one query with `limit` rows at most. Cube's `persistent`
 * normalization, the one its own streaming path uses, is the one that takes a
 * limit above the gateway's maximum (row-limits.ts): an export has caps of its own.
 */
export async function generateExportSql(gateway: SqlGateway, query: Loose, gatewayContext: Loose): Promise<ExportSql> {
  let sqlQuery: Loose;
  try {
    const [queryType, normalized] = await gateway.getNormalizedQueries(query, gatewayContext, true);
    // Admission let only one regular query through (query/admit.ts refuseInExport); anything else is our bug.
    if (queryType !== 'regularQuery' || normalized.length !== 1) throw new Error(`an export reached Cube as ${normalized.length} ${queryType}`);
    [sqlQuery] = await gateway.getSqlQueriesInternal(
      gatewayContext,
      normalized.map((one) => ({ ...one, [TIES_AS_READ]: true })),
    );
  } catch (err) {
    // Cube's verdicts on the query are UserErrors; anything else is ours.
    if (err instanceof Error && err.constructor.name === 'UserError') throw new ServiceError('invalid_query', err.message);
    throw err;
  }
  const [text, params] = sqlQuery.sql as [string, unknown[]];
  const aliases = sqlQuery.aliasNameToMember as Record<string, string>;
  return { sql: formatMySql(text, params), columns: columnsInLoadOrder(query, aliases) };
}

/**
 * Cube selects dimensions, then time dimensions with a granularity, then
 * measures, each in the query's order; anything its aliases hold beyond that
 * follows.
 */
function columnsInLoadOrder(query: Loose, aliases: Record<string, string>): ExportSql['columns'] {
  const aliasOf = new Map(Object.entries(aliases).map(([alias, member]) => [member, alias]));
  const wanted: string[] = [
    ...(query.dimensions ?? []),
    ...(query.timeDimensions ?? []).filter((td: Loose) => td.granularity).map((td: Loose) => `${td.dimension}.${td.granularity}`),
    ...(query.measures ?? []),
  ];
  const members = [...new Set([...wanted.filter((m) => aliasOf.has(m)), ...aliasOf.keys()])];
  return members.map((member) => ({ alias: aliasOf.get(member)!, member }));
}
