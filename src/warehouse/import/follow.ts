import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../log';
import { quoteIdentifier } from '../sql';

/** Imports older than this at the first look are taken as known; later looks read only this far back. */
const LOOK_BACK_SECONDS = 2 * 86_400;

/**
 * Imports and erasures another process made (the warehouse command against
 * a ClickHouse server, which the service does not run): every `everyMs` the
 * service reads the imports table, one small query, and hands the accounts
 * of the imports done since its last look to `changed`, which makes its
 * answers follow them (CubeService.dataChanged); and the erasures table,
 * whose new records go to `erased` (their records name no account, so it
 * follows every account). Imports made before the first look, and erasures
 * before the service started, are known already: caches start empty, and
 * a start revokes the keys of accounts erased before it. A table not there yet is no error.
 * Looks never overlap: the next is timed from the end of the last, rebuilds
 * included.
 */
export function followImports(
  client: ClickHouseClient,
  database: string,
  everyMs: number,
  changed: (changes: { account: string }[]) => Promise<void>,
  logger: Logger,
  erased: () => Promise<void> = async () => {},
): { stop(): void } {
  let known: Set<string> | undefined;
  let knownErasures: Set<string> | undefined;
  // An erasure from this second on is followed even if the first look comes after it (following one twice costs a refresh).
  const startedAt = Math.floor(Date.now() / 1000);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const tables = async () => {
    const result = await client.query({
      query: "SELECT name FROM system.tables WHERE database = {database:String} AND name IN ('imports', 'erasures')",
      query_params: { database },
      format: 'JSONEachRow',
    });
    return new Set((await result.json<{ name: string }>()).map((t) => t.name));
  };

  const lookForErasures = async (present: Set<string>) => {
    const made = !present.has('erasures')
      ? []
      : await (
          await client.query({
            // An erasure's time is its command's clock (forget.ts), as startedAt is this process's.
            query: `SELECT id, toInt64(at) AS at FROM ${quoteIdentifier(database)}.erasures WHERE at >= ${Math.floor(Date.now() / 1000) - LOOK_BACK_SECONDS}`,
            format: 'JSONEachRow',
          })
        ).json<{ id: string; at: string }>();
    knownErasures ??= new Set(made.filter((e) => Number(e.at) < startedAt).map((e) => e.id));
    const fresh = made.filter((e) => !knownErasures?.has(e.id));
    if (fresh.length === 0) return;
    await erased();
    for (const e of fresh) knownErasures.add(e.id);
    logger.info('answers follow the erasures made elsewhere', { erasures: fresh.length });
  };

  const look = async () => {
    const present = await tables();
    await lookForErasures(present);
    const done = !present.has('imports')
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
