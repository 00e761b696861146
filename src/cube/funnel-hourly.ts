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
 * Remade from what: an account's hours are the count by hour and step of
 * `funnel_address`, one row per address and step it reached at the hour of
 * its time there, made by the SQL Cube writes for the funnel by address,
 * step and hour in that account's context (Etc/UTC, which the rollups do not
 * serve, so Cube writes it from the steps): the funnel's own definition, not
 * a second one. From all of the account's rows when it is new, when its web
 * events changed, or when rows were added by other means (the looks); after
 * an import, from the import's first day on only (remakeFrom): an import
 * changes downloads from there on only, and the older times are kept in
 * `funnel_address`. At 100M an import into the largest account
 * (31M downloads) remade its hours from all of them in one statement of
 * 86.7 s that every query waited behind (docs/benchmarks.md).
 *
 * `funnel_built` records, per account, the row counts of downloads and
 * web_events the hours were made from, and whether `funnel_address` was
 * made with them (hours made before it was kept get a whole remake at the
 * start's catch-up); the model's refresh key reads it, so Cube rebuilds a
 * rollup once its accounts' hours changed.
 */
export const HOURLY_TABLE = 'funnel_hourly';
export const ADDRESS_TABLE = 'funnel_address';
export const BUILT_TABLE = 'funnel_built';
export const COMPLETE_TABLE = 'funnel_complete';

/**
 * How `funnel_address` keys a listener, recorded in `funnel_built.addresses`:
 * 0 none kept; 1 by ip4, every IPv6 listener of an account one address; 2 by
 * the listener's address (its IPv6 one without an IPv4). Hours made by an
 * older key get a whole remake at the start's catch-up.
 */
const ADDRESS_KEY = 2;
const LANE = 'funnel-hourly';
const HOUR_SECONDS = 3_600;
/** More rows than any account has: every IPv4 address at each of the 3 steps. */
const ROW_LIMIT = 3 * 2 ** 32;
const FUNNEL_CUBE = 'WebEventsFromPodcastFunnel';
const MEMBER = {
  userId: `${FUNNEL_CUBE}.userId`,
  step: `${FUNNEL_CUBE}.step`,
  hour: `${FUNNEL_CUBE}.time.hour`,
  conversions: `${FUNNEL_CUBE}.conversions`,
};

/**
 * The funnel by address, step and hour: one row per address and step it
 * reached, at the hour of the address's time there. `since` (an hour's
 * start, epoch seconds) keeps the rows whose time is at or after it, and the
 * model's `since` pushes it into the steps, which then read no older row.
 */
const addressQuery = (since: number | undefined) => ({
  measures: [MEMBER.conversions],
  dimensions: [MEMBER.userId, MEMBER.step],
  timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', granularity: 'hour' }],
  ...(since === undefined
    ? {}
    : { filters: [{ member: 'WebEventsFromPodcastFunnel.time', operator: 'afterOrOnDate', values: [new Date(since * 1000).toISOString().slice(0, 23)] }] }),
  timezone: 'Etc/UTC',
});

/**
 * Downloads of an account changed (an import, or its rollback): from `since`
 * on only (epoch seconds: no download before it was added, removed or
 * changed), or anywhere when it is absent.
 */
export interface DataChange {
  account: string;
  since?: number;
}

export interface FunnelHourlyOptions {
  /** Writes the rollup database and reads the data (the rollup builder's client). */
  client: ClickHouseClient;
  database: string;
  /** Where the tables are kept (rollupSourceDatabase). */
  sourceDatabase: string;
  /** Cube's SQL for a query in an account's context, parameters in place. */
  sqlOf(query: Record<string, unknown>, limit: number, accountId: string): Promise<ExportSql>;
  /** The serving models' cubes: a models directory of a team's own may have no funnel, and then no hours are kept. */
  cubes(): Promise<ReadonlySet<string>>;
  logger: Logger;
}

export interface FunnelHourly {
  /** Makes the tables if missing (once it succeeded, at once). */
  ensure(): Promise<void>;
  /**
   * Remakes the hours of these accounts: of one with a `since`, always, from
   * that hour on when it can (see remakeFrom); of one without, when its row
   * counts differ from those its hours were made from, in full.
   */
  remake(changes: readonly DataChange[]): Promise<string[]>;
  /** Remakes every account whose counts changed (or that has none yet): what rows added by other means need. */
  catchUp(): Promise<string[]>;
  /**
   * Every `everyMs`, a catch-up when the rows of downloads and web_events
   * changed since the last look (system.parts: no table is read), the first
   * look included. Looks never overlap; a look while `held()` is skipped
   * (after the first), and the next one sees what changed meanwhile.
   * `lookNow()` looks at once, held or not.
   */
  follow(everyMs: number, held?: () => boolean): { stop(): void; firstLook: Promise<void>; lookNow(): Promise<void> };
}

export function createFunnelHourly({ client, database, sourceDatabase, sqlOf, cubes, logger }: FunnelHourlyOptions): FunnelHourly {
  const db = quoteIdentifier(database);
  const rdb = quoteIdentifier(sourceDatabase);
  const hourly = `${rdb}.${quoteIdentifier(HOURLY_TABLE)}`;
  const addresses = `${rdb}.${quoteIdentifier(ADDRESS_TABLE)}`;
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
  /** What an account's hours were last made from, and whether its addresses' rows were made with them. */
  type Built = Counts & { addresses: boolean };
  const countsOf = async (table: Source, where: string): Promise<Map<string, number>> =>
    new Map(
      (await rows<{ a: string; n: string }>(`SELECT account_id AS a, count() AS n FROM ${db}.${table} WHERE ${where} GROUP BY a`)).map((r) => [
        r.a,
        Number(r.n),
      ]),
    );
  const builtCounts = async (where: string): Promise<Map<string, Built>> =>
    new Map(
      (
        await rows<{ a: string; d: string; w: string; x: number }>(
          `SELECT account_id AS a, argMax(downloads, built) AS d, argMax(web_events, built) AS w, argMax(addresses, built) AS x FROM ${built} WHERE ${where} GROUP BY a`,
        )
      ).map((r) => [r.a, { downloads: Number(r.d), web_events: Number(r.w), addresses: Number(r.x) === ADDRESS_KEY }]),
    );

  /** A scratch table of the account's, made like `like`, dropped once `work` is done. */
  const withScratch = async <T>(kind: string, like: string, account: string, work: (table: string) => Promise<T>): Promise<T> => {
    const table = `${rdb}.${quoteIdentifier(`${kind}_next_${createHash('sha256').update(account).digest('hex').slice(0, 16)}`)}`;
    await command(`DROP TABLE IF EXISTS ${table} SYNC`);
    await command(`CREATE TABLE ${table} AS ${like}`);
    try {
      return await work(table);
    } finally {
      await command(`DROP TABLE IF EXISTS ${table} SYNC`);
    }
  };
  /** Cube's rows of the account's addresses (from `since` on) into `table`. */
  const insertAddresses = async (account: string, since: number | undefined, table: string) => {
    const { sql, columns } = await sqlOf(addressQuery(since), ROW_LIMIT, account);
    const alias = (member: string) => {
      const found = columns.find((c) => c.member === member);
      if (!found) throw new Error(`Cube's funnel SQL lacks ${member}`);
      return quoteIdentifier(found.alias);
    };
    await command(
      `INSERT INTO ${table} (account_id, user_id, step, hour)
       SELECT ${quoteString(account)}, ${alias(MEMBER.userId)}, ${alias(MEMBER.step)}, toDateTime(${alias(MEMBER.hour)}, 'UTC')
       FROM (${sql}) WHERE ${alias(MEMBER.conversions)} > 0`,
    );
  };
  /**
   * The account's addresses' rows in `next` become its partition of
   * funnel_address, and their count by hour and step its partition of
   * funnel_hourly: each swapped in whole (REPLACE PARTITION: a reader sees
   * the old hours or the new, never a mix).
   */
  const swapIn = async (account: string, next: string) => {
    await withScratch(HOURLY_TABLE, hourly, account, async (nextHours) => {
      await command(
        `INSERT INTO ${nextHours} (account_id, hour, step, conversions) SELECT account_id, hour, step, count() FROM ${next} GROUP BY account_id, hour, step`,
      );
      const [{ n }] = await rows<{ n: string }>(`SELECT count() AS n FROM ${next}`);
      // An account without funnel rows (any more) has no partition to copy: its rows go.
      for (const [table, from] of [
        [addresses, next],
        [hourly, nextHours],
      ]) {
        await command(
          Number(n) > 0
            ? `ALTER TABLE ${table} REPLACE PARTITION ${quoteString(account)} FROM ${from}`
            : `ALTER TABLE ${table} DROP PARTITION ${quoteString(account)}`,
        );
      }
    });
  };

  /** Every address's rows from all of the account's history. */
  const remakeWhole = (account: string) =>
    withScratch(ADDRESS_TABLE, addresses, account, async (next) => {
      await insertAddresses(account, undefined, next);
      await swapIn(account, next);
    });

  /**
   * The account's downloads changed from `since` (an hour's start) on only,
   * and its web_events not at all. An address's time at a step is its latest
   * download there that reached the step, and whether a download reaches it
   * depends on the download and the web events only: so every reach before
   * `since` is what it was, and for an address with a reach at or after
   * `since` its time is the one Cube's funnel gives over the rows from
   * `since` on (which reads those rows only). The new rows are those, and
   * the old rows before `since` of the other addresses and steps. An old row
   * at or after `since` with no new one means downloads went (an import
   * rolled back): what the address had before `since` is not kept, so the
   * account is remade whole. Returns whether it was done.
   */
  const remakeFrom = (account: string, since: number) =>
    withScratch(`${ADDRESS_TABLE}_from`, addresses, account, async (recent) => {
      await insertAddresses(account, since, recent);
      const from = `toDateTime(${since}, 'UTC')`;
      const [{ n: gone }] = await rows<{ n: string }>(
        `SELECT count() AS n FROM ${addresses} WHERE account_id = ${quoteString(account)} AND hour >= ${from} AND (user_id, step) NOT IN (SELECT user_id, step FROM ${recent})`,
      );
      if (Number(gone) > 0) return false;
      await withScratch(ADDRESS_TABLE, addresses, account, async (next) => {
        await command(
          `INSERT INTO ${next} SELECT * FROM ${addresses} WHERE account_id = ${quoteString(account)} AND hour < ${from} AND (user_id, step) NOT IN (SELECT user_id, step FROM ${recent})`,
        );
        await command(`INSERT INTO ${next} SELECT * FROM ${recent}`);
        await swapIn(account, next);
      });
      return true;
    });

  /**
   * Remakes the account's hours: from `since` on when the hours were made
   * with their addresses' rows and from the web_events there are now (an
   * import changes downloads only), in full otherwise.
   */
  const remakeOne = async (account: string, counts: Counts, recorded: Built | undefined, since?: number) => {
    const started = performance.now();
    const from = since === undefined ? undefined : Math.floor(since / HOUR_SECONDS) * HOUR_SECONDS;
    const partial = from !== undefined && recorded?.addresses === true && recorded.web_events === counts.web_events && (await remakeFrom(account, from));
    if (!partial) await remakeWhole(account);
    // A SELECT, not VALUES: chDB's statements carry their settings after it (withStatementSettings).
    await command(
      `INSERT INTO ${built} (account_id, downloads, web_events, addresses, built) SELECT ${quoteString(account)}, ${counts.downloads}, ${counts.web_events}, ${ADDRESS_KEY}, now64(6)`,
    );
    logger.info('funnel hours remade', {
      account,
      counts,
      ...(partial ? { from: new Date(from * 1000).toISOString() } : {}),
      seconds: Math.round(performance.now() - started) / 1000,
    });
  };

  // Said once while the models lack the funnel; again if a reload brings it back and another takes it away.
  let saidNoFunnel = false;
  /**
   * Remakes the accounts (those given, or every one) whose counts in the
   * `changed` tables differ from those their hours were made from, or whose
   * hours were made without their addresses' rows (before those were kept),
   * and the accounts given a `since` whatever their counts. A table not
   * changed since the last look is not read: its counts are the ones
   * recorded (an account never recorded has none there, since the first
   * look counts both). Null when the models have no funnel: nothing is
   * remade or recorded, so a reload that brings the funnel back finds the
   * accounts still to remake.
   */
  const remakeWhereChanged = async (where: string, changes: readonly DataChange[] | undefined, changed: readonly Source[], first = false) => {
    const then = await builtCounts(where);
    const now = new Map<Source, Map<string, number>>();
    for (const table of changed) now.set(table, await countsOf(table, where));
    const since = new Map<string, number>();
    for (const change of changes ?? []) {
      if (change.since !== undefined) since.set(change.account, Math.min(change.since, since.get(change.account) ?? Infinity));
    }
    const candidates = new Set(changes?.map((c) => c.account) ?? [...then.keys(), ...[...now.values()].flatMap((m) => [...m.keys()])]);
    const stale: [string, Counts][] = [];
    for (const account of [...candidates].filter((a) => a !== '').sort()) {
      const recorded = then.get(account);
      const counts = Object.fromEntries(SOURCES.map((t) => [t, now.get(t)?.get(account) ?? (now.has(t) ? 0 : (recorded?.[t] ?? 0))])) as Counts;
      const same = recorded ? recorded.addresses && SOURCES.every((t) => recorded[t] === counts[t]) : counts.downloads + counts.web_events === 0;
      if (!same || since.has(account)) stale.push([account, counts]);
    }
    if (stale.length > 0 && !(await cubes()).has(FUNNEL_CUBE)) {
      if (!saidNoFunnel) logger.info(`the models have no ${FUNNEL_CUBE} cube: no funnel hours are kept`);
      saidNoFunnel = true;
      return null;
    }
    saidNoFunnel = false;
    // The first look after start-up: until every account it found has hours, rollups read the steps of those without.
    const unmade = stale.some(([account]) => !then.has(account));
    if (first && unmade) await setComplete(false);
    for (const [account, counts] of stale) await remakeOne(account, counts, then.get(account), since.get(account));
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
      // By hour first: a remake from an hour on reads the rows from that hour on to know whether any address left them.
      await command(
        `CREATE TABLE IF NOT EXISTS ${addresses} (account_id String, user_id String, step LowCardinality(String), hour DateTime('UTC'))
         ENGINE = MergeTree PARTITION BY account_id ORDER BY (account_id, hour, step, user_id)`,
      );
      await command(
        `CREATE TABLE IF NOT EXISTS ${built} (account_id String, downloads UInt64, web_events UInt64, addresses UInt8, built DateTime64(6, 'UTC')) ENGINE = MergeTree ORDER BY (account_id, built)`,
      );
      // Hours made before the addresses' rows were kept (their rows say 0): the catch-up remakes those accounts in full once.
      await command(`ALTER TABLE ${built} ADD COLUMN IF NOT EXISTS addresses UInt8 AFTER web_events`);
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
    remake: (changes) =>
      serial(async () => {
        const wanted = changes.filter((c) => c.account !== '');
        if (wanted.length === 0) return [];
        await ensure();
        return (await remakeWhereChanged(`account_id IN (${[...new Set(wanted.map((c) => quoteString(c.account)))].join(', ')})`, wanted, SOURCES)) ?? [];
      }),
    catchUp: async () => (await catchUp()) ?? [],
    follow: (everyMs, held = () => false) => {
      let seen: Map<string, string> | undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const look = async (force: boolean) => {
        if (!force && seen !== undefined && held()) return;
        const parts = new Map(
          (
            await rows<{ t: string; r: string }>(
              `SELECT table AS t, toString(sum(rows)) AS r FROM system.parts WHERE active AND database = ${quoteString(database)} AND table IN ('downloads', 'web_events') GROUP BY t`,
            )
          ).map((p) => [p.t, p.r]),
        );
        const changed = SOURCES.filter((t) => seen === undefined || seen.get(t) !== parts.get(t));
        if (changed.length === 0) return;
        // Without a funnel the rows stay unseen: each look tries again, and the first after a reload that brings it back remakes.
        if ((await catchUp(changed, seen === undefined)) !== null) seen = parts;
      };
      const failed = (err: unknown) => {
        const error = err instanceof Error ? err.message : String(err);
        // A look in flight at close meets the closed warehouse; its tables stay as the last whole remake left them.
        if (stopped) logger.info('a look for new rows was cut short by the close', { error });
        else logger.error('remaking the funnel hours failed; the funnel rollup reads the raw rows of accounts it lacks', { error });
      };
      // Looks in turn: each reads what the one before left in `seen`.
      let looking: Promise<void> = Promise.resolve();
      const lookInTurn = (force: boolean) => (looking = looking.then(() => look(force)).catch(failed));
      let looked: () => void = () => undefined;
      const firstLook = new Promise<void>((resolve) => (looked = resolve));
      const loop = () => {
        if (stopped) return;
        void lookInTurn(false).finally(() => {
          looked();
          if (!stopped) timer = setTimeout(loop, everyMs).unref();
        });
      };
      loop();
      return {
        firstLook,
        lookNow: () => lookInTurn(true),
        stop() {
          stopped = true;
          if (timer) clearTimeout(timer);
        },
      };
    },
  };
}
