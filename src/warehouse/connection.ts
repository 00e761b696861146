import { readFileSync } from 'node:fs';
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';
// Before chdb: the allocator's options are read when the library loads.
import './allocator';
import { drainPending } from 'chdb';
import { createChdbConnection } from 'chdb/connection';

// chdb types its connection against the older @clickhouse/client-common
// package; the interface is the same one @clickhouse/client accepts.
type Connection = NonNullable<ClickHouseClientConfigOptions['connection']>;
import type { WarehouseConfig } from '../config';
import { checkDataDir, WarehouseSetupError } from './data-dir';
import { settingsList } from './sql';
import { StatementQueue, statementTicket, type QueueObserver } from './statement-queue';

/**
 * Where queries go: the chDB engine inside this process, or a ClickHouse
 * server. Both are reached through @clickhouse/client, so everything above
 * this module (Cube's ClickHouse driver, DDL, demo data) is the same code for
 * both.
 */
export interface Warehouse {
  readonly config: WarehouseConfig;
  /** A client with the given options, for setting up (DDL, demo data); `close()` on it never closes the shared chDB engine. */
  client(options?: ClientOptions): ClickHouseClient;
  /**
   * A client for answering queries: every statement runs read-only
   * (`readonly = 2`, which still lets Cube's driver change its own
   * settings) and within the given limits, enforced by ClickHouse.
   */
  queryClient(limits: QueryLimits, options?: ClientOptions): ClickHouseClient;
  /**
   * The client that builds Cube's rollups, the one writer while serving:
   * not read-only, held to the time and memory limits. On a server it signs
   * in as CLICKHOUSE_ROLLUP_USER, whose grants should cover the rollup
   * database only; src/cube/engine/driver.ts sends it nothing but statements on
   * that database.
   */
  rollupClient(limits: QueryLimits, options?: ClientOptions): ClickHouseClient;
  /**
   * One read-only statement whose answer the engine writes in `format`,
   * handed over chunk by chunk as the consumer asks for the next, so no more
   * than a chunk is held: an export. Resolves once the statement has its turn
   * in the statement queue (the ticket of the calling context), which it
   * keeps until the consumer has read the last chunk or stopped reading
   * (`break`, or an error); stopping cancels the statement in the engine.
   * The consumer must iterate what it gets.
   */
  stream(statement: StreamStatement): Promise<AsyncIterable<Uint8Array>>;
  /** Whether a statement's file() reads this process's files: chDB's does; a server's reads the server's disk. */
  readonly readsLocalFiles: boolean;
  /** Resolves when the warehouse answers `SELECT 1` within `timeoutMs`; rejects saying why otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** Statements waiting for the embedded engine (always 0 for a server, which runs them in parallel). */
  queueDepth(): number;
  close(): Promise<void>;
}

export type ClientOptions = Omit<ClickHouseClientConfigOptions, 'url' | 'username' | 'password' | 'database' | 'connection' | 'tls'>;

export interface QueryLimits {
  timeoutMs: number;
  maxResultRows: number;
  maxMemoryBytes: number;
}

type Settings = Record<string, string | number>;

export interface StreamStatement {
  /** One SELECT, without FORMAT or SETTINGS clauses. */
  query: string;
  /** A ClickHouse output format, e.g. CSVWithNames, JSONEachRow, Parquet. */
  format: string;
  /** The format's settings. */
  settings: Settings;
  limits: QueryLimits;
  /** Aborting it stops the statement. */
  signal: AbortSignal;
  /**
   * Told each chunk's row count as it is handed over, on chDB (whose stream
   * counts them); a server's stream is bytes only and never calls it.
   */
  onRows?: (rows: number) => void;
}

function limitSettings(limits: QueryLimits): Settings {
  return { readonly: 2, ...statementLimits(limits) };
}

function statementLimits(limits: QueryLimits): Settings {
  return {
    max_execution_time: Math.ceil(limits.timeoutMs / 1000),
    timeout_overflow_mode: 'throw',
    max_result_rows: limits.maxResultRows,
    result_overflow_mode: 'throw',
    max_memory_usage: limits.maxMemoryBytes,
    // Keeps Cube's count(CASE WHEN … THEN 1 END) as ClickHouse reads it,
    // count(if(…)), the form the aggregate projections store (ddl.ts); the
    // rewrite to countIf would hide them from the query.
    optimize_rewrite_aggregate_function_with_if: 0,
  };
}

export async function openWarehouse(config: WarehouseConfig, queueObserver?: QueueObserver): Promise<Warehouse> {
  return config.kind === 'chdb' ? openChdb(config, queueObserver) : openServer(config);
}

function openServer(config: Extract<WarehouseConfig, { kind: 'server' }>): Warehouse {
  const tls = config.caCertPath ? { ca_cert: readCaCert(config.caCertPath) } : undefined;
  const client = (options: ClientOptions = {}) =>
    createClient({
      ...options,
      url: config.url,
      username: config.username,
      password: config.password,
      database: config.database,
      tls,
    });
  return {
    config,
    client,
    // A server applies settings per request, which is what limits need.
    queryClient: (limits, options = {}) => client({ ...options, clickhouse_settings: { ...options.clickhouse_settings, ...limitSettings(limits) } }),
    rollupClient: (limits, options = {}) =>
      createClient({
        ...options,
        url: config.url,
        username: config.rollupUsername,
        password: config.rollupPassword,
        database: config.database,
        tls,
        clickhouse_settings: { ...options.clickhouse_settings, ...statementLimits(limits) },
      }),
    stream: async ({ query, format, settings, limits, signal }) => {
      const streaming = client({ request_timeout: limits.timeoutMs });
      // The server runs statements side by side; ours is stopped when the request goes away.
      const answer = await streaming.exec({
        query: `${query}\nFORMAT ${format}`,
        clickhouse_settings: { ...limitSettings(limits), ...settings, cancel_http_readonly_queries_on_client_close: 1 },
        abort_signal: signal,
      });
      return closingAfter(answer.stream as AsyncIterable<Uint8Array>, () => streaming.close());
    },
    readsLocalFiles: false,
    ping: prober((timeoutMs) => client({ request_timeout: timeoutMs })),
    queueDepth: () => 0,
    close: async () => {},
  };
}

function readCaCert(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new WarehouseSetupError(`CLICKHOUSE_CA_CERT ${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function openChdb(config: Extract<WarehouseConfig, { kind: 'chdb' }>, queueObserver?: QueueObserver): Promise<Warehouse> {
  checkDataDir(config.dataDir);
  // libchdb binds one data directory per process, so every client shares one
  // connection, and closing a client must not close it: Cube's driver closes
  // the clients it makes, e.g. one per cancelled query.
  let connection: ReturnType<typeof createChdbConnection>;
  try {
    connection = createChdbConnection({ path: config.dataDir });
  } catch (err) {
    throw new WarehouseSetupError(
      `CHDB_DATA_DIR ${config.dataDir} could not be opened by chDB (is another process using it?): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const queue = new StatementQueue(queueObserver);
  const shared = serialized(connection as unknown as Connection, queue);
  // The client's own warnings are about HTTP (a long request_timeout without progress headers, which a load
  // balancer would cut): chDB has no socket, yet every start logged one for the rollup builds' client.
  const chdbClient = (options: ClickHouseClientConfigOptions) => createClient({ ...options, log: { level: ClickHouseLogLevel.ERROR } });
  // chDB ignores the client's `database` option; the session's current
  // database plays its part, so unqualified table names resolve as they do
  // on a server.
  const setup = chdbClient({ connection: shared });
  await setup.command({ query: `CREATE DATABASE IF NOT EXISTS ${config.database}` });
  await setup.command({ query: `USE ${config.database}` });
  return {
    config,
    client: (options = {}) => chdbClient({ ...options, connection: shared }),
    queryClient: (limits, options = {}) => chdbClient({ ...options, connection: withStatementSettings(shared, limitSettings(limits)) }),
    rollupClient: (limits, options = {}) => chdbClient({ ...options, connection: withStatementSettings(shared, statementLimits(limits)) }),
    stream: (statement) => streamFromChdb(connection as unknown as ChdbStreaming, queue, statement),
    readsLocalFiles: true,
    ping: prober(() => chdbClient({ connection: shared })),
    queueDepth: () => queue.depth,
    close: async () => {
      await connection.close();
      // chDB cannot stop a statement, so one whose caller stopped waiting (a timed-out query, an export whose
      // client left) runs on; a process that exits under it is killed by SIGSEGV. Each such statement ends within
      // its own max_execution_time.
      await drainPending();
    },
  };
}

/**
 * `SELECT 1` within a deadline. chDB cannot stop the statement it is running,
 * so the probe jumps the queue but still waits for that one; when it does not
 * answer in time the warehouse counts as busy, which is what a readiness probe
 * should report. One probe at a time: a probe still waiting is awaited again
 * rather than queued twice, so frequent probes never pile up behind a slow
 * statement.
 */
function prober(clientFor: (timeoutMs: number) => ClickHouseClient): (timeoutMs: number) => Promise<void> {
  let pending: Promise<unknown> | undefined;
  return async (timeoutMs) => {
    if (!pending) {
      const client = clientFor(timeoutMs);
      pending = statementTicket
        .run({ lane: 'readiness', urgent: true }, () => client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((rows) => rows.json()))
        .finally(() => {
          pending = undefined;
          void client.close();
        });
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`SELECT 1 did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([pending, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The one chDB connection, shared and never closed by a client. Statements
 * go one at a time (chDB runs them one at a time anyway), fairly across the
 * lanes of their tickets (see statement-queue.ts), because chDB 3.4 keeps the
 * output a statement wrote before failing (a row limit, a timeout) and hands
 * it out at the front of the next statement's answer, which would corrupt it
 * or show another query's rows. A throwaway statement right after every
 * failure, in the same turn of the queue, takes that output before any other
 * statement can run. Settings the session already holds are not SET again
 * (SessionSettings).
 */
function serialized(connection: Connection, queue: StatementQueue): Connection {
  const drain = () => connection.command({ query: 'SELECT 1 FORMAT Null' }).catch(() => undefined);
  const session = new SessionSettings();
  return new Proxy(connection, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'query' || property === 'exec' || property === 'command' || property === 'insert') {
        return (params: StatementParams) =>
          queue.run(() => {
            const sent = session.without(params);
            return (value as (p: unknown) => Promise<unknown>).call(target, sent).then(
              (answer) => {
                session.took(sent);
                return answer;
              },
              async (err: unknown) => {
                session.forget(sent);
                await drain();
                throw err;
              },
            );
          });
      }
      return value.bind(target);
    },
  });
}

interface StatementParams {
  query: string;
  clickhouse_settings?: Record<string, unknown>;
}

/** Text that may set a setting on the session itself (`SET x = 1`); a false alarm only sends settings again. */
const SETS_ITSELF = /\bSET\s+[\w.]+\s*=/i;

/**
 * What chDB's one session holds of the settings statements brought.
 * chDB's connection runs a statement's clickhouse_settings as SET statements
 * before it, on the session, where they hold until another SET changes
 * them: Cube's driver sends three (join_use_nulls, date_time_output_format,
 * output_format_json_quote_64bit_integers) with every query, each a
 * statement of its own for the engine: 0.5–1.2 ms of an uncached load
 * (`npm run bench:phases`). A setting
 * the session already holds at the same value is left out of the next
 * statement, which leaves the session as the full statement would. A
 * failed statement, or one whose own text sets something, leaves the
 * session unknown for its settings, which are sent again.
 */
export class SessionSettings {
  /** Each setting's value as chDB's connection writes it in its SET. */
  private readonly held = new Map<string, string>();

  without<P extends StatementParams>(params: P): P {
    const settings = params.clickhouse_settings;
    if (!settings || this.held.size === 0) return params;
    const left = Object.fromEntries(Object.entries(settings).filter(([name, value]) => this.held.get(name) !== rendered(value) || !isSet(name)));
    return Object.keys(left).length === Object.keys(settings).length ? params : { ...params, clickhouse_settings: left };
  }

  took(params: StatementParams): void {
    if (SETS_ITSELF.test(params.query)) {
      this.held.clear();
      return;
    }
    for (const [name, value] of Object.entries(params.clickhouse_settings ?? {})) {
      if (value !== undefined && isSet(name)) this.held.set(name, rendered(value));
    }
  }

  forget(params: StatementParams): void {
    if (SETS_ITSELF.test(params.query)) this.held.clear();
    for (const name of Object.keys(params.clickhouse_settings ?? {})) this.held.delete(name);
  }
}

/** chDB's connection passes default_format as an option of the call, not as a SET: it is never held. */
const isSet = (name: string) => name !== 'default_format';

/** One value as chDB's connection writes it into its SET: numbers bare (booleans as 0 or 1), the rest quoted. */
function rendered(value: unknown): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return typeof value === 'number' ? String(value) : `'${String(value)}'`;
}

/** The streaming query of chdb's connection, which its clickhouse-js connection (`query`, `exec`) does not use: those buffer the whole answer. */
interface ChdbStreaming {
  chdb: {
    queryStream(
      sql: string,
      options: { format: string; signal: AbortSignal },
    ): AsyncIterable<{ raw(): Uint8Array; readonly numRows: number }> & { readonly closed: boolean; cancel(): void };
  };
  command(params: { query: string }): Promise<unknown>;
}

/**
 * chDB's own streaming query: the engine produces the next chunk when the
 * last one has been taken. It runs alone: a statement started while a
 * stream is open ends that stream, so the stream holds its turn in the
 * statement queue from its first chunk to its last. Settings go in the
 * statement's SETTINGS clause, as for every chDB statement (see
 * withStatementSettings); after a failure, the throwaway statement clears
 * what the engine kept (see serialized).
 */
function streamFromChdb(
  connection: ChdbStreaming,
  queue: StatementQueue,
  { query, format, settings, limits, signal, onRows }: StreamStatement,
): Promise<AsyncIterable<Uint8Array>> {
  if (hasSecondStatement(query)) return Promise.reject(new Error('An export runs one statement; this text holds several.'));
  const sql = `${query}${settingsClause({ ...limitSettings(limits), ...settings })}`;
  return new Promise((started, failed) => {
    queue
      .run(
        () =>
          new Promise<void>((finished) => {
            let stream: ReturnType<ChdbStreaming['chdb']['queryStream']>;
            try {
              stream = connection.chdb.queryStream(sql, { format, signal });
            } catch (err) {
              failed(err);
              finished();
              return;
            }
            started(
              (async function* chunks() {
                let ok = false;
                try {
                  for await (const chunk of stream) {
                    onRows?.(chunk.numRows);
                    yield chunk.raw();
                  }
                  ok = true;
                } finally {
                  if (!stream.closed) stream.cancel();
                  if (!ok) await connection.command({ query: 'SELECT 1 FORMAT Null' }).catch(() => undefined);
                  finished();
                }
              })(),
            );
          }),
      )
      .catch(failed);
  });
}

async function* closingAfter(chunks: AsyncIterable<Uint8Array>, close: () => Promise<void>): AsyncIterable<Uint8Array> {
  try {
    yield* chunks;
  } finally {
    await close();
  }
}

/** On a line of its own: the statement may end in a line comment. */
function settingsClause(settings: Settings): string {
  return `\nSETTINGS ${settingsList(settings)}`;
}

/**
 * chDB turns a client's clickhouse_settings into SET statements on its one
 * session, shared by the whole process, so they would outlive the query and
 * bind every other client too: after one query the demo loader would be
 * read-only and every statement held to the last query's limits. A server
 * applies settings to one request only; appending them to each statement as
 * its SETTINGS clause gives chDB the same scope. (A SETTINGS clause may follow
 * the FORMAT clause the client appends.) An insert sent through here fails to
 * parse, which is as refused as a read-only session would leave it. chDB
 * would run `;`-separated statements, and the clause binds only the last, so
 * text holding a second statement is refused outright.
 */
function withStatementSettings(connection: Connection, settings: Settings): Connection {
  const clause = settingsClause(settings);
  const withClause = <P extends { query: string }>(params: P): P => {
    if (hasSecondStatement(params.query)) throw new Error('The query client runs one statement at a time; this text holds several.');
    return { ...params, query: `${params.query}${clause}` };
  };
  return new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'query' || property === 'exec' || property === 'command' || property === 'insert') {
        return (params: { query: string }) => (value as (p: unknown) => unknown).call(target, withClause(params));
      }
      return value.bind(target);
    },
  });
}

/** True when SQL text goes on after a `;` (outside quotes and comments). */
function hasSecondStatement(sql: string): boolean {
  let ended = false;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (/\s/.test(ch)) {
      i++;
    } else if ((ch === '-' && sql[i + 1] === '-') || ch === '#') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close === -1 ? sql.length : close + 2;
    } else if (ended) {
      return ch !== ';';
    } else if (ch === ';') {
      ended = true;
      i++;
    } else if (ch === "'" || ch === '"' || ch === '`') {
      i = afterQuoted(sql, i);
    } else {
      i++;
    }
  }
  return false;
}

/** Index after the literal or quoted name starting at `start`; `\x` and doubled quotes stay inside. */
function afterQuoted(sql: string, start: number): number {
  const quote = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '\\') i += 2;
    else if (sql[i] === quote && sql[i + 1] === quote) i += 2;
    else if (sql[i] === quote) return i + 1;
    else i++;
  }
  return i;
}
