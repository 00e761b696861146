import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { openWarehouse } from '../../../src/warehouse/connection';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { ensureGeo } from '../../../src/warehouse/geo/load';
import { addressPlaces } from '../../../src/warehouse/geo/places';
import type { ImportOptions } from '../../../src/warehouse/import/import';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { load } from '../support/api';
import { ROLLUP_DATABASE } from '../support/constants';
import { startService, testDataDir, type TestService } from '../support/service';
import { writeTinyGeo } from '../../support/tiny-geo';

const SAMPLES = path.resolve(__dirname, '..', '..', '..', 'samples');

/** A file of samples/. */
export const sample = (name: string): string => path.join(SAMPLES, name);

export interface ImportSuite {
  /** The suite's scratch directory, removed after it. */
  scratch: string;
  /** The client of this worker's chDB directory (set before the suite's own hooks run). */
  client: ClickHouseClient;
  /** A database of the project's tables, dropped after the suite. */
  freshDatabase(): Promise<string>;
  /** The same, with the tiny IP database loaded into it (as a running service's inbox finds its places). */
  withGeo(): Promise<string>;
  /** Import options into `database`, places from the suite's tiny IP database. */
  options(database: string, extra: Partial<ImportOptions>): ImportOptions;
  rows<T = Record<string, unknown>>(query: string): Promise<T[]>;
  count(query: string): Promise<number>;
  /** The reject file of a summary as [line, reason] pairs. */
  rejectsOf(summary: { rejectFile?: unknown }): [number, string][];
}

/**
 * What an import suite starts from, its hooks registered where it is called: a chDB client, the tiny IP database
 * loaded once into a database of its own (every import's places and country names), fresh databases (`name` their
 * prefix), and the options, rows and rejects the tests read.
 */
export function importSuite(name: string): ImportSuite {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `${name}-suite-`));
  const geoDb = `${name}_geo_${process.pid}`;
  const made: string[] = [];
  let connection: ReturnType<typeof createChdbConnection>;
  const loadGeo = async (database: string, dir: string) => {
    const warehouse = await openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database, rollupDatabase: ROLLUP_DATABASE });
    await ensureGeo(warehouse, writeTinyGeo(path.join(scratch, dir)));
  };
  const suite: ImportSuite = {
    scratch,
    client: undefined as unknown as ClickHouseClient,
    async freshDatabase() {
      const database = `${name}_${process.pid}_${made.length + 1}`;
      made.push(database);
      for (const statement of ddlStatements(database)) await suite.client.command({ query: statement });
      return database;
    },
    async withGeo() {
      const database = await suite.freshDatabase();
      await loadGeo(database, `geo-${database}`);
      return database;
    },
    options: (database, extra) => importOptions(database, geoDb, mkdtempSync(path.join(scratch, 'rejects-')), { format: '', account: undefined, ...extra }),
    rows: <T>(query: string) => rowsOf<T>(suite.client, query),
    count: (query) => countOf(suite.client, query),
    rejectsOf: rejectLines,
  };
  beforeAll(async () => {
    connection = createChdbConnection({ path: testDataDir() });
    suite.client = createClient({ connection: connection as never });
    for (const statement of ddlStatements(geoDb)) await suite.client.command({ query: statement });
    await loadGeo(geoDb, 'geo');
  }, 120_000);
  afterAll(async () => {
    for (const database of [...made, geoDb]) await suite.client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    connection.close();
    rmSync(scratch, { recursive: true, force: true });
  });
  return suite;
}

/** An import's options as the command gives them, for account acme, places from `geoDatabase`'s IP database. */
export function importOptions(database: string, geoDatabase: string, rejectsDir: string, extra: Partial<ImportOptions> = {}): ImportOptions {
  return {
    database,
    format: 'ndjson',
    account: 'acme',
    maxBadRows: 0,
    ignoreUnknown: false,
    trackingPrefix: TRACKING_PREFIX,
    rejectsDir,
    derivation: { settings: { rules: 'iab', window: 'calendar' }, userAgents: loadUserAgents(undefined), places: addressPlaces(geoDatabase) },
    engineReadsFiles: true,
    ...extra,
  };
}

/** The line and reason of each row of an import's reject file. */
export function rejectLines(summary: { rejectFile?: unknown }): [number, string][] {
  return readFileSync(summary.rejectFile as string, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { line: number; reason: string })
    .map((r) => [r.line, r.reason]);
}

export async function rowsOf<T = Record<string, unknown>>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

/** The `n` of a query's one row. */
export async function countOf(client: ClickHouseClient, query: string): Promise<number> {
  return Number((await rowsOf<{ n: string }>(client, query))[0].n);
}

/** A format's case: its name (its first word the format), its sample, and options of its own. */
export type FormatCase = [string, string, Partial<ImportOptions>];

/**
 * The cases of a suite's formats one way of reading: the engine's (`engineReadsFiles`), or as sent to a server. A
 * server is sent a Parquet file's bytes as the request's body; chDB's client, which stands in for a server here,
 * takes a body as text (chdb/connection puts it into the statement), so Parquet goes the engine's own way only.
 */
export function formatCases(engineReadsFiles: boolean, text: FormatCase[], parquet: FormatCase[]): FormatCase[] {
  return engineReadsFiles ? [...text, ...parquet] : text;
}

export type Rows = Record<string, string | null>[];

/** A query's rows from both APIs (the spec's, then Cube's), asked with `account`'s key. */
export async function bothApis(service: TestService, query: Record<string, unknown>, account = 'acme'): Promise<Rows[]> {
  const answers: Rows[] = [];
  for (const api of ['data', 'cubejs'] as const) {
    const res = await load(service, query, { api, key: service.accountKeys[account] });
    expect(res.status).toBe(200);
    answers.push(res.body.data as Rows);
  }
  return answers;
}

/**
 * Starts services on the suite's databases, account acme's key among theirs (env: more settings; importInbox: the
 * inbox a running service takes files through), each closed after the suite (its hook registered where called).
 */
export function serviceStarter(): (database: string, env?: Record<string, string>, importInbox?: boolean) => Promise<TestService> {
  const services: TestService[] = [];
  afterAll(async () => {
    for (const service of services) await service.close();
  });
  return async (database, env = {}, importInbox = false) => {
    const service = await startService({ CLICKHOUSE_DATABASE: database, ...env }, { accounts: ['acme'], importInbox });
    services.push(service);
    return service;
  };
}
