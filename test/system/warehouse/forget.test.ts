import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { clusterDdlStatements } from '../../../src/warehouse/ddl';
import { geoObjectStatements } from '../../../src/warehouse/geo/load';
import { startBuilt, type BuiltService } from '../support/service';
import { childEnv, ROOT } from '../support/child';

/**
 * `npm run warehouse -- forget` as an operator runs it (`node dist/warehouse/cli.js`, what the npm script runs),
 * beside `npm start` on chDB: handed to the service through its inbox, with the exit codes and messages of the
 * command's arguments; and `init --cluster NAME --print`, which needs no server.
 */

const OPERATOR_KEY = 'forget-test-operator-key-0123456789';
const ACCOUNT = 'acme';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-forget-'));
const dataDir = path.join(scratch, 'chdb');
const requests = path.join(scratch, 'requests.ndjson');
/** Three requests of one listener and two of another, on one day: a download per listener and episode. */
const LISTENER = '192.0.2.10';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(env: NodeJS.ProcessEnv, command: string, args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [`dist/${command}/cli.js`, ...args], { cwd: ROOT, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const last = (out: string) => JSON.parse(out.trimEnd().split('\n').pop() ?? '') as Record<string, unknown>;

let service: BuiltService;
let accountKey: string;
beforeAll(async () => {
  const lines = [...[1, 2, 3].map((episode) => ({ ip: LISTENER, episode })), ...[1, 2].map((episode) => ({ ip: '192.0.2.11', episode }))].map(
    ({ ip, episode }, i) =>
      JSON.stringify({
        time: `2026-01-05T10:0${i}:00Z`,
        ip,
        method: 'GET',
        url: `https://pfx.example-analytics.net/e/show1/media.example.com/ep-${episode}.mp3`,
        userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
      }),
  );
  writeFileSync(requests, `${lines.join('\n')}\n`);
  service = await startBuilt(dataDir, OPERATOR_KEY, { DEMO_DATA: 'false' });
  const created = await run(service.env, 'keys', ['create', '--account', ACCOUNT, '--name', 'forget test', '--force']);
  expect(created.code).toBe(0);
  accountKey = /pak_\S+/.exec(created.stdout)?.[0] ?? '';
  expect(await run(service.env, 'warehouse', ['import', '--account', ACCOUNT, requests])).toMatchObject({ code: 0 });
}, 180_000);

afterAll(async () => {
  await service?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

const downloads = () =>
  fetch(`http://127.0.0.1:${service.port}/v1/data/load/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': accountKey },
    body: JSON.stringify({ query: { measures: ['Downloads.count'] } }),
  });

describe('forget beside npm start', () => {
  it('--address: handed to the service, prints the rows removed per table, and the answer is down by them', async () => {
    expect(await (await downloads()).json()).toMatchObject({ data: [{ 'Downloads.count': '5' }] });
    const erased = await run(service.env, 'warehouse', ['forget', '--address', LISTENER]);
    expect(erased).toMatchObject({ code: 0, stderr: expect.stringContaining('handed to the running service') });
    expect(last(erased.stdout)).toMatchObject({ kind: 'address', removed: { podcast_events: 3, downloads: 3, web_events: 0 }, accounts: [ACCOUNT] });
    expect(await (await downloads()).json()).toMatchObject({ data: [{ 'Downloads.count': '2' }] });
  }, 60_000);

  it('refuses arguments that name nothing to erase, or no address, erasing nothing', async () => {
    for (const args of [['forget'], ['forget', '--account'], ['forget', '--address', '192.0.2.11', '--address', '192.0.2.12'], ['forget', '--ip', LISTENER]]) {
      const refused = await run(service.env, 'warehouse', args);
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: npm run warehouse') });
    }
    const notAnAddress = await run(service.env, 'warehouse', ['forget', '--address', '192.0.2']);
    expect(notAnAddress).toMatchObject({ code: 1, stderr: expect.stringContaining('--address: expected an IPv4 or IPv6 address, not "192.0.2"') });
    expect(await (await downloads()).json()).toMatchObject({ data: [{ 'Downloads.count': '2' }] });
  }, 60_000);

  it('--account: its rows and import records go, its key is refused, and the file imports again', async () => {
    const erased = await run(service.env, 'warehouse', ['forget', '--account', ACCOUNT]);
    expect(erased.code).toBe(0);
    expect(last(erased.stdout)).toMatchObject({
      kind: 'account',
      removed: { podcast_events: 2, downloads: 2 },
      imports: { removed: 1, kept: 0 },
      keysRevoked: 1,
    });
    expect((await downloads()).status).toBe(401);
    const again = await run(service.env, 'warehouse', ['import', '--account', ACCOUNT, requests]);
    expect(last(again.stdout)).toMatchObject({ outcome: 'imported', imported: 5 });
  }, 60_000);
});

describe('init --cluster NAME --print', () => {
  it('prints the cluster statements without a server', async () => {
    // No CLICKHOUSE_URL, and a chDB directory that does not exist: nothing is opened.
    const env = childEnv({ CHDB_DATA_DIR: path.join(scratch, 'never-made'), CLICKHOUSE_DATABASE: 'analytics' });
    const printed = await run(env, 'warehouse', ['init', '--cluster', 'analytics_cluster', '--print']);
    expect(printed.code).toBe(0);
    const expected = [
      ...clusterDdlStatements('analytics', 'analytics_cluster'),
      ...geoObjectStatements({ database: 'analytics', cluster: 'analytics_cluster' }),
    ];
    expect(printed.stdout).toBe(expected.map((statement) => `${statement};\n\n`).join(''));
    expect(expected.every((statement) => statement.includes('ON CLUSTER `analytics_cluster`'))).toBe(true);
  }, 60_000);
});
