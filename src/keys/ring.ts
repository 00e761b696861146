import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '../log';
import { readKeyFileIfPresent, type KeyRecord } from './store';

/** A stored key with its digest decoded once per load rather than once per request. */
export interface RingKey {
  record: KeyRecord;
  digest: Buffer;
}

export interface KeyRing {
  /** The keys of the last file that read cleanly. */
  keys(): readonly RingKey[];
  /** Reads the file now, for a change this process made itself (keys revoked by an erasure), rather than at the next poll. */
  reload(): Promise<void>;
  /** Stops watching the file; keys() keeps answering the last set. */
  close(): void;
}

export interface KeyRingOptions {
  file: string;
  reloadIntervalMs: number;
  logger: Logger;
  /** Called each time a change to the file does not read cleanly (for the metrics). */
  onReloadFailure?: () => void;
}

/**
 * Reads the key file, then reloads it whenever its stat changes, so keys made
 * or revoked with the CLI take effect without a restart. Polling the stat
 * (rather than fs.watch) sees the CLI's atomic rename as a new inode and works
 * the same on every file system, network and container mounts included. A file
 * that stops reading cleanly leaves the previous keys in place: a bad edit must
 * not lock every account out, and neither must a file that disappears (a
 * wrong deploy, a volume that is not mounted): the CLI never deletes it, so a
 * missing file is logged as an error and the last good keys stay. A file that
 * never existed holds no keys; a file that lists none is applied, with a
 * warning. Rejects when the first read fails, so the service does not start
 * on a key file it cannot read.
 */
export async function openKeyRing({ file, reloadIntervalMs, logger, onReloadFailure }: KeyRingOptions): Promise<KeyRing> {
  let current: readonly RingKey[] = [];
  let everRead = false;
  let closed = false;
  let started = 0;
  let applied = 0;

  // Reads can finish out of order; a read that began later saw a file at least
  // as new, so an older read never overwrites its result.
  const load = async (): Promise<Outcome> => {
    const seq = ++started;
    const records = await readKeyFileIfPresent(file);
    if (records === undefined && everRead) return { kind: 'kept' };
    if (!closed && seq > applied) {
      applied = seq;
      everRead ||= records !== undefined;
      current = (records ?? []).map((record) => ({ record, digest: Buffer.from(record.hash, 'hex') }));
    }
    return records === undefined ? { kind: 'absent' } : { kind: 'read', keys: records.length };
  };

  const warnIfEmpty = (outcome: Outcome) => {
    if (outcome.kind === 'read' && outcome.keys === 0) logger.warn('key file holds no keys; every account key is refused', { file });
  };

  const onChange = (curr: Stats, prev: Stats) => {
    // Node calls the listener once, at once, when the file is missing at the start
    // (all stat fields zero). Nothing changed, so there is nothing to reload or report.
    if (isMissing(curr) && isMissing(prev)) return;
    load().then(
      (outcome) => {
        if (closed) return;
        if (outcome.kind === 'kept') {
          logger.error('key file missing; keeping the last good keys', { file, keys: current.length });
        } else if (outcome.kind === 'read' && outcome.keys > 0) {
          logger.info('key file reloaded', { file, keys: outcome.keys });
        }
        warnIfEmpty(outcome);
      },
      (err: unknown) => {
        if (closed) return;
        onReloadFailure?.();
        logger.error('key file not reloaded; keeping the previous keys', {
          file,
          error: err instanceof Error ? err.message : String(err),
          keys: current.length,
        });
      },
    );
  };

  // Watch before the first read: a change between the two is then reloaded, not missed.
  watchFile(file, { interval: reloadIntervalMs, persistent: false }, onChange);
  try {
    warnIfEmpty(await load());
  } catch (err) {
    unwatchFile(file, onChange);
    throw err;
  }
  return {
    keys: () => current,
    reload: async () => {
      await load();
    },
    close: () => {
      closed = true;
      unwatchFile(file, onChange);
    },
  };
}

/** A file read (with its number of keys), a file missing after one was read (keys kept), or no file yet. */
type Outcome = { kind: 'read'; keys: number } | { kind: 'kept' } | { kind: 'absent' };

function isMissing(stats: Stats): boolean {
  return stats.ino === 0 && stats.mtimeMs === 0;
}
