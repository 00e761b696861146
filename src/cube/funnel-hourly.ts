import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../log';
import { quoteIdentifier, quoteString } from '../warehouse/ddl';
import { statementTicket } from '../warehouse/statement-queue';
import type { ExportSql } from './engine/export-sql';

/**
 * WebEventsFromPodcastFunnel by account, step and hour, kept beside the
 * rollup database (rollupSourceDatabase) for the funnel's rollup builds to
 * read (see the model).
 *
 * Why not Cube's partitions: a row's time is its address's latest download
 * that reached the step, so a new download moves the address out of an hour
 * anywhere in its history; a time partition (Cube's `partitionGranularity`
 * with `updateWindow`, or a ClickHouse partition by month) is changed by rows
 * of any later time, and rebuilding only the partitions an import touched
 * would leave the address counted twice. What does hold: addresses are
 * independent, and an address is an account's (the user is account and
 * address together). So the table is partitioned by account and remade for
 * the accounts an import brought rows of, each swapped in whole
 * (REPLACE PARTITION: a reader sees the old hours or the new, never a mix).
 * The operator's rollup sums every account's hours instead of joining every
 * account's rows again: an import of a new account reads that account's
 * rows and the tables here, not the other accounts'.
 *
 * An account's hours are made by the SQL Cube writes for the funnel by step
 * and hour in that account's context (Etc/UTC, which the rollups do not
 * serve, so Cube writes it from the steps): the funnel's own definition, not
 * a second one. `funnel_built` records, per account, the row counts of
 * downloads and web_events the hours were made from; the model's refresh key
 * reads it, so Cube rebuilds a rollup once its accounts' hours changed.
 */
export const HOURLY_TABLE = 'funnel_hourly';
export const BUILT_TABLE = 'funnel_built';
export const COMPLETE_TABLE = 'funnel_complete';

const LANE = 'funnel-hourly';
/** More hours than any account has (a century of hours × 3 steps). */
const ROW_LIMIT = 3 * 24 * 366 * 100;

const QUERY = {
  measures: ['WebEventsFromPodcastFunnel.conversions'],
  dimensions: ['WebEventsFromPodcastFunnel.step'],
  timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', granularity: 'hour' }],
  timezone: 'Etc/UTC',
};

export interface FunnelHourlyOptions {
  /** Writes the rollup database and reads the data (the rollup builder's client). */
  client: ClickHouseClient;
  database: string;
  /** Where the tables are kept (rollupSourceDatabase). */
  sourceDatabase: string;
  /** Cube's SQL for a query in an account's context, parameters in place. */
  sqlOf(query: Record<string, unknown>, limit: number, accountId: string): Promise<ExportSql>;
  logger: Logger;
}

export interface FunnelHourly {
  /** Makes the tables if missing (once it succeeded, at once). */
  ensure(): Promise<void>;
  /** Remakes the hours of these accounts whose row counts differ from those their hours were made from. */
  remake(accounts: readonly string[]): Promise<string[]>;
  /** Remakes every account whose counts changed (or that has none yet): what rows added by other means need. */
  catchUp(): Promise<string[]>;
  /**
   * Every `everyMs`, a catch-up when the rows of downloads and web_events
   * changed since the last look (system.parts: no table is read), the first
   * look included. Looks never overlap; a look while `held()` is skipped
   * (after the first), and the next one sees what changed meanwhile.
   */
  follow(everyMs: number, held?: () => boolean): { stop(): void; firstLook: Promise<void> };
}

export function createFunnelHourly({ client, database, sourceDatabase, sqlOf, logger }: FunnelHourlyOptions): FunnelHourly {
  const db = quoteIdentifier(database);
  const rdb = quoteIdentifier(sourceDatabase);
  const hourly = `${rdb}.${quoteIdentifier(HOURLY_TABLE)}`;
  const built = `${rdb}.${quoteIdentifier(BUILT_TABLE)}`;
  const complete = `${rdb}.${quoteIdentifier(COMPLETE_TABLE)}`;
  const setComplete = (value: boolean) => command(`INSERT INTO ${complete} (complete, at) SELECT ${value ? 1 : 0}, now64(6)`);
  const inLane = <T>(work: () => Promise<T>) => statementTicket.run({ lane: LANE }, work);
  const command = (query: string) => inLane(() => client.command({ query }).then(() => undefined));
  const rows = <T>(query: string) => inLane(async () => (await client.query({ query, format: 'JSONEachRow' })).json<T>());
  // One remake at a time: an import's and a catch-up's would otherwise remake the same account twice.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  /** The tables whose rows an account's hours are made from, each counted per account. */
  type Source = 'downloads' | 'web_events';
  const SOURCES: readonly Source[] = ['downloads', 'web_events'];
  type Counts = Record<Source, number>;
  const countsOf = async (table: Source, where: string): Promise<Map<string, number>> =>
    new Map(
      (await rows<{ a: string; n: string }>(`SELECT account_id AS a, count() AS n FROM ${db}.${table} WHERE ${where} GROUP BY a`)).map((r) => [
        r.a,
        Number(r.n),
      ]),
    );
  const builtCounts = async (where: string): Promise<Map<string, Counts>> =>
    new Map(
      (
        await rows<{ a: string; d: string; w: string }>(
          `SELECT account_id AS a, argMax(downloads, built) AS d, argMax(web_events, built) AS w FROM ${built} WHERE ${where} GROUP BY a`,
        )
      ).map((r) => [r.a, { downloads: Number(r.d), web_events: Number(r.w) }]),
    );

  const remakeOne = async (account: string, counts: Counts) => {
    const started = performance.now();
    const { sql, columns } = await sqlOf(QUERY, ROW_LIMIT, account);
    const alias = (member: string) => {
      const found = columns.find((c) => c.member === member);
      if (!found) throw new Error(`Cube's funnel SQL lacks ${member}`);
      return quoteIdentifier(found.alias);
    };
    const next = `${rdb}.${quoteIdentifier(`${HOURLY_TABLE}_next_${createHash('sha256').update(account).digest('hex').slice(0, 16)}`)}`;
    await command(`DROP TABLE IF EXISTS ${next} SYNC`);
    await command(`CREATE TABLE ${next} AS ${hourly}`);
    try {
      await command(
        `INSERT INTO ${next} (account_id, hour, step, conversions)
         SELECT ${quoteString(account)}, toDateTime(${alias('WebEventsFromPodcastFunnel.time.hour')}, 'UTC'), ${alias('WebEventsFromPodcastFunnel.step')}, ${alias('WebEventsFromPodcastFunnel.conversions')}
         FROM (${sql}) WHERE ${alias('WebEventsFromPodcastFunnel.conversions')} > 0`,
      );
      const [{ n }] = await rows<{ n: string }>(`SELECT count() AS n FROM ${next}`);
      // An account without funnel rows (any more) has no partition to copy: its hours go.
      await command(
        Number(n) > 0
          ? `ALTER TABLE ${hourly} REPLACE PARTITION ${quoteString(account)} FROM ${next}`
          : `ALTER TABLE ${hourly} DROP PARTITION ${quoteString(account)}`,
      );
    } finally {
      await command(`DROP TABLE IF EXISTS ${next} SYNC`);
    }
    // A SELECT, not VALUES: chDB's statements carry their settings after it (withStatementSettings).
    await command(
      `INSERT INTO ${built} (account_id, downloads, web_events, built) SELECT ${quoteString(account)}, ${counts.downloads}, ${counts.web_events}, now64(6)`,
    );
    logger.info('funnel hours remade', { account, counts, seconds: Math.round(performance.now() - started) / 1000 });
  };

  /**
   * Remakes the accounts (those given, or every one) whose counts in the
   * `changed` tables differ from those their hours were made from. A table
   * not changed since the last look is not read: its counts are the ones
   * recorded (an account never recorded has none there, since the first
   * look counts both).
   */
  const remakeWhereChanged = async (where: string, accounts: readonly string[] | undefined, changed: readonly Source[], first = false) => {
    const then = await builtCounts(where);
    const now = new Map<Source, Map<string, number>>();
    for (const table of changed) now.set(table, await countsOf(table, where));
    const candidates = new Set(accounts ?? [...then.keys(), ...[...now.values()].flatMap((m) => [...m.keys()])]);
    const stale: [string, Counts][] = [];
    for (const account of [...candidates].filter((a) => a !== '').sort()) {
      const recorded = then.get(account);
      const counts = Object.fromEntries(SOURCES.map((t) => [t, now.get(t)?.get(account) ?? (now.has(t) ? 0 : (recorded?.[t] ?? 0))])) as Counts;
      const same = recorded ? SOURCES.every((t) => recorded[t] === counts[t]) : counts.downloads + counts.web_events === 0;
      if (!same) stale.push([account, counts]);
    }
    // The first look after start-up: until every account it found has hours, rollups read the steps of those without.
    const unmade = stale.some(([account]) => !then.has(account));
    if (first && unmade) await setComplete(false);
    for (const [account, counts] of stale) await remakeOne(account, counts);
    if (first) await setComplete(true);
    return stale.map(([account]) => account);
  };

  let made: Promise<void> | undefined;
  const ensure = () => {
    made ??= (async () => {
      await command(`CREATE DATABASE IF NOT EXISTS ${rdb}`);
      await command(
        `CREATE TABLE IF NOT EXISTS ${hourly} (account_id String, hour DateTime('UTC'), step LowCardinality(String), conversions UInt64)
         ENGINE = MergeTree PARTITION BY account_id ORDER BY (account_id, hour, step)`,
      );
      await command(
        `CREATE TABLE IF NOT EXISTS ${built} (account_id String, downloads UInt64, web_events UInt64, built DateTime64(6, 'UTC')) ENGINE = MergeTree ORDER BY (account_id, built)`,
      );
      await command(`CREATE TABLE IF NOT EXISTS ${complete} (complete UInt8, at DateTime64(6, 'UTC')) ENGINE = MergeTree ORDER BY at`);
    })();
    // A warehouse that did not answer is asked again next time.
    made.catch(() => (made = undefined));
    return made;
  };
  const catchUp = (changed: readonly Source[] = SOURCES, first = false) =>
    serial(async () => {
      await ensure();
      return remakeWhereChanged('1 = 1', undefined, changed, first);
    });

  return {
    ensure,
    remake: (accounts) =>
      serial(async () => {
        const wanted = accounts.filter((a) => a !== '');
        if (wanted.length === 0) return [];
        await ensure();
        return remakeWhereChanged(`account_id IN (${wanted.map(quoteString).join(', ')})`, wanted, SOURCES);
      }),
    catchUp: () => catchUp(),
    follow: (everyMs, held = () => false) => {
      let seen: Map<string, string> | undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const look = async () => {
        if (seen !== undefined && held()) return;
        const parts = new Map(
          (
            await rows<{ t: string; r: string }>(
              `SELECT table AS t, toString(sum(rows)) AS r FROM system.parts WHERE active AND database = ${quoteString(database)} AND table IN ('downloads', 'web_events') GROUP BY t`,
            )
          ).map((p) => [p.t, p.r]),
        );
        const changed = SOURCES.filter((t) => seen === undefined || seen.get(t) !== parts.get(t));
        if (changed.length === 0) return;
        await catchUp(changed, seen === undefined);
        seen = parts;
      };
      let looked: () => void = () => undefined;
      const firstLook = new Promise<void>((resolve) => (looked = resolve));
      const loop = () => {
        if (stopped) return;
        look()
          .catch((err: unknown) =>
            logger.error('remaking the funnel hours failed; the funnel rollup reads the raw rows of accounts it lacks', {
              error: err instanceof Error ? err.message : String(err),
            }),
          )
          .finally(() => {
            looked();
            if (!stopped) timer = setTimeout(loop, everyMs).unref();
          });
      };
      loop();
      return {
        firstLook,
        stop() {
          stopped = true;
          if (timer) clearTimeout(timer);
        },
      };
    },
  };
}
