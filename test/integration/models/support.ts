import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../../src/config';
import { runModelsCli } from '../../../src/cube/models/cli';
import { testDataDir } from '../support/service';

export const SCHEMA_DIR = path.resolve(__dirname, '..', '..', '..', 'schema');

const made: string[] = [];

/**
 * A fresh model directory holding the given files (name → content), or a copy of schema/; removed by
 * removeModelDirs, which the suite calls once its services, which may watch one, have closed. Made in a hook or a
 * test, never while jest collects the suite: a bundle collects every suite before it runs the first, and an earlier
 * suite's removeModelDirs would remove it.
 */
export function modelDir(files: Record<string, string> | 'schema'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'analytics-models-'));
  made.push(dir);
  if (files === 'schema') cpSync(SCHEMA_DIR, dir, { recursive: true });
  else for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

export function removeModelDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** `npm run models -- …` on the suite's dataset, in this process (libchdb binds one data directory per process). */
export async function models(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const config = parseConfig({ NODE_ENV: 'test', CHDB_DATA_DIR: testDataDir(), DEMO_DATA: 'false', ...env });
  const code = await runModelsCli(args, { config, stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** The problem lines of validate's output. */
export const problemLines = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('  '));
