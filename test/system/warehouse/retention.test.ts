import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, ROOT } from '../support/child';
import { startBuilt } from '../support/service';

/**
 * The retention settings reach the tables at the next `init` (what `npm run
 * warehouse -- init` runs) and the next start of the built service, each
 * change logged, and nothing when the settings are what the tables have.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-retention-'));
const dataDir = path.join(scratch, 'chdb');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const base = { CHDB_DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'info', REJECTS_DIR: path.join(scratch, 'rejects') };

interface Change {
  table: string;
  days: number | string;
  was: string;
}

/** The `retention changed` lines of a log, by table. */
function changes(log: string): Record<string, Omit<Change, 'table'>> {
  const lines = log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string } & Change)
    .filter((line) => line.msg === 'retention changed');
  return Object.fromEntries(lines.map(({ table, days, was }) => [table, { days, was }]));
}

async function init(vars: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['dist/warehouse/cli.js', 'init'], { cwd: ROOT, env: childEnv({ ...base, ...vars }) });
  return stdout;
}

it('init gives the tables their TTL once, logged; a start with another setting changes it', async () => {
  const settings = { RETENTION_RAW_DAYS: '30', RETENTION_CHARTS_DAYS: '365' };
  const raw30 = { days: 30, was: 'forever' };
  const charts365 = { days: 365, was: 'forever' };
  expect(changes(await init(settings))).toEqual({
    podcast_events: raw30,
    web_events: raw30,
    link_events: raw30,
    channel_ranks: charts365,
    episode_ranks: charts365,
  });
  expect(changes(await init(settings))).toEqual({});

  const service = await startBuilt(dataDir, 'retention-test-key-0123456789', { ...base, RETENTION_RAW_DAYS: '7', RETENTION_CHARTS_DAYS: '365' });
  try {
    expect(changes(service.log())).toEqual({
      podcast_events: { days: 7, was: 'toStartOfHour(ts) + toIntervalDay(30)' },
      web_events: { days: 7, was: 'toStartOfHour(track_ts) + toIntervalDay(30)' },
      link_events: { days: 7, was: 'toStartOfHour(ts) + toIntervalDay(30)' },
    });
  } finally {
    await service.stop();
  }
  expect(changes(await init({}))).toEqual({
    podcast_events: { days: 'forever', was: 'toStartOfHour(ts) + toIntervalDay(7)' },
    web_events: { days: 'forever', was: 'toStartOfHour(track_ts) + toIntervalDay(7)' },
    link_events: { days: 'forever', was: 'toStartOfHour(ts) + toIntervalDay(7)' },
    channel_ranks: { days: 'forever', was: 'toStartOfHour(snapshot_ts) + toIntervalDay(365)' },
    episode_ranks: { days: 'forever', was: 'toStartOfHour(snapshot_ts) + toIntervalDay(365)' },
  });
});
