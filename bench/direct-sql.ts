import { performance } from 'node:perf_hooks';
import type http from 'node:http';
import type { ClickHouseClient } from '@clickhouse/client';
// How Cube's ClickHouse driver puts parameters into its SQL (a dependency of the driver).
import { formatMySql } from '@cubejs-backend/shared';
import { ROW_FORMAT } from '../src/cube/engine/driver';
import { jsonLinesInSlices } from '../src/cube/engine/row-reader';
import { describe, send, type Outcome } from './http-load';
import { neverValue, queryOf, type LoadScenario } from './scenarios';

/**
 * The exact SQL Cube generates for a scenario's requests, account condition
 * included, asked of Cube's own /cubejs-api/v1/sql with the scenario's key,
 * and a runner that sends it straight to the engine the service uses (same
 * chDB connection and statement queue, same read-only limit settings, the
 * driver's own result format), without Cube or HTTP.
 */
export interface DirectSql {
  /** The SQL of the scenario's n-th request, parameters in place. */
  sqlOf(n: number): string;
  /** The n-th request's SQL run, its rows read as the driver reads them, as objects keyed by column name. */
  rows(n: number): Promise<Record<string, unknown>[]>;
  run(n: number): Promise<Outcome>;
}

export async function directSql(
  scenario: LoadScenario,
  http: { baseUrl: string; agent: http.Agent; key: string },
  client: ClickHouseClient,
): Promise<DirectSql> {
  const probe = 0;
  const { renewQuery: _ignored, ...query } = queryOf(scenario, probe);
  const answer = await send(http.baseUrl, http.agent, { method: 'POST', path: '/cubejs-api/v1/sql', key: http.key, body: { query } });
  if (answer.status !== 200) throw new Error(`Cube's SQL for ${scenario.shape.name}: ${describe(answer)}`);
  const [text, params] = (JSON.parse(answer.body) as { sql: { sql: [string, unknown[]] } }).sql.sql;
  // The uncached variant differs per request in its filter value only, which Cube passes as a parameter.
  const marker = params.indexOf(neverValue(probe));
  if (scenario.cache === 'uncached' && marker < 0) throw new Error(`Cube's SQL for ${scenario.shape.name} lacks the per-request filter value`);
  const sqlOf = (n: number) => formatMySql(text, marker < 0 ? params : params.map((p, i) => (i === marker ? neverValue(n) : p)));

  // Read as the driver reads it: a slice of lines parsed per turn of the event loop.
  const read = async (sql: string, onSlice: (lines: unknown[]) => void) => {
    const answer = await client.exec({ query: `${sql}\nFORMAT ${ROW_FORMAT}`, clickhouse_settings: { send_progress_in_http_headers: 0 } });
    for await (const lines of jsonLinesInSlices(answer.stream as AsyncIterable<Uint8Array>)) onSlice(lines);
  };

  return {
    sqlOf,
    rows: async (n) => {
      const lines: unknown[] = [];
      await read(sqlOf(n), (slice) => lines.push(...slice));
      // The format's first two lines are the column names and types.
      const [names, , ...values] = lines as string[][];
      return values.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])));
    },
    run: async (n) => {
      const sql = sqlOf(n);
      const started = performance.now();
      try {
        await read(sql, () => {});
        return { ms: performance.now() - started, ok: true };
      } catch (err) {
        return { ms: performance.now() - started, ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
  };
}
