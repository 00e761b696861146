import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv, freePort, ROOT } from '../support/child';

/**
 * `npm run models -- validate` and `-- sql` as built (`node dist/cube/models/cli.js`) while `npm start` holds chDB's
 * data directory, which libchdb opens in one process only: each gives the verdict, output and exit code it gives with
 * the service stopped. The models read a table that only the live warehouse has (made by direct SQL before the
 * service starts, not by the service's DDL), so a check that did not see the live schema would say otherwise.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-models-cli-'));
const dataDir = path.join(scratch, 'chdb');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const plays = (sql: string, access: string, showColumn: string) => `${access}cubes:
  - name: TeamPlays
    sql: "${sql}"
    measures:
      - name: count
        description: Plays of the team's shows.
        type: count
    dimensions:
      - name: show
        sql: ${showColumn}
        type: string
`;
const listens = `# access: account
cubes:
  - name: Listens
    sql: "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}"
    measures:
      - name: count
        description: Downloads counted.
        type: count
    dimensions:
      - name: country
        sql: country
        type: string
`;

function modelDir(name: string, files: Record<string, string>): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  return dir;
}
const good = modelDir('good', {
  'TeamPlays.yml': plays("SELECT * FROM team_plays WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}", '# access: account\n', 'show'),
  'Listens.yml': listens,
});
// The account rule broken (a problem), and a misspelt column (a warning).
const broken = modelDir('broken', { 'TeamPlays.yml': plays('SELECT * FROM team_plays', '', 'shwo'), 'Listens.yml': listens });

interface Run {
  code: number;
  /** The report. */
  stdout: string;
  /** Log lines; an error's message when the command could not run, which shows in a failed comparison. */
  error?: string;
}

function models(args: string[]): Promise<Run> {
  return promisify(execFile)(process.execPath, ['dist/cube/models/cli.js', ...args], {
    cwd: ROOT,
    env: childEnv({ CHDB_DATA_DIR: dataDir, DEMO_DATA: 'false' }),
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      ...(/^error: /m.test(err.stderr) && { error: err.stderr }),
    }),
  );
}

/** validate on both folders and sql for an account, one after the other. */
async function verdicts(): Promise<Record<string, Run>> {
  return {
    good: await models(['validate', '--dir', good]),
    broken: await models(['validate', '--dir', broken]),
    strict: await models(['validate', '--strict', '--dir', broken]),
    sql: await models(['sql', '{"measures":["TeamPlays.count"],"dimensions":["TeamPlays.show"]}', '--account', 'acme', '--dir', good]),
  };
}

/** `node dist/index.js` on the data directory, once ready. */
async function startService(): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: childEnv({
      NODE_ENV: 'development',
      CHDB_DATA_DIR: dataDir,
      DEMO_DATA: 'false',
      API_KEYS: 'models-cli-test-key-0123456789',
      API_KEYS_FILE: path.join(scratch, 'keys.json'),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
    }),
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"msg":"ready"')) resolve();
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before it was ready: ${out}`)));
  });
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let running: Record<string, Run>;
let stopped: Record<string, Run>;
beforeAll(async () => {
  // The team's own table, with an account_id column: its rows belong to accounts.
  await promisify(execFile)(
    process.execPath,
    [
      '-e',
      `const { Session } = require('chdb');
       new Session(process.argv[1]).query("CREATE DATABASE IF NOT EXISTS analytics; CREATE TABLE analytics.team_plays (account_id String, ts DateTime, show String) ENGINE = MergeTree ORDER BY (account_id, ts)");`,
      dataDir,
    ],
    { cwd: ROOT },
  );
  const service = await startService();
  try {
    running = await verdicts();
  } finally {
    await service.stop();
  }
  stopped = await verdicts();
}, 300_000);

describe('npm run models while npm start holds the data directory', () => {
  it('validate passes the good folder, as with the service stopped', () => {
    expect(stopped.good).toEqual({ code: 0, stdout: `${good}: the models compile and pass every check.\n` });
    expect(running.good).toEqual(stopped.good);
  });

  it("validate finds the broken folder's problem and warning on the live table, as with the service stopped", () => {
    expect(stopped.broken.code).toBe(1);
    expect(stopped.broken.stdout).toContain(`TeamPlays.yml: TeamPlays: reads analytics.team_plays, whose rows belong to accounts (account_id column)`);
    expect(stopped.broken.stdout).toMatch(/TeamPlays\.yml: TeamPlays\.show: the member cannot be queried.*Identifier .*shwo/);
    expect(running.broken).toEqual(stopped.broken);
    expect(stopped.strict.code).toBe(1);
    expect(running.strict).toEqual(stopped.strict);
  });

  it('sql prints the statement and parameters, as with the service stopped', () => {
    expect(stopped.sql.code).toBe(0);
    expect(stopped.sql.stdout).toMatch(/FROM team_plays WHERE account_id = \?/);
    expect(stopped.sql.stdout).toContain('-- parameters: ["acme"]');
    expect(running.sql).toEqual(stopped.sql);
  });
});
