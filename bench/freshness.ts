import { rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { handOff } from '../src/warehouse/import/inbox';
import { quoteIdentifier } from '../src/warehouse/ddl';
import { send } from './http-load';
import { log, mb } from './report';
import { API_KEY, DATABASE, startBenchService } from './service';

/**
 * Freshness benchmark (issue 18 §2): `npm run bench:freshness -- --data-dir DIR [--source operator|ACCOUNT]
 * [--day YYYY-MM-DD]`. DIR holds a finished demo build (`npm run warehouse -- demo`), which this leaves as it found
 * it (the imported rows are removed at the end). On the service in this process, started on DIR with its import
 * inbox as `npm start` has it:
 * 1. one day of podcast_events (every account's, or one account's) is written as NDJSON request records and
 *    handed to the running service as a NEW account's file (`npm run warehouse -- import`'s way: the inbox);
 *    a day is about 1 % of the table;
 * 2. from the hand-off until both APIs' answers include the day, an uncached dashboard query (operator's
 *    Downloads.count by country over the last 30 days, a new filter value per request) is sent back to back;
 * 3. reported: the rows every statement between the hand-off and the summary read (system.query_log, the
 *    probe's own statements left out) against the rows of podcast_events + downloads + web_events, the
 *    statements that read most, the seconds until the answers include the day (Downloads.count and the funnel,
 *    for the new account and for the operator, through /v1/data/load and /cubejs-api/v1/load, compared with
 *    direct SQL), and the probe's p50/p99/max.
 * Before the import every funnel rollup the test reads is built (a query each), so the refresh is measured,
 * not a first build.
 */

const NEW_ACCOUNT = 'bench-freshness-import';
const PROBE_MARK = 'bench-freshness-probe-';
const STEP = 'WebEventsFromPodcastFunnel.step';
const CONVERSIONS = 'WebEventsFromPodcastFunnel.conversions';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { 'data-dir': { type: 'string' }, source: { type: 'string', default: 'operator' }, day: { type: 'string' }, 'timeout-seconds': { type: 'string', default: '1800' } },
  });
  if (!values['data-dir']) throw new Error('--data-dir DIR is required (a finished demo build)');
  const dataDir = path.resolve(values['data-dir']);
  const timeoutMs = Number(values['timeout-seconds']) * 1000;
  const started = performance.now();
  const since = () => `${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s`;
  const step = (message: string) => log(`${since()}  ${message}`);

  const service = await startBenchService(
    dataDir,
    { RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_CONCURRENT: '1000', QUERY_TIMEOUT_SECONDS: '600', CUBE_ROLLUP_REFRESH_SECONDS: '0' },
    [NEW_ACCOUNT],
    { importInbox: true },
  );
  const server = service.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = service.warehouse.client();
  const db = quoteIdentifier(DATABASE);
  const scratch = path.join(os.tmpdir(), `bench-freshness-${process.pid}`);
  const file = `${scratch}.ndjson`;
  const agent = new http.Agent({ keepAlive: true });
  try {
    const rows = async <T>(query: string): Promise<T[]> => (await client.query({ query, format: 'JSONEachRow' })).json<T>();
    const day = values.day ?? (await rows<{ d: string }>(`SELECT toString(max(toDate(ts)) - 1) AS d FROM ${db}.downloads`))[0].d;
    const sourceWhere = `toDate(ts) = '${day}'${values.source === 'operator' ? '' : ` AND account_id = '${values.source}'`}`;
    const leftover = Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${db}.podcast_events WHERE account_id = '${NEW_ACCOUNT}'`))[0].n);
    if (leftover > 0) throw new Error(`${NEW_ACCOUNT} already has ${leftover} rows in ${dataDir}: an earlier run did not finish; remove them first`);
    const sizes = Object.fromEntries(
      (await rows<{ t: string; n: string }>(`SELECT name AS t, total_rows AS n FROM system.tables WHERE database = '${DATABASE}' AND name IN ('podcast_events', 'downloads', 'web_events')`))
        .map((r) => [r.t, Number(r.n)]),
    );
    const tableRows = sizes.podcast_events + sizes.downloads + sizes.web_events;
    step(`${dataDir}: podcast_events ${sizes.podcast_events.toLocaleString('en')}, downloads ${sizes.downloads.toLocaleString('en')}, web_events ${sizes.web_events.toLocaleString('en')} rows`);

    await client.command({
      query: `INSERT INTO FUNCTION file('${file}', 'JSONEachRow')
        SELECT concat(replaceOne(toString(ts), ' ', 'T'), 'Z') AS time, if(ip = toIPv6(ip4), toString(ip4), toString(ip)) AS ip, toString(method) AS method, status, url,
          raw_ua AS userAgent, referer, byte_range AS range
        FROM ${db}.podcast_events WHERE ${sourceWhere}`,
      clickhouse_settings: { engine_file_truncate_on_insert: 1 },
    });
    const exported = Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${db}.podcast_events WHERE ${sourceWhere}`))[0].n);
    step(`exported ${values.source}'s ${day}: ${exported.toLocaleString('en')} requests (${((100 * exported) / sizes.podcast_events).toFixed(2)} % of podcast_events), ${mb(statSync(file).size)} MB of NDJSON`);

    // The answers compared: Downloads.count on the day and the funnel's steps on the day, new account and operator.
    const keys = { [NEW_ACCOUNT]: service.accountKeys[NEW_ACCOUNT], operator: API_KEY };
    const countQuery = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: [day, day] }] };
    const funnelQuery = { measures: [CONVERSIONS], dimensions: [STEP], timeDimensions: [{ dimension: 'WebEventsFromPodcastFunnel.time', dateRange: [day, day] }] };
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
    // Builds the rollups these answers read (a refresh is what is measured), and gives the operator's before.
    const before = await answers();
    step(`answers before (rollups built): ${JSON.stringify(before)}`);

    const probes: number[] = [];
    let probing = true;
    let probeErrors = 0;
    const probe = (async () => {
      for (let n = 0; probing; n++) {
        const query = {
          measures: ['Downloads.count'],
          dimensions: ['Downloads.country'],
          timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 30 days' }],
          filters: [{ member: 'Downloads.country', operator: 'notEquals', values: [`${PROBE_MARK}${n}`] }],
          renewQuery: true,
        };
        const sent = performance.now();
        const reply = await send(base, agent, { method: 'POST', path: '/v1/data/load/', key: API_KEY, body: { query } });
        probes.push(performance.now() - sent);
        if (reply.status !== 200) probeErrors++;
      }
    })();

    const from = (await rows<{ t: string }>('SELECT toString(now64(6)) AS t'))[0].t;
    const handedOff = performance.now();
    step(`hand-off of ${path.basename(file)} as account ${NEW_ACCOUNT}`);
    const summary = await handOff(dataDir, file, { format: 'ndjson', account: NEW_ACCOUNT, maxBadRows: 0, ignoreUnknown: false, rejectsDir: os.tmpdir() }, () => {});
    const summarySeconds = (performance.now() - handedOff) / 1000;
    const to = (await rows<{ t: string }>('SELECT toString(now64(6)) AS t'))[0].t;
    step(`summary after ${summarySeconds.toFixed(1)} s: ${JSON.stringify(summary)}`);

    // What the answers must be: the new account's downloads on the day (direct SQL) and its funnel (addresses
    // that downloaded on the day; it has no website events, so no later step), added to the operator's.
    const added = (await rows<{ n: string; u: string }>(`SELECT count() AS n, uniqExact(ip4) AS u FROM ${db}.downloads WHERE account_id = '${NEW_ACCOUNT}' AND toDate(ts) = '${day}'`))[0];
    const want: Record<string, string> = {};
    for (const route of ['/v1/data/load/', '/cubejs-api/v1/load']) {
      want[`${NEW_ACCOUNT} ${route} count`] = added.n;
      want[`${NEW_ACCOUNT} ${route} funnel`] = Number(added.u) > 0 ? `Podcast Download=${added.u}` : '';
      want[`operator ${route} count`] = String(Number(before[`operator ${route} count`]) + Number(added.n));
      want[`operator ${route} funnel`] = before[`operator ${route} funnel`]
        .split(',')
        .map((s) => (s.startsWith('Podcast Download=') ? `Podcast Download=${Number(s.split('=')[1]) + Number(added.u)}` : s))
        .join(',');
    }
    let current = await answers();
    while (JSON.stringify(current) !== JSON.stringify(want) && performance.now() - handedOff < timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      current = await answers();
    }
    const followSeconds = (performance.now() - handedOff) / 1000;
    probing = false;
    await probe;
    if (JSON.stringify(current) !== JSON.stringify(want)) throw new Error(`answers did not include the day within the timeout: ${JSON.stringify(current)} instead of ${JSON.stringify(want)}`);
    step(`answers include the day ${followSeconds.toFixed(1)} s after the hand-off`);

    await client.command({ query: 'SYSTEM FLUSH LOGS' });
    const window = `event_time_microseconds >= toDateTime64('${from}', 6) AND event_time_microseconds <= toDateTime64('${to}', 6) AND type IN ('QueryFinish', 'ExceptionWhileProcessing') AND query NOT LIKE '%${PROBE_MARK}%'`;
    const read = (await rows<{ r: string; n: string }>(`SELECT sum(read_rows) AS r, count() AS n FROM system.query_log WHERE ${window}`))[0];
    const top = await rows<{ r: string; ms: string; q: string }>(
      `SELECT read_rows AS r, query_duration_ms AS ms, substring(replaceRegexpAll(query, '\\\\s+', ' '), 1, 160) AS q FROM system.query_log WHERE ${window} ORDER BY read_rows DESC LIMIT 8`,
    );
    const sorted = [...probes].sort((a, b) => a - b);
    const ms = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(0));

    log('');
    log(`${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, Node ${process.version}`);
    log(`| Imported | Rows read, hand-off → summary | Share of podcast_events + downloads + web_events (${tableRows.toLocaleString('en')}) | Statements | Summary s | Answers include the day s | Probe p50 ms | Probe p99 ms | Probe max ms | Probes (errors) |`);
    log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    log(
      `| ${values.source} ${day}: ${summary.imported.toLocaleString('en')} requests, ${summary.downloads.toLocaleString('en')} downloads | ${Number(read.r).toLocaleString('en')} | ${((100 * Number(read.r)) / tableRows).toFixed(2)} % | ${read.n} | ${summarySeconds.toFixed(1)} | ${followSeconds.toFixed(1)} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${ms(sorted.at(-1))} | ${sorted.length} (${probeErrors}) |`,
    );
    log('\nStatements that read most:');
    for (const t of top) log(`  ${Number(t.r).toLocaleString('en').padStart(14)} rows ${t.ms.padStart(7)} ms  ${t.q}`);
    return 0;
  } finally {
    // Leave the directory as it was: the imported account's rows and its import record go.
    const db = quoteIdentifier(DATABASE);
    for (const table of ['downloads', 'podcast_events']) {
      await client.command({ query: `ALTER TABLE ${db}.${table} DELETE WHERE account_id = '${NEW_ACCOUNT}'`, clickhouse_settings: { mutations_sync: '2' } });
    }
    await client.command({ query: `ALTER TABLE ${db}.imports DELETE WHERE has(accounts, '${NEW_ACCOUNT}')`, clickhouse_settings: { mutations_sync: '2' } });
    step(`removed ${NEW_ACCOUNT}'s rows`);
    rmSync(file, { force: true });
    agent.destroy();
    server.close();
    await service.close();
  }
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
