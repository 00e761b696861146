import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AccountCheck } from '../../../src/keys/accounts';
import { runKeysCli } from '../../../src/keys/cli';
import type { Logger } from '../../../src/log';

/** A key file path in a fresh temporary directory (the file itself is not created); removed after each test. */
export function tempKeyFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-keys-test-'));
  dirs.push(dir);
  return path.join(dir, 'keys', 'api-keys.json');
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function recordingLogger(): Logger & { [level in keyof Logger]: jest.Mock } {
  return { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
}

/** Resolves once `check` holds, polling; fails the test after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs the CLI in-process on `file`, collecting what it prints; `accounts` answers whether an account has rows. */
export async function cliWith(accounts: AccountCheck, file: string, argv: string[], now?: Date): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runKeysCli(argv, {
    file,
    accounts,
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    now: now === undefined ? undefined : () => now,
  });
  return { code, stdout, stderr };
}

/** The CLI where every account has rows: the warehouse's answer is tested in test/integration/keys. */
export const cli = (file: string, argv: string[], now?: Date) => cliWith(async () => ({ status: 'has-rows' }), file, argv, now);
