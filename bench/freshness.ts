import { rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ClickHouseClient } from '@clickhouse/client';
import { handOff } from '../src/warehouse/import/inbox';
import { StatementQueue, statementTicket } from '../src/warehouse/statement-queue';
import { quoteIdentifier } from '../src/warehouse/sql';
import { send } from './http-load';
import { log, mb } from './report';
import { API_KEY, DATABASE, startBenchService } from './service';

/**
 * Freshness benchmark (issue 18 §2): `npm run bench:freshness -- --data-dir DIR [--source operator|ACCOUNT]
 * [--day YYYY-MM-DD] [--into ACCOUNT]`. DIR holds a finished demo build (`npm run warehouse -- demo`), which this
 * leaves as it found it (the imported rows are removed at the end, and the tables' row counts and hashes before and
 * after are compared). On the service in this process, started on DIR with its import inbox as `npm start` has it:
 * 1. one day of podcast_events (every account's, or one account's) is written as NDJSON request records and
 *    handed to the running service as a NEW account's file (`npm run warehouse -- import`'s way: the inbox);
 *    a day is about 1 % of the table. With `--into ACCOUNT` the file is that existing account's, its times
 *    moved to the day after the data's last, as after a network's hourly import into its own account, while the
 *    derivation replaces no download that was there (an import's span is derived again whole), so removing the
 *    import's requests and the downloads of that day restores the tables exactly;
 * 2. from the hand-off until both APIs' answers include the day, an uncached dashboard query (operator's
 *    Downloads.count by country over the last 30 days, a new filter value per request) is sent back to back;
 * 3. reported: the rows every statement between the hand-off and the summary read (system.events SelectedRows,
 *    chDB keeping no query_log; the probes' own reads, measured alone first, taken out) against the rows of podcast_events + downloads + web_events, the
 *    statements that read most, the seconds until the answers include the day (Downloads.count and the funnel,
 *    for the new account and for the operator, through /v1/data/load and /cubejs-api/v1/load, compared with
 *    direct SQL), and the probe's p50/p99/max.
 * Before the import each answer compared is asked once, so the caches hold it.
 */

const NEW_ACCOUNT = 'bench-freshness-import';
const PROBE_MARK = 'bench-freshness-probe-';
/** Probes at least this slow are listed one by one. */
const SLOW_PROBE_MS = 500;
const STEP = 'WebEventsFromPodcastFunnel.step';
const CONVERSIONS = 'WebEventsFromPodcastFunnel.conversions';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      source: { type: 'string', default: 'operator' },
      day: { type: 'string' },
      into: { type: 'string' },
      'timeout-seconds': { type: 'string', default: '600' },
    },
  });
  if (!values['data-dir']) throw new Error('--data-dir DIR is required (a finished demo build)');
  const dataDir = path.resolve(values['data-dir']);
  const timeoutMs = Number(values['timeout-seconds']) * 1000;
  const target = values.into ?? NEW_ACCOUNT;
  const started = performance.now();
  const since = () => `${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s`;
  const step = (message: string) => log(`${since()}  ${message}`);

  const service = await startBenchService(
    dataDir,
    {
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_CONCURRENT: '1000',
      QUERY_TIMEOUT_SECONDS: '600',
      CUBE_ROLLUP_REFRESH_SECONDS: '0',
      // Compiled to build/, the service looks for the user-agent lists beside build/ rather than the repository.
      USER_AGENTS_DIR: process.env.USER_AGENTS_DIR,
      IMPORT_STATEMENT_ROWS: process.env.IMPORT_STATEMENT_ROWS,
    },
    [target],
    { importInbox: true },
  );
  // The refresh after the import is what is measured, not the start's catch-up.
  await service.cube.caughtUp();
  step('caught up with the data');
  const server = service.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = service.warehouse.client();
  const db = quoteIdentifier(DATABASE);
  const scratch = path.join(os.tmpdir(), `bench-freshness-${process.pid}`);
  const file = `${scratch}.ndjson`;
  const agent = new http.Agent({ keepAlive: true });
  let imported: Imported | undefined;
  let fingerprint: Record<string, string> | undefined;
  // Set when the run did not leave the tables as it found them.
  let changed: string | undefined;
  try {
    const rows = async <T>(query: string): Promise<T[]> => (await client.query({ query, format: 'JSONEachRow' })).json<T>();
    const day = values.day ?? (await rows<{ d: string }>(`SELECT toString(max(toDate(ts)) - 1) AS d FROM ${db}.downloads`))[0].d;
    const sourceWhere = `toDate(ts) = '${day}'${values.source === 'operator' ? '' : ` AND account_id = '${values.source}'`}`;
    // Into an existing account: the day after the data's last, so that the derivation of the import's span replaces none of its downloads.
    // The build's own last day: its requests carry no import id (a run that did not finish left imported ones after it).
    const [{ last }] = await rows<{ last: string }>(
      `SELECT toString(greatest((SELECT max(toDate(ts)) FROM ${db}.podcast_events WHERE import_id = ''), (SELECT max(toDate(track_ts)) FROM ${db}.web_events))) AS last`,
    );
    const importDay = values.into === undefined ? day : new Date(Date.parse(`${last}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const shiftDays = Math.round((Date.parse(importDay) - Date.parse(day)) / 86_400_000);
    imported = { account: target, from: importDay, existing: values.into !== undefined };
    if (imported.existing) {
      const [{ n }] = await rows<{ n: string }>(`SELECT count() AS n FROM ${db}.downloads WHERE account_id = '${target}'`);
      if (Number(n) === 0) throw new Error(`--into ${target}: the account has no downloads (leave --into out to import as a new account)`);
    }
    const leftover = Number(
      (await rows<{ n: string }>(`SELECT count() AS n FROM ${db}.podcast_events WHERE account_id = '${target}' AND ts >= '${importDay}'`))[0].n,
    );
    if (leftover > 0) {
      if (imported.existing && importDay === day) throw new Error(`${target} has requests on ${day} already`);
      step(`${target} has ${leftover} rows from ${importDay} on, from a run that did not finish: removing them first`);
      await removeImported(client, imported);
      await service.cube.dataChanged([{ account: target }]);
    }
    // What the run must leave as it found: the tables' rows and a hash of them, compared at the end.
    fingerprint = await tablesFingerprint(client);
    step(`tables before: ${JSON.stringify(fingerprint)}`);
    const sizes = Object.fromEntries(
      (
        await rows<{ t: string; n: string }>(
          `SELECT name AS t, total_rows AS n FROM system.tables WHERE database = '${DATABASE}' AND name IN ('podcast_events', 'downloads', 'web_events')`,
        )
      ).map((r) => [r.t, Number(r.n)]),
    );
    const tableRows = sizes.podcast_events + sizes.downloads + sizes.web_events;
    step(
      `${dataDir}: podcast_events ${sizes.podcast_events.toLocaleString('en')}, downloads ${sizes.downloads.toLocaleString('en')}, web_events ${sizes.web_events.toLocaleString('en')} rows`,
    );

    await client.command({
      query: `INSERT INTO FUNCTION file('${file}', 'JSONEachRow')
        SELECT concat(replaceOne(toString(ts + INTERVAL ${shiftDays} DAY), ' ', 'T'), 'Z') AS time, if(ip = toIPv6(ip4), toString(ip4), toString(ip)) AS ip, toString(method) AS method, status, url,
          raw_ua AS userAgent, referer, byte_range AS range
        FROM ${db}.podcast_events WHERE ${sourceWhere}`,
      clickhouse_settings: { engine_file_truncate_on_insert: 1 },
    });
    const exported = Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${db}.podcast_events WHERE ${sourceWhere}`))[0].n);
    step(
      `exported ${values.source}'s ${day}${shiftDays === 0 ? '' : ` as ${importDay}`}: ${exported.toLocaleString('en')} requests (${((100 * exported) / sizes.podcast_events).toFixed(2)} % of podcast_events), ${mb(statSync(file).size)} MB of NDJSON`,
    );

    // The answers compared: Downloads.count on the day and the funnel's steps on the day, the account and operator.
    const keys = { [target]: service.accountKeys[target], operator: API_KEY };
    const countQuery = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [importDay, importDay] }] };
    const funnelQuery = {
      measures: [CONVERSIONS],
      dimensions: [STEP],
      timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: [importDay, importDay] }],
    };
    const load = async (route: string, key: string, query: unknown) => {
      const reply = await send(base, agent, { method: 'POST', path: route, key, body: { query } });
      if (reply.status !== 200) throw new Error(`${route}: HTTP ${reply.status} ${reply.body.slice(0, 300)}`);
      return (JSON.parse(reply.body) as { data: Record<string, string>[] }).data;
    };
    const answers = async () => {
      const out: Record<string, string> = {};
      for (const [who, key] of Object.entries(keys)) {
        for (const route of ['/v1/data/load/', '/cubejs-api/v1/load']) {
          out[`${who} ${route} count`] = String(Number((await load(route, key, countQuery))[0]?.['Downloads.count'] ?? 0));
          const steps = (await load(route, key, funnelQuery)).map((r) => `${r[STEP]}=${Number(r[CONVERSIONS])}`).sort();
          out[`${who} ${route} funnel`] = steps.filter((s) => !s.endsWith('=0')).join(',');
        }
      }
      return out;
    };
    // Fills the caches with these answers, and gives the operator's before.
    const before = await answers();
    step(`answers before: ${JSON.stringify(before)}`);

    const probeQuery = (n: number) => ({
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country'],
      timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 30 days' }],
      filters: [{ member: 'Downloads.country', operator: 'notEquals', values: [`${PROBE_MARK}${n}`] }],
      renewQuery: true,
    });
    let sentProbes = 0;
    const probeOnce = async () => {
      const at = performance.now();
      const reply = await send(base, agent, { method: 'POST', path: '/v1/data/load/', key: API_KEY, body: { query: probeQuery(sentProbes++) } });
      return { at, ms: reply.ms, ok: reply.status === 200, timing: String(reply.headers?.['server-timing'] ?? '') };
    };
    // The probe's own reads, alone, so that they can be taken out of the refresh's.
    const alone = await selectedRows(client);
    for (let i = 0; i < 5; i++) await probeOnce();
    const probeRows = Math.round(((await selectedRows(client)) - alone) / 5);
    step(`an uncached probe alone reads ${probeRows.toLocaleString('en')} rows`);

    const probes: number[] = [];
    // The slowest probes, with when each was sent and the service's Server-Timing: what they waited for.
    const slow: { at: number; ms: number; timing: string }[] = [];
    let probing = true;
    let probeErrors = 0;
    // This process's event loop (the service's, the inbox's hashing and the probes' client) while the import runs.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    // Every statement the queue runs from here on, by lane: what a slow probe waited behind.
    const ran: { lane: string; start: number; end: number }[] = [];
    const queueRun = StatementQueue.prototype.run;
    StatementQueue.prototype.run = function <T>(this: StatementQueue, statement: () => Promise<T>): Promise<T> {
      const lane = statementTicket.getStore()?.lane ?? 'service';
      return queueRun.call(this, () => {
        const start = performance.now();
        return statement().finally(() => ran.push({ lane, start, end: performance.now() })) as Promise<T>;
      }) as Promise<T>;
    };
    const probe = (async () => {
      while (probing) {
        const { at, ms, ok, timing } = await probeOnce();
        probes.push(ms);
        if (ms >= SLOW_PROBE_MS) slow.push({ at, ms, timing });
        if (!ok) probeErrors++;
      }
    })();

    // Where the import ends and the refresh begins: the inbox calls the service's dataChanged between the two
    // (src/assembly.ts looks the method up at each call), so wrapping it marks the boundary.
    const refresh: { rows: number[]; probes: number[]; ms: number[] } = { rows: [], probes: [], ms: [] };
    const dataChanged = service.cube.dataChanged;
    (service.cube as { dataChanged: typeof dataChanged }).dataChanged = async (accounts) => {
      refresh.rows.push(await selectedRows(client));
      refresh.probes.push(probes.length);
      refresh.ms.push(performance.now());
      await dataChanged(accounts);
      refresh.rows.push(await selectedRows(client));
      refresh.probes.push(probes.length);
      refresh.ms.push(performance.now());
    };
    const from = await selectedRows(client);
    const handedOff = performance.now();
    step(`hand-off of ${path.basename(file)} as account ${target}`);
    const summary = await handOff(dataDir, file, { format: 'ndjson', account: target, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() }, () => {});
    const summarySeconds = (performance.now() - handedOff) / 1000;
    const to = await selectedRows(client);
    const probesBySummary = probes.length;
    step(`summary after ${summarySeconds.toFixed(1)} s: ${JSON.stringify(summary)}`);

    // What the answers must be: the account's downloads on the day (direct SQL) and its funnel's first step
    // (listeners that downloaded on the day: an IPv4 address or an IPv6 /64), added to the operator's. No later step:
    // the new account has no website events, and an existing account's all lie before the day (checked), so none
    // follows these downloads.
    const added = (
      await rows<{ n: string; u: string }>(
        `SELECT toString(count()) AS n, toString(uniqExact(if(ip4 = toIPv4(0), cutIPv6(ip, 8, 0), toString(ip4)))) AS u FROM ${db}.downloads WHERE account_id = '${target}' AND toDate(ts) = '${importDay}'`,
      )
    )[0];
    const [{ later }] = await rows<{ later: string }>(
      `SELECT count() AS later FROM ${db}.web_events WHERE account_id = '${target}' AND track_ts >= '${importDay}'`,
    );
    if (Number(later) > 0) throw new Error(`${target} has ${later} website events from ${importDay} on: the funnel's answer would not be the downloads' alone`);
    const withDownloads = (steps: string, addresses: number) => {
      const counts = new Map(steps === '' ? [] : steps.split(',').map((s) => [s.split('=')[0], Number(s.split('=')[1])] as const));
      counts.set('Podcast Download', (counts.get('Podcast Download') ?? 0) + addresses);
      return [...counts]
        .map(([name, n]) => `${name}=${n}`)
        .filter((s) => !s.endsWith('=0'))
        .sort()
        .join(',');
    };
    const want: Record<string, string> = {};
    for (const route of ['/v1/data/load/', '/cubejs-api/v1/load']) {
      for (const who of [target, 'operator']) {
        want[`${who} ${route} count`] = String(Number(before[`${who} ${route} count`]) + Number(added.n));
        want[`${who} ${route} funnel`] = withDownloads(before[`${who} ${route} funnel`], Number(added.u));
      }
    }
    const differing = (got: Record<string, string>) => Object.keys(want).filter((k) => got[k] !== want[k]);
    let current = await answers();
    while (differing(current).length > 0 && performance.now() - handedOff < timeoutMs) {
      step(
        `not yet: ${differing(current)
          .map((k) => `${k}: ${current[k]} (want ${want[k]})`)
          .join('; ')}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      current = await answers();
    }
    const followSeconds = (performance.now() - handedOff) / 1000;
    probing = false;
    await probe;
    loopDelay.disable();
    StatementQueue.prototype.run = queueRun;
    if (differing(current).length > 0)
      throw new Error(`answers did not include the day within the timeout: ${JSON.stringify(current)} instead of ${JSON.stringify(want)}`);
    step(`answers include the day ${followSeconds.toFixed(1)} s after the hand-off`);

    if (refresh.rows.length !== 2) throw new Error('the import did not call dataChanged once');
    const importRows = refresh.rows[0] - from - refresh.probes[0] * probeRows;
    const refreshRows = refresh.rows[1] - refresh.rows[0] - (refresh.probes[1] - refresh.probes[0]) * probeRows;
    const read = to - from - probesBySummary * probeRows;
    const share = (n: number) => `${((100 * n) / tableRows).toFixed(2)} %`;
    const sorted = [...probes].sort((a, b) => a - b);
    const ms = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(0));

    log('');
    log(
      `${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, Node ${process.version}`,
    );
    log(
      `Rows read (system.events SelectedRows, each probe's ${probeRows.toLocaleString('en')} taken out) against podcast_events + downloads + web_events (${tableRows.toLocaleString('en')} rows):`,
    );
    log(
      '| Imported | Import rows (file, validation, derivation) | Refresh rows (dataChanged: rollups, caches) | Hand-off → summary rows | Import s | Refresh s | Summary s | Answers include the day s | Import statements (longest s) | Probe p50 ms | Probe p99 ms | Probe max ms | Probes (errors) |',
    );
    log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    log(
      `| ${values.source} ${day}: ${summary.imported.toLocaleString('en')} requests, ${Number(summary.downloads).toLocaleString('en')} downloads | ${importRows.toLocaleString('en')} (${share(importRows)}) | ${refreshRows.toLocaleString('en')} (${share(refreshRows)}) | ${read.toLocaleString('en')} (${share(read)}) | ${((refresh.ms[0] - handedOff) / 1000).toFixed(1)} | ${((refresh.ms[1] - refresh.ms[0]) / 1000).toFixed(1)} | ${summarySeconds.toFixed(1)} | ${followSeconds.toFixed(1)} | ${summary.statements} (${summary.longestStatementSeconds.toFixed(2)}) | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${ms(sorted.at(-1))} | ${sorted.length} (${probeErrors}) |`,
    );
    const phase = (at: number) => (at < refresh.ms[0] ? 'import' : at < refresh.ms[1] ? 'refresh' : 'after');
    log('');
    log(
      `Event loop of this process (service, inbox, probes' client) from hand-off to the end: p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
    );
    log(`Probes of ${SLOW_PROBE_MS} ms or more (${slow.length}): sent at (s after the hand-off), phase, ms, Server-Timing`);
    for (const p of slow) {
      const behind = ran.filter((r) => r.end > p.at && r.start < p.at + p.ms && r.end - r.start >= 100).map((r) => `${r.lane} ${(r.end - r.start).toFixed(0)}`);
      log(
        `  ${((p.at - handedOff) / 1000).toFixed(1).padStart(7)}  ${phase(p.at).padEnd(7)}  ${p.ms.toFixed(0).padStart(6)}  ${p.timing}; statements of 100 ms or more meanwhile (lane ms): ${behind.join(', ')}`,
      );
    }
  } finally {
    // Leave the directory as it was: the import's rows and its record go, and the service follows.
    try {
      if (imported) {
        await removeImported(client, imported);
        await service.cube.dataChanged([{ account: target }]);
        step(`removed the imported rows of ${target}`);
        if (fingerprint) {
          const after = await tablesFingerprint(client);
          const same = JSON.stringify(after) === JSON.stringify(fingerprint);
          step(`tables after (rows/hash): ${JSON.stringify(after)}: ${same ? 'the same as before' : 'NOT the same as before'}`);
          if (!same) changed = `the run left the tables changed: ${JSON.stringify(fingerprint)} before, ${JSON.stringify(after)} after`;
        }
      }
    } finally {
      rmSync(file, { force: true });
      agent.destroy();
      server.close();
      await service.close();
    }
  }
  if (changed) throw new Error(changed);
  return 0;
}

/**
 * Rows the engine has read from tables since it started (system.events
 * SelectedRows, every statement of this process): chDB keeps no query_log,
 * so the rows a window of statements read are the difference.
 */
async function selectedRows(client: ClickHouseClient): Promise<number> {
  const rows = await (
    await client.query({ query: "SELECT toString(sum(value)) AS value FROM system.events WHERE event = 'SelectedRows'", format: 'JSONEachRow' })
  ).json<{ value: string }>();
  return Number(rows[0]?.value ?? 0);
}

/** Whose rows the run imports, from which day on, and whether the account was there before. */
interface Imported {
  account: string;
  from: string;
  existing: boolean;
}

/**
 * The new account's rows go whole; an existing account's from the import's day on, which lies after the data's
 * last day: its requests carry the import's id, and its downloads there are the import's (the derivation of the
 * import's span, that day, found none).
 */
async function removeImported(client: ClickHouseClient, { account, from, existing }: Imported): Promise<void> {
  const db = quoteIdentifier(DATABASE);
  const ofImport = existing ? ` AND ts >= '${from}'` : '';
  const mutation = (query: string) => client.command({ query, clickhouse_settings: { mutations_sync: '2' } });
  // downloads has an aggregate projection, which a lightweight DELETE refuses: a mutation rewrites the parts that hold the account.
  await mutation(`ALTER TABLE ${db}.downloads DELETE WHERE account_id = '${account}'${ofImport}`);
  await mutation(`ALTER TABLE ${db}.podcast_events DELETE WHERE account_id = '${account}'${ofImport}${existing ? " AND import_id != ''" : ''}`);
  await mutation(`ALTER TABLE ${db}.imports DELETE WHERE has(accounts, '${account}')${existing ? ` AND from_ts >= '${from}'` : ''}`);
}

/** Rows and a hash of every row (order aside) of the tables an import and its refresh write. */
async function tablesFingerprint(client: ClickHouseClient): Promise<Record<string, string>> {
  const tables = ['podcast_events', 'downloads', 'web_events', 'imports'].map((t) => `${quoteIdentifier(DATABASE)}.${t}`);
  const out: Record<string, string> = {};
  for (const table of tables) {
    const result = await client.query({ query: `SELECT toString(count()) AS n, toString(sum(cityHash64(*))) AS h FROM ${table}`, format: 'JSONEachRow' });
    const [{ n, h }] = await result.json<{ n: string; h: string }>();
    out[table] = `${n}/${h}`;
  }
  return out;
}

/** The p-th percentile of sorted values (nearest rank). */
function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
