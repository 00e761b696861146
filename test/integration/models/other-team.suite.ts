/**
 * Another team's models over another team's tables: a database of their own
 * with no account_id column, served by pointing CLICKHOUSE_DATABASE and
 * CUBE_MODELS_DIR at them. The account rule does not apply; the models must
 * still validate, and the service answers from their tables.
 */
import { API_KEY } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { models, modelDir, problemLines, removeModelDirs } from './support';
import { load } from '../support/api';

const DB = 'other_team';
const PLAYS = `cubes:
  - name: Plays
    sql_table: plays
    measures:
      - name: count
        description: Number of plays.
        type: count
      - name: seconds
        description: Seconds played, summed.
        type: sum
        sql: seconds
    dimensions:
      - name: country
        sql: country
        type: string
      - name: playedAt
        sql: played_at
        type: time
`;

let oracle: Oracle;
let dir: string;
const env = () => ({ CLICKHOUSE_DATABASE: DB, CUBE_MODELS_DIR: dir });

beforeAll(async () => {
  oracle = openOracle();
  // Written beside the suite's dataset (libchdb binds one data directory per process), in a database of its own.
  await oracle.rows(`CREATE DATABASE IF NOT EXISTS ${DB}`);
  await oracle.rows(`CREATE TABLE IF NOT EXISTS ${DB}.plays (played_at DateTime, country String, seconds UInt32) ENGINE = MergeTree ORDER BY played_at`);
  await oracle.rows(`TRUNCATE TABLE ${DB}.plays`);
  await oracle.rows(
    `INSERT INTO ${DB}.plays SELECT toDateTime('2026-11-01 00:00:00') + number * 3600, ['NO', 'SE', 'DK'][number % 3 + 1], number % 600 FROM numbers(500)`,
  );
  dir = modelDir({ 'Plays.yml': PLAYS });
});
afterAll(async () => {
  await oracle.rows(`DROP DATABASE IF EXISTS ${DB}`);
  await oracle.close();
  // After the describes' own hooks, which close the services over the directory.
  removeModelDirs();
});

it('validates without an access declaration or an account filter', async () => {
  const { code, stdout } = await models(['validate'], env());
  expect(problemLines(stdout)).toEqual([]);
  expect(code).toBe(0);
});

describe('served', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(env(), { accounts: ['northwind-audio'] });
  });
  afterAll(() => service.close());

  it('answers from their tables, for every key', async () => {
    const want = await oracle.rows<Record<string, string>>(
      `SELECT country AS \`Plays.country\`, toString(count()) AS \`Plays.count\`, toString(sum(seconds)) AS \`Plays.seconds\` FROM ${DB}.plays GROUP BY country ORDER BY country`,
    );
    const query = { measures: ['Plays.count', 'Plays.seconds'], dimensions: ['Plays.country'], order: { 'Plays.country': 'asc' } };
    for (const key of [API_KEY, service.accountKeys['northwind-audio']]) {
      const res = await load(service, query, { key }).expect(200);
      expect(res.body.data).toEqual(want);
    }
  });
});
