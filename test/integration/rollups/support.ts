import path from 'node:path';
import { DATABASE, ROLLUP_DATABASE } from '../support/constants';
import type { Oracle, TestService } from '../support/service';
import { cubeSql, load } from '../support/api';

/** Models of one cube with a rollup (fixtures/rollup-schema): the shipped models have none. */
export const ROLLUP_SCHEMA = path.join(__dirname, '..', 'fixtures', 'rollup-schema');
export const ROLLUP = 'RolledDownloads.byCountry';
const TIME = 'RolledDownloads.ts';

/** Downloads by country over a range: the shape the rollup answers. */
export const byCountry = (dateRange: unknown, extra: Record<string, unknown> = {}) => ({
  measures: ['RolledDownloads.count'],
  dimensions: ['RolledDownloads.country'],
  timeDimensions: [{ dimension: TIME, dateRange }],
  ...extra,
});

export type Counts = Record<string, number>;

/** The answer as counts by country. */
export async function answer(service: TestService, key: string, query: Record<string, unknown>): Promise<Counts> {
  const res = await load(service, query, { key }).expect(200);
  return Object.fromEntries((res.body.data as Record<string, string>[]).map((r) => [r['RolledDownloads.country'], Number(r['RolledDownloads.count'])]));
}

/** The same counts as direct SQL: `where` narrows downloads (an account, a range of ts). */
export async function direct(oracle: Oracle, where: string): Promise<Counts> {
  const rows = await oracle.rows<{ k: string; v: string }>(`SELECT country AS k, count() AS v FROM ${DATABASE}.downloads WHERE ${where} GROUP BY k`);
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.v)]));
}

/** The rollups Cube names for the query under the key: empty when it reads the raw tables. */
export async function rollupsFor(service: TestService, key: string, query: Record<string, unknown>): Promise<string[]> {
  const res = await cubeSql(service, query, { key }).expect(200);
  return (res.body.sql.preAggregations as { preAggregationId: string }[]).map((p) => p.preAggregationId);
}

/** The rollup's tables in the rollup database (each build of each context's rollup is a table of its own). */
export async function rollupTables(oracle: Oracle): Promise<string[]> {
  const rows = await oracle.rows<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = '${ROLLUP_DATABASE}' AND name LIKE 'rolled_downloads_by_country%' ORDER BY name`,
  );
  return rows.map((r) => r.name);
}
