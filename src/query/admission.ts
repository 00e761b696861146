import type { Request } from 'express';
import type { Config } from '../config';
import { admitQueries, refuseInExport, refuseMultiOnly } from './admit';
import type { DateRangeReader } from './date-range';
import type { ModelMembers } from './members';
import { pagingOf, withNumericPaging } from './paging';
import { oneQueryOf, queryOrListOf, readQueryRequest, type Query } from './request';
import { refuse } from './rules';
import { checkQuerySize } from './size';

/**
 * What admission asks of the models, which src/cube/ answers: the serving
 * models' members, and how Cube reads a date-range phrase.
 */
export interface AdmissionModel {
  members(): Promise<ModelMembers>;
  readDateRange: DateRangeReader;
}

/** The kinds of route a query comes by: each reads its query its own way and holds it to its own rules. */
export interface Admitted {
  /** /v1/data/load: one query in the spec's shape, or with `queryType: "multi"` Cube's multi shape. */
  load: { multi: false; query: Query } | { multi: true; query: Query | Query[] };
  /** /cubejs-api/v1/load. */
  'cubejs-load': { multi: boolean; query: Query | Query[] };
  /** /cubejs-api/v1/sql and dry-run: nothing runs, so any query or array. */
  'cubejs-sql': { query: Query | Query[] };
  /** /v1/data/export: one query, its `limit` (if any) a whole number of at least 1. */
  export: { query: Query };
}

export type QueryRoute = keyof Admitted;

export interface Admission {
  /**
   * The one entry point of query admission: reads the query of `req` as
   * `route` takes it and holds it to every rule of src/query/rules.ts, stage
   * by stage (request, size, model); resolves with the query as Cube is to
   * run it (`limit` and `offset` digits read as numbers), or rejects with
   * the first rule's QueryRefusal. `onModelStage` hears the queries as the
   * model stage takes them: the query metrics time a load from there.
   */
  admit<R extends QueryRoute>(route: R, req: Request, onModelStage?: (queries: readonly Query[]) => void): Promise<Admitted[R]>;
}

const EXPORT_ONE = 'An export answers one query: the "query" field must be a JSON object (no queryType "multi").';

export function createAdmission(limits: Config['query'], model: AdmissionModel): Admission {
  const { readDateRange } = model;
  const listOf = (query: Query | Query[]) => (Array.isArray(query) ? query : [query]);
  const sized = <Q extends Query | Query[]>(query: Q, sizeLimits = limits): Q => {
    checkQuerySize(listOf(query), sizeLimits, readDateRange);
    return query;
  };
  const modelStage = async <Q extends Query | Query[]>(query: Q, onModelStage?: (queries: readonly Query[]) => void): Promise<Q> => {
    onModelStage?.(listOf(query));
    admitQueries(query, await model.members(), readDateRange);
    return query;
  };
  /** Cube's own API reads `query` as an object or an array whatever its queryType (Cube's routes do). */
  const cubeQueryOf = (req: Request) => {
    const { query, queryType } = readQueryRequest(req);
    return { query: pagingOf(sized(queryOrListOf(query))), multi: queryType === 'multi' };
  };

  const routes: { [R in QueryRoute]: (req: Request, onModelStage?: (queries: readonly Query[]) => void) => Promise<Admitted[R]> } = {
    load: async (req, onModelStage) => {
      const { query, queryType } = readQueryRequest(req);
      if (queryType === 'multi') return { multi: true, query: await modelStage(pagingOf(sized(queryOrListOf(query))), onModelStage) };
      const one = sized(oneQueryOf(query));
      refuseMultiOnly(one);
      return { multi: false, query: await modelStage(withNumericPaging(one), onModelStage) };
    },
    'cubejs-load': async (req, onModelStage) => {
      const { query, multi } = cubeQueryOf(req);
      if (!multi) refuseMultiOnly(query);
      return { multi, query: await modelStage(query, onModelStage) };
    },
    'cubejs-sql': async (req, onModelStage) => ({ query: await modelStage(cubeQueryOf(req).query, onModelStage) }),
    export: async (req, onModelStage) => {
      const sent = readQueryRequest(req);
      // An export's limit is held to EXPORT_MAX_ROWS (the exporter), not to a load's QUERY_MAX_LIMIT.
      const query = sized(oneQueryOf(sent.queryType === 'multi' ? undefined : sent.query, EXPORT_ONE), { ...limits, maxLimit: Number.POSITIVE_INFINITY });
      refuseInExport(query);
      const paged = withNumericPaging(query);
      const { limit } = paged;
      if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
        refuse('paging', '"limit" must be a whole number of at least 1.');
      }
      return { query: await modelStage(paged, onModelStage) };
    },
  };

  return {
    admit: (route, req, onModelStage) => routes[route](req, onModelStage),
  };
}
