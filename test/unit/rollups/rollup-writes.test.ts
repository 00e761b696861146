/**
 * Which statements Cube's driver sends to the writing client
 * (src/cube/engine/driver.ts): a rollup build's, on the rollup database, and
 * nothing else. Every other statement stays on the read-only query client
 * (test/integration/limits/warehouse.suite.ts proves it refuses writes, the rollup
 * database's included).
 */
import { isRollupWrite } from '../../../src/cube/engine/driver';

const R = 'analytics_rollups';
const T = `${R}.web_events_from_podcast_funnel_conversions_by_step_jso4eu3w_4idmroq5_1lg8nhr`;

// As Cube 0.33 and its ClickHouse driver write them (seen in the driver during builds).
const BUILD = [
  `CREATE DATABASE IF NOT EXISTS ${R}`,
  `CREATE TABLE ${T} ENGINE = MergeTree() ORDER BY (\`web_events_from_podcast_funnel__step\`) AS SELECT\n  step FROM (SELECT 1)`,
  `ALTER TABLE ${T} ADD INDEX web_events_from_podcast_funnel_conversions_by_step_by_step_jso4eu3w (\`web_events_from_podcast_funnel__step\`) TYPE minmax GRANULARITY 1`,
  `DROP TABLE ${T}`,
  `INSERT INTO ${T} SELECT 1`,
  `RENAME TABLE ${T} TO ${T}_2`,
];

const OTHERS = [
  'SELECT 1',
  `SELECT * FROM ${T}`,
  'CREATE DATABASE IF NOT EXISTS analytics',
  `CREATE DATABASE IF NOT EXISTS ${R}_2`,
  'CREATE TABLE analytics.x ENGINE = Memory AS SELECT 1',
  `CREATE TABLE ${R}_2.x ENGINE = Memory AS SELECT 1`,
  'INSERT INTO analytics.downloads SELECT * FROM analytics.downloads',
  'DROP TABLE analytics.downloads',
  `DROP TABLE ${T}, analytics.downloads`,
  `DROP DATABASE ${R}`,
  `ALTER TABLE ${T} DELETE WHERE 1`,
  'ALTER TABLE analytics.downloads ADD INDEX i (ts) TYPE minmax GRANULARITY 1',
  `RENAME TABLE analytics.downloads TO ${T}`,
  `RENAME TABLE ${T} TO analytics.downloads`,
  `TRUNCATE TABLE ${T}`,
  `SET readonly = 0`,
];

it.each(BUILD)('a rollup build statement goes to the writing client: %s', (sql) => {
  expect(isRollupWrite(sql, R)).toBe(true);
});

it.each(OTHERS)('anything else stays on the read-only client: %s', (sql) => {
  expect(isRollupWrite(sql, R)).toBe(false);
});
