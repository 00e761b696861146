/**
 * Deterministic demo data for the six warehouse tables: a podcast-analytics
 * universe derived from a seed, generated inside the engine with
 * INSERT … SELECT FROM numbers(N). Every random choice is a cityHash64 of the
 * seed and the row's keys, so the same options always give the same rows.
 *
 * The universe:
 * - 40 tracked podcasts (reference-data TRACKED_PODCASTS), owned by four
 *   accounts (DEMO_ACCOUNTS), get a seeded Apple-style
 *   id, an 8-hex tracking token, a release schedule and a popularity; their
 *   episodes are `ep-NNN.mp3` files behind the tracking prefix.
 * - Listeners have a stable IP in a /16 that fixes city, country and ISP (a tiny
 *   GeoIP database built from the reference data), and a stable user agent.
 * - Charts rank the tracked shows among made-up shows per category.
 * - Smart links and website visits hang off the tracked shows; part of the web
 *   traffic comes from IPs that downloaded an episode shortly before.
 */
import { channelRanksSql, episodeRanksSql } from './demo/charts';
import { linkViewsSql } from './demo/links';
import { DAY, EPISODE_CHART_DEPTH, makePlan, type DemoDataOptions, type Plan, type Range } from './demo/plan';
import { blacklistedRequestsSql, botRequestsSql, demoPlaces, listenerRequestsSql } from './demo/requests';
import { downloaderWebEventsSql, organicWebEventsSql } from './demo/web-events';
import { deriveDownloadsSql } from './derive/downloads';

/**
 * A statement's memory is bounded by its part of the input, and ClickHouse
 * spills the downloads' GROUP BY and the window functions' sorts to disk
 * beyond these sizes, so a build at 100M downloads fits in a few GB. Two
 * insert threads sort and compress the new parts while the generator runs.
 */
export const DEFAULT_CHUNK_ROWS = 8_000_000;
const BUILD_SETTINGS = 'SETTINGS max_bytes_before_external_group_by = 1000000000, max_bytes_before_external_sort = 1000000000, max_insert_threads = 2';

/** Fills the six tables, one INSERT … SELECT per step; `run` executes one statement. */
export async function loadDemoData(run: (sql: string) => Promise<void>, options: DemoDataOptions): Promise<void> {
  const plan = makePlan(options);
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
  if (!(chunkRows >= 1)) throw new Error(`demo data: chunkRows must be at least 1, got ${chunkRows}`);
  const all = steps(plan, chunkRows);
  const total = all.reduce((n, step) => n + step.rows, 0);
  let done = 0;
  for (const step of all) {
    options.onProgress?.(`${step.message}, ${Math.floor((100 * done) / total)}% done`);
    await run(`${step.sql.trim()}\n${BUILD_SETTINGS}`);
    done += step.rows;
  }
}

interface Step {
  message: string;
  sql: string;
  /** Rows the statement writes (estimated where the step does not fix them), for the progress percentage. */
  rows: number;
}

/** Rows per candidate or source row, measured at scale 1. */
const REQUESTS_PER_PLAY_CANDIDATE = 0.85;
const DOWNLOADS_PER_PLAY_CANDIDATE = 0.36;

/** Progress messages give exact counts where the step fixes them, else estimates (the ratios were measured). */
function steps(plan: Plan, chunkRows: number): Step[] {
  const { sizes } = plan;
  const snapshots = plan.charts.length * plan.days;
  const step = (message: string, rows: number, sql: string): Step => ({ message: `${message} (~${count(rows)} rows)`, rows, sql });
  const parts = <T>(label: string, items: T[], rows: number, sql: (item: T) => string): Step[] =>
    items.map((item, i) => step(items.length === 1 ? label : `${label}, part ${i + 1} of ${items.length}`, rows / items.length, sql(item)));

  const candidates = ranges(sizes.playCandidates, Math.ceil((sizes.playCandidates * REQUESTS_PER_PLAY_CANDIDATE) / chunkRows));
  const dayRanges = ranges(plan.days, Math.min(plan.days, Math.ceil((sizes.playCandidates * DOWNLOADS_PER_PLAY_CANDIDATE) / chunkRows)));
  return [
    step('channel_ranks', plan.charts.reduce((n, c) => n + c.depth, 0) * plan.days, channelRanksSql(plan)),
    step('episode_ranks', snapshots * EPISODE_CHART_DEPTH, episodeRanksSql(plan)),
    ...parts('podcast_events: listener requests', candidates, sizes.playCandidates * REQUESTS_PER_PLAY_CANDIDATE, (r) => listenerRequestsSql(plan, r)),
    step('podcast_events: bot requests', sizes.botRequests, botRequestsSql(plan)),
    step(`podcast_events: requests from ${sizes.blacklistedIps} blacklisted IPs`, sizes.blacklistedRequests, blacklistedRequestsSql(plan)),
    ...parts('downloads derived from podcast_events', dayRanges, sizes.playCandidates * DOWNLOADS_PER_PLAY_CANDIDATE, (r) =>
      deriveDownloadsSql({
        ...plan.downloads,
        database: plan.database,
        places: demoPlaces(plan),
        from: plan.windowStart + r.offset * DAY,
        to: plan.windowStart + (r.offset + r.length) * DAY,
      }),
    ),
    step('link_views', sizes.linkVisits * 0.46, linkViewsSql(plan)),
    step('web_events: sessions of downloaders visiting the podcast websites', sizes.listeners * 0.2, downloaderWebEventsSql(plan)),
    step('web_events: events from organic visitors', sizes.organicSessions * 1.1, organicWebEventsSql(plan)),
  ];
}

/** [0, total) cut into `parts` consecutive ranges of near-equal length. */
function ranges(total: number, parts: number): Range[] {
  const n = Math.max(1, parts);
  return Array.from({ length: n }, (_, i) => {
    const offset = Math.floor((total * i) / n);
    return { offset, length: Math.floor((total * (i + 1)) / n) - offset };
  });
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
