/**
 * Every column type an answer carries, read by the driver a slice of rows at
 * a time (src/cube/engine/driver.ts, row-reader.ts): numbers (64-bit
 * integers beyond 2^53, floats, decimals), dates and times of each width,
 * nulls, and strings with escapes and characters outside ASCII. Through the
 * API the answers are direct SQL's over the same table, written in the form
 * the API answers (numbers as strings, times as ISO without a zone); in the
 * driver, the rows are Cube's own driver's reading of the same SQL
 * (JSONCompact, one JSON.parse), byte for byte.
 */
import { createDriverFactory } from '../../../src/cube/engine/driver';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { modelDir, removeModelDirs } from '../models/support';
import { load, type Api } from '../support/api';

const DB = 'typed_answers';
/** More rows than a slice of the driver's reading (1,000 lines), so an answer spans several. */
const ROWS = 2600;

const LABELS = ['plain', 'a "quote" and a \\ backslash', 'line\nbreak\ttab', 'é😀 ünïcode 中文', '\u2028separators\u2029', '', '</script>'];

const cube = {
  name: 'Cells',
  sql: `select * from ${DB}.cells`,
  measures: [
    { name: 'count', type: 'count' },
    { name: 'sumSmall', sql: 'small', type: 'sum' },
    { name: 'maxBig', sql: 'big', type: 'max' },
    { name: 'avgRatio', sql: 'ratio', type: 'avg' },
  ],
  dimensions: [
    { name: 'id', sql: 'id', type: 'number', primary_key: true, public: true },
    { name: 'big', sql: 'big', type: 'number' },
    { name: 'small', sql: 'small', type: 'number' },
    { name: 'ratio', sql: 'ratio', type: 'number' },
    { name: 'price', sql: 'price', type: 'number' },
    { name: 'maybeN', sql: 'maybe_n', type: 'number' },
    { name: 'label', sql: 'label', type: 'string' },
    { name: 'maybeLabel', sql: 'maybe_label', type: 'string' },
    { name: 'day', sql: 'day', type: 'time' },
    { name: 'at', sql: 'at', type: 'time' },
    { name: 'atMs', sql: 'at_ms', type: 'time' },
    { name: 'maybeDay', sql: 'maybe_day', type: 'time' },
  ],
};

let oracle: Oracle;
let service: TestService;
beforeAll(async () => {
  oracle = openOracle();
  await oracle.command(`CREATE DATABASE IF NOT EXISTS ${DB}`);
  await oracle.command(`DROP TABLE IF EXISTS ${DB}.cells`);
  await oracle.command(
    `CREATE TABLE ${DB}.cells (id UInt32, big UInt64, small Int32, ratio Float64, price Decimal(18, 4), maybe_n Nullable(Int64),
      label String, maybe_label Nullable(String), day Date, at DateTime('UTC'), at_ms DateTime64(3, 'UTC'), maybe_day Nullable(Date))
     ENGINE = MergeTree ORDER BY id`,
  );
  const labels = `[${LABELS.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t')}'`).join(', ')}]`;
  await oracle.command(
    `INSERT INTO ${DB}.cells SELECT
       number, 18446744073709551615 - number * 1000003, toInt32(number) * 7919 - 10000000, number / 8 - 100.25, toDecimal64(number, 4) / 16,
       if(number % 3 = 0, NULL, number * 3000000000000001), ${labels}[number % ${LABELS.length} + 1], if(number % 4 = 0, NULL, concat('ü', toString(number))),
       toDate('2024-02-27') + number % 5, toDateTime('2024-02-28 23:59:59', 'UTC') + number * 3607,
       toDateTime64('2024-02-29 00:00:00.001', 3, 'UTC') + toIntervalMillisecond(number * 1013), if(number % 5 = 0, NULL, toDate('2023-12-31') + number % 3)
     FROM numbers(${ROWS})`,
  );
  service = await startService({ CLICKHOUSE_DATABASE: DB, CUBE_MODELS_DIR: modelDir({ 'cells.yaml': JSON.stringify({ cubes: [cube] }) }) });
});
afterAll(async () => {
  await service?.close();
  await oracle.command(`DROP DATABASE IF EXISTS ${DB}`);
  await oracle.close();
  removeModelDirs();
});

type Row = Record<string, string | null>;

describe.each<Api>(['data', 'cubejs'])('the %s API', (api) => {
  it('answers every typed column of every row as direct SQL does', async () => {
    const res = await load(
      service,
      {
        measures: ['Cells.count', 'Cells.sumSmall', 'Cells.maxBig', 'Cells.avgRatio'],
        dimensions: cube.dimensions.map((d) => `Cells.${d.name}`),
        order: { 'Cells.id': 'asc' },
        limit: 50000,
      },
      { api },
    );
    expect([res.status, res.status === 200 ? '' : res.text]).toEqual([200, '']);
    const iso = (column: string) => `concat(replaceOne(toString(${column}), ' ', 'T'), '.000')`;
    const expected = await oracle.rows<Row>(
      `SELECT toString(id) AS \`Cells.id\`, toString(big) AS \`Cells.big\`, toString(small) AS \`Cells.small\`, toString(ratio) AS \`Cells.ratio\`,
        toString(price) AS \`Cells.price\`, toString(maybe_n) AS \`Cells.maybeN\`, label AS \`Cells.label\`, maybe_label AS \`Cells.maybeLabel\`,
        concat(toString(day), 'T00:00:00.000') AS \`Cells.day\`, ${iso('at')} AS \`Cells.at\`, replaceOne(toString(at_ms), ' ', 'T') AS \`Cells.atMs\`,
        if(maybe_day IS NULL, NULL, concat(toString(maybe_day), 'T00:00:00.000')) AS \`Cells.maybeDay\`,
        '1' AS \`Cells.count\`, toString(small) AS \`Cells.sumSmall\`, toString(big) AS \`Cells.maxBig\`, toString(ratio) AS \`Cells.avgRatio\`
       FROM ${DB}.cells ORDER BY id`,
    );
    expect(expected).toHaveLength(ROWS);
    expect(res.body.data).toEqual(expected);
    // The oracle's rows hold every kind of value the test is about.
    const values = expected.flatMap((row) => Object.values(row));
    expect(values).toContain(null);
    expect(values).toEqual(expect.arrayContaining(LABELS.filter(Boolean)));
    // Past 2^53, where a JavaScript number would round: UInt64's largest, and an odd Int64.
    expect(values).toContain('18446744073709551615');
    expect(values).toContain('15000000000000005');
  });

  it('answers a time dimension by day, its counts as direct SQL does', async () => {
    const res = await load(
      service,
      {
        measures: ['Cells.count'],
        dimensions: ['Cells.label'],
        timeDimensions: [{ dimension: 'Cells.at', granularity: 'day' }],
        order: [
          ['Cells.at', 'asc'],
          ['Cells.label', 'asc'],
        ],
        limit: 50000,
      },
      { api },
    );
    expect([res.status, res.status === 200 ? '' : res.text]).toEqual([200, '']);
    const expected = await oracle.rows<Row>(
      `SELECT label AS \`Cells.label\`, formatDateTime(toStartOfDay(at, 'UTC'), '%Y-%m-%dT%H:%i:%S.000') AS \`Cells.at.day\`,
        formatDateTime(toStartOfDay(at, 'UTC'), '%Y-%m-%dT%H:%i:%S.000') AS \`Cells.at\`, toString(count()) AS \`Cells.count\`
       FROM ${DB}.cells GROUP BY \`Cells.label\`, \`Cells.at.day\`, \`Cells.at\``,
    );
    const key = (row: Row) => `${row['Cells.at.day']}|${row['Cells.label']}`;
    const byKey = (rows: Row[]) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    expect(expected.length).toBeGreaterThan(100);
    expect(byKey(res.body.data)).toEqual(byKey(expected));
  });
});

describe("the driver's rows", () => {
  type CubePath = {
    queryResponse(sql: string, values: unknown[]): Promise<unknown>;
    normaliseResponse(response: unknown): unknown[];
    query(sql: string, values: unknown[]): Promise<unknown[]>;
    release(): Promise<void>;
  };
  let driver: CubePath;
  beforeAll(() => {
    driver = createDriverFactory(service.warehouse, service.config.query, () => undefined)() as unknown as CubePath;
  });
  afterAll(() => driver.release());

  /** Cube's own reading: the whole answer in JSONCompact, parsed at once and turned into objects. */
  const cubes = async (sql: string, values: unknown[] = []) => driver.normaliseResponse(await driver.queryResponse(sql, values));

  it.each([
    [
      'every column and expression type',
      `SELECT *, [label, 'x'] AS labels, map(label, id) AS by_label, (id, label) AS pair, if(id % 97 = 0, ratio / 0, ratio) AS odd,
       toFloat32(ratio) AS narrow, sum(ratio) OVER (ORDER BY id) AS running, toDateTime64(at_ms, 6, 'UTC') AS micro, toUUID('6b8f9d1c-0d5e-4b7a-9c1e-2f3a4b5c6d7e') AS u
     FROM ${DB}.cells ORDER BY id`,
    ],
    ['no rows', `SELECT id, label FROM ${DB}.cells WHERE id > ${ROWS} ORDER BY id`],
    ['one row, parameters in place', `SELECT id, label FROM ${DB}.cells WHERE label = ? AND id < ? ORDER BY id LIMIT 1`],
  ])('are Cube’s own driver’s, byte for byte: %s', async (_name, sql) => {
    const values = sql.includes('?') ? [LABELS[3], 100] : [];
    const ours = await driver.query(sql, values);
    const theirs = await cubes(sql, values);
    expect(JSON.stringify(ours)).toBe(JSON.stringify(theirs));
    if (sql.includes('SELECT *')) expect(ours).toHaveLength(ROWS);
    if (sql.includes('LIMIT 1')) expect(ours).toHaveLength(1);
  });

  it('fail as Cube’s own driver’s do, with ClickHouse’s code in the message', async () => {
    const sql = `SELECT throwIf(id = 1500, 'row 1500') FROM ${DB}.cells`;
    const ours = await driver.query(sql, []).catch((err: Error) => err);
    const theirs = await cubes(sql).catch((err: Error) => err);
    expect(ours).toBeInstanceOf(Error);
    expect((ours as Error).message).toMatch(/^(Error: )?Code: 395\. .*Query failed: .*row 1500/s);
    expect((ours as Error).message.replace(/query id: \S+/g, '')).toBe((theirs as Error).message.replace(/query id: \S+/g, ''));
  });
});
