import type { Logger } from '../log';
import type { ExportSql } from './engine/export-sql';
import { createFunnelHourly, type DataChange, type FunnelHourlyOptions } from './funnel-hourly';

/** How often the funnel's hourly table looks for rows added by other means than an import (the rollup's refresh key is as frequent). */
const FUNNEL_LOOK_MS = 10_000;

export interface FreshnessOptions extends Omit<FunnelHourlyOptions, 'sqlOf' | 'cubes'> {
  /** Milliseconds between the funnel hours' looks for new rows; FUNNEL_LOOK_MS when absent. */
  funnelLookMs?: number;
  /** Cube's SQL for a query in an account's context (the models must be ready). */
  sqlOf(query: Record<string, unknown>, limit: number, accountId: string): Promise<ExportSql>;
  /** The serving models' cubes (the models must be ready). */
  cubes(): Promise<ReadonlySet<string>>;
  modelsReady(): Promise<unknown>;
  /** Rebuilds the rollups of these contexts ('' = the operator's) whose refresh keys turned. */
  refreshRollups(accounts: readonly string[]): Promise<void>;
  /** Every account with downloads. */
  accountIds(): Promise<string[]>;
  /** Forgets every cached answer (ours and Cube's). */
  forgetAnswers(): void;
  logger: Logger;
}

export interface Freshness {
  /** The funnel's hourly tables exist (the model's checks and rollup builds read them). */
  ensureHours(): Promise<void>;
  /** Settles once the start's catch-up is done (or gave up). */
  caughtUp: Promise<void>;
  /** An import brought rows of these accounts (changing their downloads from `since` on, when given). */
  dataChanged(changes: readonly DataChange[]): Promise<void>;
  /**
   * While `work` (an import) runs, the funnel's hours do not look for new rows: its dataChanged remakes them once.
   * They look once before it: that remake covers the import's span only, not rows added by other means before.
   */
  importing<T>(work: () => Promise<T>): Promise<T>;
  stop(): void;
}

/**
 * Answers that follow the data: the funnel's hourly tables, the start's
 * catch-up, and what an import tells the service.
 *
 * The catch-up: Cube 0.33 answers from a rollup's newest table while it
 * builds the next one, so data changed while the service was down (a
 * warehouse command between two starts) would be answered from before it,
 * with no error, until that build. Once the funnel's hours are brought up to
 * the data (their first look), every context's rollups whose refresh keys
 * turned are rebuilt; loads and exports wait for it, within their own
 * timeout. Models that fail to compile, or a warehouse that does not answer,
 * end the wait: Cube then builds as refresh keys turn.
 */
export function createFreshness(options: FreshnessOptions): Freshness {
  const { client, database, sourceDatabase, modelsReady, refreshRollups, accountIds, forgetAnswers, logger } = options;
  const funnelHourly = createFunnelHourly({
    client,
    database,
    sourceDatabase,
    logger,
    sqlOf: async (query, limit, accountId) => {
      await modelsReady();
      return options.sqlOf(query, limit, accountId);
    },
    cubes: async () => {
      await modelsReady();
      return options.cubes();
    },
  });
  // An import derives its downloads in many statements; each look meanwhile saw rows changed and remade the importing
  // account's hours from part of them: at 100M, statements of 1.4-2.4 s on chDB's one lane that every query waited behind,
  // all made again by the import's dataChanged. Looks resume after it (rows added by other means meanwhile included).
  let imports = 0;
  const follower = funnelHourly.follow(options.funnelLookMs ?? FUNNEL_LOOK_MS, () => imports > 0);
  let stopped = false;
  // A rebuild checks each rollup's refresh key, and Cube takes a key's value read in the last 10 s (its `every`) as
  // it is, even when asked to renew it: a value a query or Cube's refresh worker read while the hours were being
  // remade would say nothing changed, no table would be built, and answers would come from the table before the
  // data until the next check. So the values are forgotten once the hours are remade, before the rebuild reads them.
  const forgetRefreshKeys = forgetAnswers;
  const caughtUp = follower.firstLook.then(async () => {
    try {
      await modelsReady();
    } catch {
      return;
    }
    try {
      forgetRefreshKeys();
      // Models that only become valid later (a reload) can make this wait past close: a stopped service builds nothing.
      for (const account of ['', ...(await accountIds())]) {
        if (stopped) return;
        await refreshRollups([account]);
      }
      forgetAnswers();
    } catch (err) {
      logger.error('bringing the rollups up to the data at start failed; Cube rebuilds them as their refresh keys turn', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  });

  return {
    ensureHours: () => funnelHourly.ensure(),
    caughtUp,
    dataChanged: async (changes) => {
      // Raw-table answers follow at once; a rollup query meanwhile gets the rollup from before (whole, never mixed
      // with new rows) until its rebuild, after which answers computed meanwhile are forgotten too.
      forgetAnswers();
      await modelsReady();
      await funnelHourly.remake(changes);
      forgetRefreshKeys();
      await refreshRollups(['', ...new Set(changes.map((c) => c.account).filter((a) => a !== ''))]);
      forgetAnswers();
    },
    importing: async (work) => {
      imports += 1;
      try {
        await follower.lookNow();
        return await work();
      } finally {
        imports -= 1;
      }
    },
    stop: () => {
      stopped = true;
      follower.stop();
    },
  };
}
