import { LocalQueueDriverConnection } from '@cubejs-backend/query-orchestrator/dist/src/orchestrator/LocalQueueDriver';

/** What of Cube's in-memory queue connection the wait reads (test/unit/cube/cube-internals.test.ts lists them). */
interface Connection {
  continueWaitTimeout: number;
  queryDef: Record<string, unknown>;
  resultPromises: Record<string, unknown>;
  resultListKey(queryKeyHash: string): string;
  getResultPromise(resultListKey: string): Promise<unknown>;
}

/**
 * Cube 0.33's in-memory queue waits for a query's result against a timer of
 * its continue-wait timeout and leaves the timer running when the result
 * comes first: every query left a referenced 5 s timer behind it, so a
 * process whose service had closed stayed alive until the last one fired
 * (jest's "a worker process has failed to exit gracefully"). The same wait,
 * with its timer cleared as soon as the result is there. Cube's own module,
 * patched once for the process; every service in it waits the same way.
 */
export function clearContinueWaitTimers(): void {
  const proto = LocalQueueDriverConnection.prototype as unknown as { getResultBlocking(this: Connection, queryKeyHash: string): Promise<unknown> };
  proto.getResultBlocking = async function getResultBlocking(this: Connection, queryKeyHash: string) {
    const resultListKey = this.resultListKey(queryKeyHash);
    if (!this.queryDef[queryKeyHash] && !this.resultPromises[resultListKey]) return null;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.continueWaitTimeout * 1000);
    });
    try {
      const res = await Promise.race([this.getResultPromise(resultListKey), timedOut]);
      if (res) delete this.resultPromises[resultListKey];
      return res;
    } finally {
      clearTimeout(timer);
    }
  };
}
