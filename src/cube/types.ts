import type { Config } from '../config';
import type { LoadAnswer } from './answer';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/registry';
import type { RequestTiming } from '../metrics/request-timing';
import type { Warehouse } from '../warehouse/connection';
import type { AdmissionModel } from '../query/admission';
import type { Query } from '../query/request';
import type { ExportSql } from './engine/export-sql';
import type { DataChange } from './freshness';
import type { ModelProblem } from './models/problems';
import type { GeneratedSql } from './models/validate';
import type { QueryTimer } from './query-metrics';
import type { LoadResult, MultiLoadResult, Schema } from './shapes';

/**
 * What the rest of the service asks of Cube (service.ts answers it): the
 * spec's meta and load, Cube's own API, the SQL of an export, and the models'
 * state. Queries reach it admitted (src/query/admission.ts), by the serving
 * models it lends admission (`admissionModel`).
 */
export interface CubeService {
  /** The serving models' members and Cube's reading of date phrases, which admission's model stage checks queries by. */
  admissionModel: AdmissionModel;
  /** A timer of one load in the query metrics. */
  queryTimer(): QueryTimer;
  meta(context: RequestScope): Promise<Schema[]>;
  /** One regular query, answered in the documented shape (spec 2.5). */
  load(query: Query, context: RequestScope): Promise<LoadAnswer<LoadResult>>;
  /** Any query Cube accepts, including compareDateRange and arrays of queries, as Cube's clients expect it. */
  loadMulti(query: Query | Query[], context: RequestScope): Promise<LoadAnswer<MultiLoadResult>>;
  /** Cube's own REST API (/cubejs-api/v1): Cube's meta, `{ cubes }`. */
  cubeMeta(context: RequestScope): Promise<{ cubes: Record<string, unknown>[] }>;
  /**
   * Cube's load answer. Only `multi` answers compareDateRange queries and
   * arrays of queries (Cube's multi shape); otherwise Cube's single result.
   */
  cubeLoad(query: Query | Query[], multi: boolean, context: RequestScope): Promise<LoadAnswer<Record<string, unknown>>>;
  /** The SQL and parameters Cube generates for the query under the context's account; nothing runs. */
  sql(query: Query | Query[], context: RequestScope): Promise<unknown>;
  /**
   * The SQL Cube generates for one query under the context's account, with
   * at most `limit` rows, for an export to run (export-sql.ts); nothing runs.
   */
  exportSql(query: Query, limit: number, context: RequestScope): Promise<ExportSql>;
  /** Cube's normalized queries, query type and pivot query; nothing runs. */
  dryRun(query: Query | Query[], context: RequestScope): Promise<unknown>;
  /**
   * Shutdown: loads not yet running in the warehouse answer `shutting_down`
   * now, new ones at once; loads with a statement running go on.
   */
  refuseNotStarted(): void;
  /**
   * Rows of these accounts were added (an import): forgets every answer
   * cached before (ours and Cube's, refresh keys too) and rebuilds the
   * rollups of these accounts and the operator's whose refresh keys turned.
   * Once it resolves, every answer through both APIs includes the rows.
   */
  dataChanged(changes: readonly DataChange[]): Promise<void>;
  /**
   * After an erasure and dataChanged: drops every rollup table a later build
   * of the same rollup and context replaced, which may still hold erased
   * rows' aggregates (a query still reading one fails). Returns the tables
   * dropped.
   */
  dropSupersededRollups(): Promise<number>;
  /**
   * Settles once the service is caught up with the data it started on: the
   * rollups rebuilt whose refresh keys turned. Loads and exports wait for it;
   * it never rejects (a failure is logged, and ends the wait).
   */
  caughtUp(): Promise<void>;
  models: {
    /**
     * Settles once the models are compiled and validated (the service is
     * ready to answer); rejects with ModelsInvalid, whose problems say why.
     */
    ready(): Promise<void>;
    /** Whether compiled, validated models are serving now. */
    compiled(): boolean;
    /** What the serving models were found to lack, short of a problem (`npm run models -- validate`). */
    warnings(): readonly ModelProblem[];
    /** The SQL and parameters Cube generates for a query (`npm run models -- sql`). */
    sql(query: Query, context: RequestScope): Promise<GeneratedSql>;
  };
  close(): Promise<void>;
}

export type { Query } from '../query/request';

/**
 * One request as the Cube adapter and the exporter serve it, passed along
 * with its work (src/http/scope.ts makes it): who it is, whose rows it may
 * read, its lane, its timing and its deadline.
 */
export interface RequestScope {
  /**
   * The server's own id of the request, unique per request. Cube hands it
   * to the driver and its log events, which find the load's ticket and
   * timing by it (in-flight.ts). Never the client's x-request-id, which two
   * requests may share.
   */
  requestId: string;
  /**
   * The account whose rows the query may read, or null for an operator,
   * who reads every account. Cube puts it in the SQL it generates (the
   * models' SECURITY_CONTEXT.accountId filters), and its SQL and result
   * caches are keyed by it.
   */
  accountId: string | null;
  /**
   * Whose turn it is in the warehouse's statement queue, taken round-robin
   * (the API key's id). Loads without one share a lane.
   */
  lane?: string;
  /** Where the request's time goes, for its Server-Timing header; absent for work no data route waits on. */
  timing?: RequestTiming;
  /**
   * Aborts when the request must give up (QUERY_TIMEOUT_SECONDS after it
   * reached its route), its reason the error to answer: statements still
   * waiting leave the queue, and the load or export answers it. Absent
   * where nothing runs (meta, SQL generation).
   */
  deadline?: AbortSignal;
}

export interface CubeServiceOptions {
  warehouse: Warehouse;
  query: Config['query'];
  logger: Logger;
  metrics: Metrics;
  /** Folder of model files (CUBE_MODELS_DIR); the repository's schema/ by default. */
  schemaPath?: string;
  /** Recompile when the model files change (outside production); otherwise they compile once. */
  watchModels?: boolean;
  /**
   * Milliseconds between looks at the model directory while watching it; 1 s when absent (an edit is served about
   * two looks later). Tests of reloading shorten it: what they check is what a look finds, not how often it looks.
   */
  modelsPollMs?: number;
  /** Seconds one gateway call waits before Cube answers "Continue wait". */
  continueWaitSeconds?: number;
  /** How often Cube's refresh worker builds the rollups, in seconds (CUBE_ROLLUP_REFRESH_SECONDS); 0 or absent: never. */
  rollupRefreshSeconds?: number;
  /** Time and memory of one rollup build (CUBE_ROLLUP_BUILD_*); the query limits when absent. */
  rollupBuildLimits?: { timeoutMs: number; maxMemoryBytes: number };
  /** What the funnel counts as a visit and a conversion (FUNNEL_VISIT, FUNNEL_CONVERSION). */
  funnel: Config['funnel'];
  /** How long each table's rows are kept: no answer counts a row past it (SQL_UTILS.retained). */
  retention: Config['retention'];
}
