import { readFileSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadUserAgents } from '../../../src/warehouse/derive/user-agents';
import { addressPlaces } from '../../../src/warehouse/geo/places';
import type { ImportOptions } from '../../../src/warehouse/import/import';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { load, type Api } from '../support/api';
import type { TestService } from '../support/service';

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

export type AnswerRows = Record<string, string | null>[];

/** A query's rows as the spec's API and Cube's answer it to account acme's key; each answer must be a 200. */
export async function inBothApis(service: TestService, query: Record<string, unknown>): Promise<AnswerRows[]> {
  const answers: AnswerRows[] = [];
  for (const api of ['data', 'cubejs'] as Api[]) {
    const res = await load(service, query, { api, key: service.accountKeys.acme });
    expect(res.status).toBe(200);
    answers.push(res.body.data as AnswerRows);
  }
  return answers;
}
