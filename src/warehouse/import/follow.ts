import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../log';
import { quoteIdentifier } from '../sql';

/** Imports older than this at the first look are taken as known; later looks read only this far back. */
const LOOK_BACK_SECONDS = 2 * 86_400;

/**
 * Imports another process made (the import command against a ClickHouse
 * server, which the service does not run): every `everyMs` the service
 * reads the imports table, one small query, and hands the accounts of the
 * imports done since its last look to `changed`, which makes its answers
 * follow them (CubeService.dataChanged). Imports done before the first look
 * are known already: caches start empty. A table not there yet (no import
 * so far) is no error. Looks never overlap: the next is timed from the end
 * of the last, rebuilds included.
 */
export function followImports(
  client: ClickHouseClient,
  database: string,
  everyMs: number,
  changed: (changes: { account: string }[]) => Promise<void>,
  logger: Logger,
): { stop(): void } {
  let known: Set<string> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const look = async () => {
    const exists = await client.query({
      query: "SELECT count() AS n FROM system.tables WHERE database = {database:String} AND name = 'imports'",
      query_params: { database },
      format: 'JSONEachRow',
    });
    const done =
      Number((await exists.json<{ n: string | number }>())[0].n) === 0
        ? []
        : await (
            await client.query({
              query: `SELECT id, any(accounts) AS accounts FROM ${quoteIdentifier(database)}.imports
        WHERE state = 'done' AND at >= now() - ${LOOK_BACK_SECONDS} GROUP BY id`,
              format: 'JSONEachRow',
            })
          ).json<{ id: string; accounts: string[] }>();
    if (known === undefined) {
      known = new Set(done.map((d) => d.id));
      return;
    }
    const fresh = done.filter((d) => !known?.has(d.id));
    if (fresh.length === 0) return;
    const accounts = [...new Set(fresh.flatMap((d) => d.accounts))].sort();
    const started = performance.now();
    await changed(accounts.map((account) => ({ account })));
    for (const d of fresh) known.add(d.id);
    logger.info('answers follow the imports made elsewhere', { imports: fresh.length, accounts, seconds: Math.round(performance.now() - started) / 1000 });
  };

  const loop = () => {
    if (stopped) return;
    look()
      .catch((err: unknown) =>
        logger.error('looking for imports failed; answers follow them once their caches expire', { error: err instanceof Error ? err.message : String(err) }),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, everyMs).unref();
      });
  };
  loop();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
