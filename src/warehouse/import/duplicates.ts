import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../sql';
import { accountsSql } from '../derive/downloads';
import type { Source } from './source';

/**
 * Staged rows one statement of the duplicate check reads at most (whole hours or days; one may exceed it) when the
 * import sets no budget: its statement holds the run's ids (16 bytes each, in a hash set) and the ids stored in its
 * span.
 */
const DUPLICATE_CHECK_ROWS = 500_000;

const HOUR = 3_600;
const DAY = 86_400;

/**
 * The staged rows (`staged`) that are already there, by their own ids (Source.duplicates): a row is a copy of
 * another of the same account with the same id (and, where the id does not name the time, the same UTC day: the
 * source's `within`), stored by an earlier import or on another line of the same file. Checked in runs of whole hours
 * (days) of at most `budget` staged rows: a row's copies lie in its own run, so only the stored rows of the run's span
 * are read, and a statement holds one run's ids, not the file's. When there are some, the staged rows are copied into `kept` without them (of
 * the copies in the file, the one whose fields hash least, so the same file always keeps the same row), and `kept` is
 * what is moved. Returns how many there were. Rows without an id are never duplicates: only an identical file is
 * recognised for them.
 */
export async function withoutDuplicates(
  client: ClickHouseClient,
  database: string,
  source: Source,
  staged: string,
  kept: string,
  accounts: readonly string[],
  budget = DUPLICATE_CHECK_ROWS,
): Promise<number> {
  if (!source.duplicates) return 0;
  const { id, identified = 'true', within, fields } = source.duplicates;
  const time = source.time;
  const [start, seconds] = within === 'id' ? [`toStartOfHour(${time})`, HOUR] : [`toStartOfDay(${time})`, DAY];
  // What a copy is found by: the id, or the id and the day.
  const key = within === 'id' ? id : `(${id}, ${start})`;
  const spans = await rows<{ at: string; n: string }>(client, `SELECT toInt64(${start}) AS at, count() AS n FROM ${staged} GROUP BY at ORDER BY at`);
  const runs: { from: number; to: number; rows: number }[] = [];
  for (const { at, n } of spans) {
    const last = runs.at(-1);
    if (last && last.rows + Number(n) <= budget) {
      last.to = Number(at) + seconds;
      last.rows += Number(n);
    } else runs.push({ from: Number(at), to: Number(at) + seconds, rows: Number(n) });
  }
  const inRun = (run: { from: number; to: number }) => `${time} >= toDateTime(${run.from}, 'UTC') AND ${time} < toDateTime(${run.to}, 'UTC')`;
  const stored = (run: { from: number; to: number }) =>
    `(SELECT ${key} FROM ${quoteIdentifier(database)}.${quoteIdentifier(source.target)} WHERE ${inRun(run)}${accountsSql(accounts)} AND ${identified})`;
  const found: number[] = [];
  for (const run of runs) {
    const [{ n }] = await rows<{ n: string }>(
      client,
      `SELECT count() - uniqExactIf(k, NOT stored) AS n
      FROM (SELECT ${key} AS k, k IN ${stored(run)} AS stored FROM ${staged} WHERE ${inRun(run)} AND ${identified})`,
    );
    found.push(Number(n));
  }
  const duplicates = found.reduce((a, b) => a + b, 0);
  if (duplicates === 0) return 0;
  await client.command({ query: `CREATE TABLE ${kept} AS ${staged}` });
  for (const [i, run] of runs.entries()) {
    const filter =
      found[i] === 0
        ? ''
        : ` AND (NOT ${identified} OR (${key} NOT IN ${stored(run)}
          AND (${key}, ${fields}) IN (SELECT ${key} AS k, min(${fields}) FROM ${staged} WHERE ${inRun(run)} AND ${identified} GROUP BY k)))
        LIMIT 1 BY ${key}`;
    await client.command({ query: `INSERT INTO ${kept} SELECT * FROM ${staged} WHERE ${inRun(run)}${filter}` });
  }
  return duplicates;
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}
