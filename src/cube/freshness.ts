import type { Logger } from '../log';

export interface FreshnessOptions {
  modelsReady(): Promise<unknown>;
  /** Rebuilds the rollups of these contexts ('' = the operator's) whose refresh keys turned. */
  refreshRollups(accounts: readonly string[]): Promise<void>;
  /** Every account with downloads. */
  accountIds(): Promise<string[]>;
  /** Forgets every cached answer (ours and Cube's, refresh keys too). */
  forgetAnswers(): void;
  logger: Logger;
}

/** Rows of an account were added or removed (an import, or its rollback). */
export interface DataChange {
  account: string;
}

export interface Freshness {
  /** Settles once the start's catch-up is done (or gave up). */
  caughtUp: Promise<void>;
  /** An import brought rows of these accounts. */
  dataChanged(changes: readonly DataChange[]): Promise<void>;
  stop(): void;
}

/**
 * Answers that follow the data: the start's catch-up, and what an import
 * tells the service.
 *
 * The catch-up: Cube 0.33 answers from a rollup's newest table while it
 * builds the next one, so data changed while the service was down (a
 * warehouse command between two starts) would be answered from before it,
 * with no error, until that build. So once the models are ready, every
 * context's rollups whose refresh keys turned are rebuilt; loads and exports
 * wait for it, within their own timeout. Models that fail to compile, or a
 * warehouse that does not answer, end the wait: Cube then builds as refresh
 * keys turn.
 */
export function createFreshness(options: FreshnessOptions): Freshness {
  const { modelsReady, refreshRollups, accountIds, forgetAnswers, logger } = options;
  let stopped = false;
  // A rebuild checks each rollup's refresh key, and Cube takes a key's value read in the last 10 s (its `every`) as
  // it is, even when asked to renew it: a value read before the data changed would say nothing changed, no table
  // would be built, and answers would come from the table before the data until the next check. So the values are
  // forgotten before the rebuild reads them.
  const forgetRefreshKeys = forgetAnswers;
  const caughtUp = (async () => {
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
      // Cube rejects with `{ error }` objects, not Errors.
      logger.error('bringing the rollups up to the data at start failed; Cube rebuilds them as their refresh keys turn', {
        error: err instanceof Error ? err.message : String((err as { error?: unknown } | undefined)?.error ?? err),
      });
    }
  })();

  return {
    caughtUp,
    dataChanged: async (changes) => {
      // Raw-table answers follow at once; a rollup query meanwhile gets the rollup from before (whole, never mixed
      // with new rows) until its rebuild, after which answers computed meanwhile are forgotten too.
      forgetAnswers();
      await modelsReady();
      forgetRefreshKeys();
      await refreshRollups(['', ...new Set(changes.map((c) => c.account).filter((a) => a !== ''))]);
      forgetAnswers();
    },
    stop: () => {
      stopped = true;
    },
  };
}
