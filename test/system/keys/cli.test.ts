import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readKeyFile } from '../../../src/keys/store';
import { childEnv, ROOT } from '../support/child';

/**
 * `npm run keys` as built (`node dist/keys/cli.js`, compiled once by the tier's global setup) checks that a new key's
 * account has rows, on a warehouse of its own: a tiny demo build in a child process. libchdb binds one data directory
 * per process, so the case of a running service holding it is a child that holds it.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'analytics-keys-cli-'));
const dataDir = path.join(scratch, 'chdb');
let keyFiles = 0;
const keyFile = () => path.join(scratch, `keys-${++keyFiles}.json`);

/** The CLI with API_KEYS_FILE set to `file`. */
async function create(file: string, args: string[], dir = dataDir): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = childEnv({ CHDB_DATA_DIR: dir, API_KEYS_FILE: file, DEMO_DATA: 'false' });
  return promisify(execFile)(process.execPath, [path.join(ROOT, 'dist', 'keys', 'cli.js'), 'create', ...args], { cwd: ROOT, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['dist/warehouse/cli.js', 'demo'], {
    cwd: ROOT,
    env: childEnv({ CHDB_DATA_DIR: dataDir, DEMO_SCALE: '0.005', DEMO_DAYS: '7' }),
  });
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm run keys create on the embedded engine', () => {
  it('refuses when a running service holds CHDB_DATA_DIR, saying it could not check; --force creates the key', async () => {
    const holder: ChildProcess = spawn(
      process.execPath,
      ['-e', "require('chdb/connection').createChdbConnection({ path: process.argv[1] }); console.log('open'); setInterval(() => {}, 1000)", dataDir],
      { cwd: ROOT },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('open') && resolve());
        holder.on('exit', (code) => reject(new Error(`the holder exited (${code}) before opening ${dataDir}`)));
      });
      const file = keyFile();
      const refused = await create(file, ['--account', 'northwind-audio', '--name', 'n']);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' });
      expect(refused.stderr).toContain(`error: could not check that account "northwind-audio" has rows in the warehouse: CHDB_DATA_DIR ${dataDir}`);
      expect(refused.stderr).toContain('Pass --force');
      expect(existsSync(file)).toBe(false);

      const forced = await create(file, ['--account', 'northwind-audio', '--name', 'n', '--force']);
      expect(forced.code).toBe(0);
      expect((await readKeyFile(file)).map((record) => record.account)).toEqual(['northwind-audio']);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => (holder.exitCode === null && holder.signalCode === null ? holder.on('exit', resolve) : resolve(undefined)));
    }
  }, 120_000);

  it('checks the account itself once no other process holds CHDB_DATA_DIR', async () => {
    const file = keyFile();
    const typo = await create(file, ['--account', 'nortwind-audio', '--name', 'n']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('Did you mean "northwind-audio"?');
    const created = await create(file, ['--account', 'northwind-audio', '--name', 'n']);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await readKeyFile(file)).map((record) => record.account)).toEqual(['northwind-audio']);
  }, 120_000);

  it('refuses on a data directory that holds nothing yet, without creating it', async () => {
    const empty = path.join(scratch, 'empty', 'chdb');
    const file = keyFile();
    const refused = await create(file, ['--account', 'northwind-audio', '--name', 'n'], empty);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: account "northwind-audio" has no rows: the warehouse holds no account's rows yet/);
    expect(existsSync(empty)).toBe(false);
    expect(existsSync(file)).toBe(false);
  }, 120_000);
});
