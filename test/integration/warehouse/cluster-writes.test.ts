import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import type { Warehouse } from '../../../src/warehouse/connection';
import { clusterDdlStatements } from '../../../src/warehouse/ddl';
import { loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { deriveAll, type Derivation } from '../../../src/warehouse/derive/rederive';
import { forget } from '../../../src/warehouse/forget';
import { ensureGeo, geoObjectStatements } from '../../../src/warehouse/geo/load';
import { addressPlaces } from '../../../src/warehouse/geo/places';
import { refreshPlaces } from '../../../src/warehouse/geo/refresh';
import { importFile, recoverInterrupted, stagingDatabase } from '../../../src/warehouse/import/import';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { enforceRetention } from '../../../src/warehouse/retention';
import { addMissingProjections, applyDdl } from '../../../src/warehouse/setup';
import { sqlLiteral, type Literal } from '../../../src/warehouse/sql';
import { writeTinyGeo } from '../../support/tiny-geo';
import { testDataDir } from '../support/service';

/**
 * No ClickHouse cluster runs here. Each write path runs against a client
 * that records every statement it is sent and answers as a warehouse made
 * by `init --cluster` would (podcast_events a Distributed table; every
 * count one, so that each path goes all the way). ClickHouse's own parser
 * (chDB's formatQuery and EXPLAIN AST) then reads each statement: none may
 * mutate a Distributed table, every DDL and mutation must name the cluster,
 * and every table it reads or writes must be one the cluster DDL makes (or
 * one the path made itself before). A new write path is one entry of
 * WRITE_PATHS.
 */

const CLUSTER = 'analytics_cluster';
const DATABASE = 'analytics';
const STAGING = stagingDatabase(DATABASE);
const ACCOUNT = 'acme';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'cluster-writes-'));
const geoDir = writeTinyGeo(path.join(scratch, 'geo'));
const sample = (name: string) => path.join(__dirname, '../../../samples', name);

/** What a cluster's warehouse answers a read with: the layout's query names the cluster, nothing is imported yet, every other count is one. */
function answer(sql: string): Record<string, unknown>[] {
  if (/engine_full/.test(sql)) return [{ cluster: CLUSTER }];
  if (/SELECT engine FROM system\.tables/.test(sql)) return [{ engine: 'Distributed' }];
  if (/WHERE hash IN/.test(sql)) return [{ n: '0' }];
  if (/FROM system\.dictionaries/.test(sql)) return [];
  return [
    {
      n: '1',
      rows: '1',
      rejected: '0',
      identified: '0',
      from: '1767225600',
      to: '1767229200',
      last: '1767229200',
      day: '1767225600',
      token: 'show',
      link: 'a-link',
      accounts: [ACCOUNT],
      only: '1',
      shared: '1',
      name: 'staged_by_a_killed_import',
      id: 'a-killed-import',
      file: 'killed.ndjson',
      source: 'requests',
      kind: 'page_ping',
      fingerprint: 'an older load',
      partition: '202601',
    },
  ];
}

/** `{name:Type}` parameters written as the literals the server binds, so the parser sees the statement the server runs. */
function bound(sql: string, params: Record<string, unknown> = {}): string {
  return sql.replace(/\{(\w+):[^}]+\}/g, (whole, name: string) => (name in params ? sqlLiteral(params[name] as Literal) : whole));
}

function recordingClient(statements: string[]): ClickHouseClient {
  const record = (params: { query: string; query_params?: Record<string, unknown> }) => statements.push(bound(params.query, params.query_params));
  const client = {
    query: async (params: { query: string; query_params?: Record<string, unknown> }) => {
      record(params);
      const rows = answer(params.query);
      return { json: async () => rows };
    },
    command: async (params: { query: string; query_params?: Record<string, unknown> }) => {
      record(params);
      return {};
    },
    exec: async (params: { query: string; query_params?: Record<string, unknown> }) => {
      record(params);
      return { stream: (async function* () {})() };
    },
    insert: async (params: { table: string; format?: string }) => {
      statements.push(`INSERT INTO ${params.table} FORMAT ${params.format ?? 'JSONCompactEachRow'}`);
      return {};
    },
    close: async () => {},
  };
  return client as unknown as ClickHouseClient;
}

const derivation: Derivation = {
  settings: { rules: 'iab', window: 'calendar' },
  userAgents: loadUserAgents(undefined),
  places: addressPlaces(DATABASE),
};

const importOptions = {
  database: DATABASE,
  maxBadRows: 0,
  ignoreUnknown: false,
  trackingPrefix: TRACKING_PREFIX,
  rejectsDir: scratch,
  derivation,
  engineReadsFiles: true,
};

/** Every write path, as the warehouse command or the service's inbox runs it. */
const WRITE_PATHS: { name: string; run(client: ClickHouseClient, warehouse: Warehouse): Promise<unknown> }[] = [
  {
    name: 'init --cluster',
    run: async (client, warehouse) => {
      for (const statement of clusterDdlStatements(DATABASE, CLUSTER)) await client.command({ query: statement });
      await addMissingProjections(warehouse, undefined, CLUSTER);
      await ensureGeo(warehouse, geoDir);
    },
  },
  // What every other command (import, derive, forget, geo-refresh) does first.
  { name: 'the tables of every command', run: (_client, warehouse) => applyDdl(warehouse) },
  { name: 'geo load', run: (_client, warehouse) => ensureGeo(warehouse, geoDir) },
  { name: 'geo-refresh', run: (_client, warehouse) => refreshPlaces(warehouse) },
  { name: 'import requests', run: (client) => importFile(client, sample('requests.ndjson'), { ...importOptions, source: 'requests', format: 'ndjson' }) },
  {
    name: 'import web events',
    run: (client) =>
      importFile(client, sample('web-events.snowplow.ndjson'), { ...importOptions, source: 'web-events', format: 'snowplow-json', account: ACCOUNT }),
  },
  {
    name: 'import link events',
    run: (client) => importFile(client, sample('link-events.ndjson'), { ...importOptions, source: 'link-events', format: 'ndjson', account: ACCOUNT }),
  },
  {
    name: 'import charts',
    run: (client) => importFile(client, sample('charts.apple.json'), { ...importOptions, source: 'charts', format: 'apple-charts' }),
  },
  {
    name: 'retention and addresses',
    run: (client) =>
      enforceRetention({
        client,
        database: DATABASE,
        settings: { retention: { rawDays: 30, derivedDays: 30, chartsDays: 30, addressDays: 7 }, rejectsDir: scratch },
      }),
  },
  { name: 'recovery of a killed import', run: (client) => recoverInterrupted(client, importOptions) },
  { name: 'derive', run: (client) => deriveAll(client, DATABASE, derivation) },
  { name: 'forget --account', run: (client) => forget(client, DATABASE, { kind: 'account', account: ACCOUNT }) },
  { name: 'forget --address', run: (client) => forget(client, DATABASE, { kind: 'address', address: '2001:db8::1', account: ACCOUNT }) },
];

// The parser, in chDB: no table of the test's warehouse is read.
const connection = createChdbConnection({ path: testDataDir() });
const parser = createClient({ connection: connection as never });
afterAll(async () => {
  await connection.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** ClickHouse's canonical text of a statement; throws when its parser refuses it. */
async function format(sql: string): Promise<string> {
  return (await parser.query({ query: `SELECT formatQuery(${escaped(sql)})`, format: 'TabSeparatedRaw' })).text();
}

/**
 * The parser's tree of a statement, a line per node, indented by depth. Asked without a format, which the explained
 * statement would take as its own: chDB answers it in CSV, a quoted line per node.
 */
async function ast(sql: string): Promise<string[]> {
  const { stream } = await parser.exec({ query: `EXPLAIN AST ${sql}` });
  let text = '';
  for await (const chunk of stream) text += (chunk as Buffer).toString('utf8');
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => line.replace(/^"(.*)"$/, '$1').replace(/""/g, '"'));
}

const escaped = (sql: string) => `'${sql.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

interface Read {
  /** DDL (CREATE, DROP, ALTER other than a mutation, EXCHANGE, TRUNCATE, SYSTEM), a mutation, an insert, or a read. */
  kind: 'ddl' | 'mutation' | 'insert' | 'select';
  /** `database.name` of what the statement makes, changes or writes. */
  targets: string[];
  /** `database.name` of the tables it reads. */
  reads: string[];
  /** `database.name` of the table whose definition a CREATE TABLE … AS copies. */
  copies?: string;
  onCluster: boolean;
}

/** What a statement is, as ClickHouse's parser reads it. */
async function read(sql: string): Promise<Read> {
  const formatted = await format(sql);
  const tree = await ast(sql);
  const [head] = tree;
  const depthOne = tree.filter((line) => /^ \S/.test(line));
  const identifiers = depthOne.filter((line) => /^ Identifier /.test(line)).map((line) => line.trim().split(' ')[1]);
  const pairs = Array.from({ length: Math.floor(identifiers.length / 2) }, (_, i) => `${identifiers[2 * i]}.${identifiers[2 * i + 1]}`);
  const qualified = (name: string) => (name.includes('.') ? name : `${DATABASE}.${name}`);
  const reads = tree.filter((line) => /^\s*TableIdentifier /.test(line)).map((line) => qualified(line.trim().split(' ')[1]));
  // CREATE TABLE … AS <table> reads that table's definition; a dictionary reads its source table.
  const as = /^CREATE TABLE \S+(?: ON CLUSTER \S+)? AS (\S+)/.exec(formatted)?.[1];
  const source = /SOURCE\(CLICKHOUSE\(DB '([^']+)' TABLE '([^']+)'\)\)/.exec(formatted);
  const onCluster = formatted.includes(`ON CLUSTER ${CLUSTER}`);
  if (head.startsWith('SelectWithUnionQuery')) return { kind: 'select', targets: [], reads, onCluster };
  if (head.startsWith('InsertQuery')) return { kind: 'insert', targets: pairs.slice(0, 1), reads, onCluster };
  const mutation = head.startsWith('AlterQuery') && tree.some((line) => /^\s*AlterCommand (DELETE|UPDATE|MATERIALIZE_PROJECTION)/.test(line));
  // `CreateQuery db table (children n)`, or `CreateQuery db  (children n)` for a database.
  const [database, table] = head.trim().split(' ').slice(1, 3);
  const targets = head.startsWith('Rename') || head.startsWith('SYSTEM') ? pairs : [table ? `${database}.${table}` : database];
  const copies = as === undefined ? undefined : qualified(as.replace(/`/g, ''));
  return {
    kind: mutation ? 'mutation' : 'ddl',
    targets,
    reads: [...reads, ...(copies ? [copies] : []), ...(source ? [`${source[1]}.${source[2]}`] : [])],
    copies,
    onCluster,
  };
}

describe('every write path on a cluster made by init --cluster', () => {
  /** What the cluster DDL makes, and which of it are Distributed tables. */
  const made = new Set<string>();
  const distributed = new Set<string>();
  beforeAll(async () => {
    for (const statement of [...clusterDdlStatements(DATABASE, CLUSTER), ...geoObjectStatements({ database: DATABASE, cluster: CLUSTER })]) {
      const { targets } = await read(statement);
      for (const target of targets) made.add(target);
      if (/ENGINE = Distributed\(/.test(statement)) for (const target of targets) distributed.add(target);
    }
  });

  it('the cluster DDL makes Distributed tables to check against', () => {
    expect([...distributed].sort()).toContain(`${DATABASE}.downloads`);
    expect(made.has(`${DATABASE}.downloads_local`)).toBe(true);
  });

  it.each(WRITE_PATHS.map((p) => [p.name, p] as const))(
    '%s',
    async (_name, writePath) => {
      const statements: string[] = [];
      const client = recordingClient(statements);
      const warehouse = { client: () => client, config: { database: DATABASE } } as unknown as Warehouse;
      await writePath.run(client, warehouse);
      expect(statements.length).toBeGreaterThan(0);
      const problems: string[] = [];
      // What the path made itself (scratch tables of the staging database, a geo load's new tables) it may use after.
      const madeHere = new Set<string>();
      for (const sql of statements) {
        const statement = await read(sql);
        const said = (problem: string) => problems.push(`${problem}: ${sql.replace(/\s+/g, ' ').slice(0, 240)}`);
        // A command's scratch tables are its own node's: made, filled and read there only.
        const local = statement.targets.length > 0 && statement.targets.every((t) => t.startsWith(`${STAGING}.`) || t === STAGING);
        if (statement.kind === 'mutation') {
          for (const target of statement.targets.filter((t) => distributed.has(t))) said(`mutates the Distributed table ${target}`);
        }
        if ((statement.kind === 'ddl' || statement.kind === 'mutation') && !local && !statement.onCluster)
          said(`${statement.kind} without ON CLUSTER ${CLUSTER}`);
        // A copy of a Distributed table is one too: what is written to it goes to the table it names.
        if (statement.copies !== undefined && distributed.has(statement.copies)) said(`copies the Distributed table ${statement.copies}`);
        if (statement.kind === 'ddl' && /^CREATE/.test(sql.trim())) for (const target of statement.targets) madeHere.add(target);
        const dropped = /^DROP/.test(sql.trim());
        for (const table of [...statement.reads, ...(dropped ? [] : statement.targets)]) {
          if (table.startsWith('system.') || table === STAGING || madeHere.has(table) || made.has(table)) continue;
          said(`names ${table}, which the cluster DDL does not make`);
        }
      }
      expect(problems).toEqual([]);
    },
    60_000,
  );
});
