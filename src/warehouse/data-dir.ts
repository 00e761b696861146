import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A failure the operator fixes outside the service (a full disk, a read-only
 * or misnamed data directory). Its message is one complete line naming what
 * is wrong and where; start-up prints it without a stack trace.
 */
export class WarehouseSetupError extends Error {
  override readonly name = 'WarehouseSetupError';
}

/**
 * Checks that chDB can keep its data in `dir` before the engine opens it:
 * libchdb answers an unusable directory with "Failed to create connection"
 * and its own lines on stderr, which name neither the setting nor the cause.
 * Writing a probe file finds a read-only directory or file system and a full
 * disk alike, whoever runs the process (root passes permission checks).
 */
export function checkDataDir(dir: string): void {
  const setting = `CHDB_DATA_DIR ${dir}`;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw new WarehouseSetupError(`${setting} cannot be read: ${reason(err)}`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (mkdirErr) {
      throw new WarehouseSetupError(`${setting} does not exist and cannot be created: ${reason(mkdirErr)}`);
    }
    isDirectory = true;
  }
  if (!isDirectory) throw notADirectory(dir);
  const probe = path.join(dir, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, 'chDB data directory write check\n');
  } catch (err) {
    throw new WarehouseSetupError(errnoCode(err) === 'ENOSPC' ? `${setting} has no space left: ${reason(err)}` : `${setting} is not writable: ${reason(err)}`);
  } finally {
    rmSync(probe, { force: true });
  }
}

export const notADirectory = (dir: string) => new WarehouseSetupError(`CHDB_DATA_DIR ${dir} is not a directory: it names a file; point it at a directory`);

/** True for ClickHouse's NOT_ENOUGH_SPACE (243) and for a write that failed with ENOSPC. */
export function isNoSpace(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, type } = err as Error & { code?: unknown; type?: unknown };
  return code === '243' || code === 243 || type === 'NOT_ENOUGH_SPACE' || code === 'ENOSPC' || /No space left on device|not enough space/i.test(err.message);
}

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** "EROFS: read-only file system" without the path Node repeats in its message. */
function reason(err: unknown): string {
  const code = errnoCode(err);
  const message = err instanceof Error ? err.message : String(err);
  const short = /^[A-Z]+: ([^,]+)/.exec(message)?.[1];
  return code && short ? `${code}: ${short}` : message;
}
