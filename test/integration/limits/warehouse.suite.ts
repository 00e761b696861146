import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { Session } from 'chdb';
import { createDriverFactory } from '../../../src/cube/engine/driver';
import { openWarehouse, type QueryLimits, type Warehouse } from '../../../src/warehouse/connection';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import { openOracle, testDataDir, type Oracle } from '../support/service';

/**
 * `warehouse.queryClient(limits)` is the client Cube's driver answers every
 * query with (src/cube/engine/driver.ts): ClickHouse itself must hold each statement
 * read-only and within the limits, whatever Cube sends.
 */

const ROOMY: QueryLimits = { timeoutMs: 10_000, maxResultRows: 1_000_000, maxMemoryBytes: 1e9 };
const TABLES = ['downloads', 'podcast_events', 'link_views', 'web_events'] as const;

const open = () => openWarehouse({ kind: 'chdb', dataDir: testDataDir(), database: DATABASE, rollupDatabase: ROLLUP_DATABASE });
const rows = async (client: ClickHouseClient, query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<Record<string, unknown>>();

let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(() => oracle.close());

const countRows = async () =>
  Object.fromEntries(await Promise.all(TABLES.map(async (table) => [table, await oracle.value(`SELECT count() FROM ${DATABASE}.${table}`)])));

describe('the query client is read-only', () => {
  const SCRATCH = `${DATABASE}.readonly_probe`;
  let warehouse: Warehouse;
  let client: ClickHouseClient;
  let before: Record<string, number>;
  beforeAll(async () => {
    before = await countRows();
    warehouse = await open();
    client = warehouse.queryClient(ROOMY);
  });
  afterAll(async () => {
    await warehouse.client().command({ query: `DROP TABLE IF EXISTS ${SCRATCH}` });
    await warehouse.client().command({ query: `DROP TABLE IF EXISTS ${DATABASE}.x` });
    await warehouse.close();
  });

  const WRITES = [
    `INSERT INTO ${DATABASE}.downloads SELECT * FROM ${DATABASE}.downloads LIMIT 1`,
    `CREATE TABLE ${DATABASE}.x (a UInt8) ENGINE = Memory`,
    `DROP TABLE ${DATABASE}.downloads`,
    `TRUNCATE TABLE ${DATABASE}.link_views`,
    `ALTER TABLE ${DATABASE}.web_events DELETE WHERE 1`,
    // Rollup builds go through the rollup client (src/cube/engine/driver.ts), never this one.
    `CREATE DATABASE IF NOT EXISTS ${ROLLUP_DATABASE}_probe`,
    `CREATE TABLE ${ROLLUP_DATABASE}.readonly_probe (a UInt8) ENGINE = Memory`,
  ];

  it.each(WRITES)('refuses %s (command and exec) as readonly', async (sql) => {
    await expect(client.command({ query: sql })).rejects.toThrow(/readonly/i);
    await expect(client.exec({ query: sql })).rejects.toThrow(/readonly/i);
  });

  it.each(WRITES)('refuses %s sent as query()', async (sql) => {
    await expect(client.query({ query: sql })).rejects.toThrow();
  });

  it('refuses insert() of rows', async () => {
    await expect(client.insert({ table: `${DATABASE}.link_views`, values: [{}], format: 'JSONEachRow' })).rejects.toThrow();
  });

  it('refuses SET readonly = 0, and a SETTINGS readonly = 0 clause, and stays read-only after them', async () => {
    await expect(client.command({ query: 'SET readonly = 0' })).rejects.toThrow();
    await expect(client.query({ query: 'SELECT 1 SETTINGS readonly = 0', format: 'JSONEachRow' })).rejects.toThrow(/readonly/i);
    await expect(client.command({ query: 'SET readonly = 0; DROP TABLE analytics.downloads' })).rejects.toThrow();
    await expect(client.command({ query: WRITES[3] })).rejects.toThrow(/readonly/i);
  });

  it('answers a SELECT', async () => {
    const answer = await rows(client, `SELECT count() AS n FROM ${DATABASE}.downloads`);
    expect(answer.map((row) => Number(row.n))).toEqual([before.downloads]);
  });

  it('left every table and every row where it was', async () => {
    expect(await countRows()).toEqual(before);
    expect(await oracle.value(`SELECT count() FROM system.tables WHERE database = '${DATABASE}' AND name = 'x'`)).toBe(0);
  });

  it('did not make the shared chDB session read-only: the setup client still writes', async () => {
    const setup = warehouse.client();
    await setup.command({ query: `CREATE TABLE ${SCRATCH} (a UInt8) ENGINE = MergeTree ORDER BY a` });
    await setup.insert({ table: SCRATCH, values: [{ a: 1 }, { a: 2 }], format: 'JSONEachRow' });
    expect(await oracle.value(`SELECT sum(a) FROM ${SCRATCH}`)).toBe(3);
    await setup.command({ query: `DROP TABLE ${SCRATCH}` });
    expect(await oracle.value(`SELECT count() FROM system.tables WHERE database = '${DATABASE}' AND name = 'readonly_probe'`)).toBe(0);
  });

  it('leaves the rollup client able to write (Cube builds rollups through it), and this one still read-only after it', async () => {
    const rollups = warehouse.rollupClient(ROOMY);
    const table = `${ROLLUP_DATABASE}.readonly_probe`;
    await rollups.command({ query: `CREATE DATABASE IF NOT EXISTS ${ROLLUP_DATABASE}` });
    await rollups.command({ query: `CREATE TABLE ${table} ENGINE = MergeTree ORDER BY a AS SELECT toUInt8(number) AS a FROM numbers(3)` });
    expect(await oracle.value(`SELECT sum(a) FROM ${table}`)).toBe(3);
    await expect(client.command({ query: `DROP TABLE ${table}` })).rejects.toThrow(/readonly/i);
    await rollups.command({ query: `DROP TABLE ${table}` });
    expect(await oracle.value(`SELECT count() FROM system.tables WHERE database = '${ROLLUP_DATABASE}' AND name = 'readonly_probe'`)).toBe(0);
  });

  it('runs no write that precedes a SELECT in one multi-statement text', async () => {
    // Against a scratch table only: if this fails, the write really happened.
    const setup = warehouse.client();
    await setup.command({ query: `CREATE TABLE IF NOT EXISTS ${SCRATCH} (a UInt8) ENGINE = MergeTree ORDER BY a` });
    await setup.insert({ table: SCRATCH, values: [{ a: 7 }], format: 'JSONEachRow' });
    const attempts = [`INSERT INTO ${SCRATCH} VALUES (1); SELECT 1`, `TRUNCATE TABLE ${SCRATCH}; SELECT 1`, `DROP TABLE ${SCRATCH}; SELECT 1`];
    const outcomes: string[] = [];
    for (const sql of attempts) {
      const done = await client.command({ query: sql }).then(
        () => 'ran',
        (e: Error) => `refused: ${e.message.slice(0, 80)}`,
      );
      const exists = await oracle.value(`SELECT count() FROM system.tables WHERE database = '${DATABASE}' AND name = 'readonly_probe'`);
      const contents = exists ? (await oracle.rows<{ a: number }>(`SELECT a FROM ${SCRATCH} ORDER BY a`)).map((row) => row.a) : 'dropped';
      outcomes.push(`${sql} -> ${done}; table now ${JSON.stringify(contents)}`);
    }
    expect(outcomes).toEqual(attempts.map((sql) => expect.stringMatching(new RegExp(`^${escape(sql)} -> refused: .*; table now \\[7\\]$`))));
  });
});

describe('the query client holds each statement to its limits in ClickHouse', () => {
  // A connection per test: a refused statement's leftovers are the subject of
  // their own tests below, not of these.
  let warehouse: Warehouse;
  beforeEach(async () => {
    warehouse = await open();
  });
  afterEach(() => warehouse.close());

  it('max_execution_time: ends a 5 s statement with "Timeout exceeded" after about 1 s', async () => {
    const client = warehouse.queryClient({ ...ROOMY, timeoutMs: 1000 });
    // sleepEachRow sleeps at most 3 s per block: blocks of two rows take 1 s each.
    const started = Date.now();
    await expect(rows(client, 'SELECT sleepEachRow(0.5) FROM numbers(10) SETTINGS max_block_size = 2')).rejects.toThrow(/Timeout exceeded/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('max_execution_time: lets a statement under the limit finish', async () => {
    const client = warehouse.queryClient({ ...ROOMY, timeoutMs: 1000 });
    expect(await rows(client, 'SELECT sleepEachRow(0.2) AS s FROM numbers(2)')).toHaveLength(2);
  });

  it('max_result_rows: answers 5 rows and refuses 6 with "Limit for result exceeded"', async () => {
    const client = warehouse.queryClient({ ...ROOMY, maxResultRows: 5 });
    expect(await rows(client, 'SELECT number FROM numbers(5)')).toHaveLength(5);
    await expect(rows(client, 'SELECT number FROM numbers(6)')).rejects.toThrow(/Limit for result exceeded/);
  });

  // A million keys need tens of MB whatever the test data holds; a GROUP BY over the data's request ids came close to
  // 1 MB and passed or failed with how the table's parts happened to be merged.
  it('max_memory_usage: refuses a GROUP BY of a million keys within 1 MB, answers a count', async () => {
    const client = warehouse.queryClient({ ...ROOMY, maxMemoryBytes: 1024 * 1024 });
    expect(await rows(client, `SELECT count() AS n FROM ${DATABASE}.podcast_events`)).toHaveLength(1);
    await expect(rows(client, 'SELECT number % 1000000 AS k, count() FROM numbers(2000000) GROUP BY k LIMIT 3')).rejects.toThrow(/memory limit/i);
  });

  it('applies the limits to its own statements only: the setup client is not bound by them', async () => {
    await rows(warehouse.queryClient({ ...ROOMY, maxResultRows: 1 }), 'SELECT 1');
    expect(await rows(warehouse.client(), 'SELECT number FROM numbers(3)')).toHaveLength(3);
  });
});

describe('after a statement is refused, the next statement on the connection gets only its own answer', () => {
  let warehouse: Warehouse;
  beforeEach(async () => {
    warehouse = await open();
  });
  afterEach(() => warehouse.close());

  it("in JSONCompact, the format Cube's driver reads (result limit)", async () => {
    const client = warehouse.queryClient({ ...ROOMY, maxResultRows: 5 });
    await expect(client.query({ query: 'SELECT number FROM numbers(100)', format: 'JSONCompact' })).rejects.toThrow(/Limit for result exceeded/);
    const next = await (await client.query({ query: 'SELECT 42 AS answer', format: 'JSONCompact' })).text();
    expect(() => JSON.parse(next)).not.toThrow();
    expect(JSON.parse(next)).toMatchObject({ meta: [{ name: 'answer' }], data: [[42]] });
  });

  it('in JSONEachRow: no rows of a timed-out statement show up in the next answer', async () => {
    const client = warehouse.queryClient({ ...ROOMY, timeoutMs: 1000 });
    await expect(rows(client, 'SELECT number AS leaked, sleepEachRow(0.4) FROM numbers(10) SETTINGS max_block_size = 2')).rejects.toThrow(/Timeout exceeded/);
    expect(await rows(client, 'SELECT 42 AS answer')).toEqual([{ answer: 42 }]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe("the settings statements bring are SET once on chDB's session", () => {
  /**
   * chDB's connection runs a statement's clickhouse_settings as SET
   * statements before it; Cube's driver sends join_use_nulls = 1,
   * date_time_output_format = 'simple' and output_format_json_quote_64bit_integers = 1
   * with each query. A 64-bit integer past 2^53, a LEFT JOIN without a match
   * and a DateTime show all three in the answer.
   */
  const PROBE = `SELECT toUInt64('18446744073709551615') AS big, b.x AS joined, toDateTime('2026-01-02 03:04:05', 'UTC') AS at
    FROM (SELECT 1 AS k) AS a LEFT JOIN (SELECT 2 AS k, toInt32(5) AS x) AS b ON a.k = b.k`;
  /** The answer the three settings give (each one's documented effect), as Cube's driver reads it. */
  const WITH_SETTINGS = [{ big: '18446744073709551615', joined: null, at: '2026-01-02T03:04:05.000' }];
  const OTHER_VALUES: ClickHouseSettings = { join_use_nulls: 0, output_format_json_quote_64bit_integers: 0, date_time_output_format: 'iso' };

  type Driver = { query(sql: string, values: unknown[]): Promise<unknown[]>; release(): Promise<void> };
  let warehouse: Warehouse;
  let driver: Driver;
  let sent: string[];
  beforeEach(async () => {
    warehouse = await open();
    driver = createDriverFactory(warehouse, ROOMY, () => undefined)() as unknown as Driver;
    sent = [];
    const queryAsync = Session.prototype.queryAsync;
    jest.spyOn(Session.prototype, 'queryAsync').mockImplementation(function (this: Session, sql: string, options?: object) {
      sent.push(sql);
      return queryAsync.call(this, sql, options);
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await driver.release();
    await warehouse.close();
  });

  const setsOf = (sql: string) => sql.match(/\bSET \w+ = [^;]+/g) ?? [];

  it('each setting changes the probe, in a session of its own', async () => {
    const session = openOracle();
    try {
      const plain = await session.rows(
        `${PROBE} SETTINGS ${Object.entries(OTHER_VALUES)
          .map(([k, v]) => `${k} = ${JSON.stringify(v).replace(/"/g, "'")}`)
          .join(', ')}`,
      );
      expect(plain).toEqual([{ big: Number('18446744073709551615'), joined: 0, at: '2026-01-02T03:04:05Z' }]);
    } finally {
      await session.close();
    }
  });

  it('sends them with the first query only, and answers every query as with them', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await driver.query(PROBE, []));
    expect(answers).toEqual(Array(4).fill(WITH_SETTINGS));
    const probes = sent.filter((sql) => sql.includes('AS big'));
    expect(probes.map((sql) => setsOf(sql).length)).toEqual([3, 0, 0, 0]);
  });

  it('sends them again after a statement SET other values itself, or brought others, or failed after its SETs ran', async () => {
    const other = warehouse.client({ clickhouse_settings: OTHER_VALUES });
    const changes: [string, () => Promise<unknown>][] = [
      [
        'a SET in its own text',
        () =>
          warehouse.client().command({
            query: Object.entries(OTHER_VALUES)
              .map(([k, v]) => `SET ${k} = ${typeof v === 'number' ? v : `'${v}'`}`)
              .join('; '),
          }),
      ],
      ['other values as settings', () => other.command({ query: 'SELECT 1' })],
      ['other values, then a failure', () => other.command({ query: "SELECT throwIf(1, 'fails after its SETs')" }).catch(() => undefined)],
    ];
    expect(await driver.query(PROBE, [])).toEqual(WITH_SETTINGS);
    for (const [name, change] of changes) {
      await change();
      sent = [];
      expect([name, await driver.query(PROBE, [])]).toEqual([name, WITH_SETTINGS]);
      expect([name, setsOf(sent.find((sql) => sql.includes('AS big')) ?? '').length]).toEqual([name, 3]);
    }
  });
});
