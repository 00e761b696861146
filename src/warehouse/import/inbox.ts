import { randomUUID } from 'node:crypto';
import { chmodSync, copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../log';
import { geoLoaded } from '../geo/load';
import { addressPlaces, placesFromDatabase } from '../geo/places';
import { checkedErasure, ErasureRefused, forget, type Erasure, type ErasureSummary } from '../forget';
import { ensureImportTables, importFile, ImportRefused, recoverInterrupted, type ImportOptions, type ImportSummary } from './import';

/**
 * chDB's data directory belongs to one process, so while `npm start` holds
 * it the import command hands its files to the service through this inbox:
 * a folder inside the data directory that only the directory's owner can
 * reach (0700). The command copies the file in and writes a job; the
 * service, which polls the folder, imports it with its own engine and
 * writes the summary back. `forget` hands its erasure over the same way (a
 * job without a file). A job stays until its result is written, so one the
 * service was running when it stopped is run when it starts again. No HTTP
 * route is involved: the API stays read-only.
 */
export const INBOX = 'import-inbox';
const PID_FILE = 'service.pid';
const POLL_MS = 500;

export type InboxJob = Omit<ImportOptions, 'database' | 'derivation' | 'trackingPrefix' | 'engineReadsFiles' | 'progress' | 'statementRows'> & {
  name: string;
  data: string;
};

/** What a job file holds: a file to import (a job that names no kind), or an erasure. */
type Job = (InboxJob & { kind?: 'import' }) | { kind: 'forget'; erasure: Erasure };

/** What the service writes back for a file it could not import. */
interface Failure {
  error: string;
  /** The file was refused whole (ImportRefused). */
  refused: boolean;
}

export interface InboxHooks {
  /** After an import added rows, before its summary is written. */
  imported?: (summary: ImportSummary) => Promise<void>;
  /** After an erasure, before its summary is written; what it returns is added to the summary. */
  forgotten?: (erasure: Erasure, summary: ErasureSummary) => Promise<Record<string, unknown>>;
}

export function inboxDir(dataDir: string): string {
  const dir = path.join(dataDir, INBOX);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/** The pid of a live service that watches the inbox, if any. */
export function runningService(dataDir: string): number | undefined {
  const file = path.join(dataDir, INBOX, PID_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The command's side: hands one file to the service and waits for its summary. */
export async function handOff(
  dataDir: string,
  file: string,
  job: Omit<InboxJob, 'name' | 'data'>,
  progress: (message: string) => void,
): Promise<ImportSummary> {
  const dir = inboxDir(dataDir);
  const id = randomUUID();
  const data = path.join(dir, `${id}.data${file.endsWith('.gz') ? '.gz' : ''}`);
  const partial = `${data}.partial`;
  if (file === '-') await pipeline(process.stdin, createWriteStream(partial, { mode: 0o600 }));
  else copyFileSync(file, partial);
  renameSync(partial, data);
  progress(`${file}: handed to the running service (pid ${runningService(dataDir) ?? '?'}) through ${dir}`);
  const summary = await runJob<ImportSummary>(dataDir, id, { ...job, name: file, data }, `importing ${file}`);
  // A file refused whole is the file's fault, said as the command alone says it; anything else is the service's.
  if (!('outcome' in summary)) throw summary.refused ? new ImportRefused(summary.error) : new Error(`the service could not import ${file}: ${summary.error}`);
  return summary;
}

/** The command's side of `forget`: hands the erasure to the service and waits for its summary. */
export async function handOffErasure(dataDir: string, erasure: Erasure, progress: (message: string) => void): Promise<ErasureSummary> {
  progress(`handed to the running service (pid ${runningService(dataDir) ?? '?'}) through ${inboxDir(dataDir)}`);
  const summary = await runJob<ErasureSummary>(dataDir, randomUUID(), { kind: 'forget', erasure }, 'erasing');
  if ('error' in summary) throw summary.refused ? new ErasureRefused(summary.error) : new Error(`the service could not erase: ${summary.error}`);
  return summary;
}

/** Writes a job and waits for the service's result. */
async function runJob<T>(dataDir: string, id: string, job: Job, doing: string): Promise<T | Failure> {
  const dir = inboxDir(dataDir);
  writeFileSync(path.join(dir, `${id}.job.partial`), JSON.stringify(job), { mode: 0o600 });
  renameSync(path.join(dir, `${id}.job.partial`), path.join(dir, `${id}.job`));
  const result = path.join(dir, `${id}.result`);
  for (;;) {
    if (existsSync(result)) {
      const outcome = JSON.parse(readFileSync(result, 'utf8')) as T | Failure;
      rmSync(result, { force: true });
      return outcome;
    }
    if (runningService(dataDir) === undefined) {
      throw new Error(`the service stopped before ${doing}; it takes the job up again when it starts, or run the command again`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * The service's side: imports the jobs it finds, one at a time, until
 * stopped. Each import takes its places from the IP database if one is
 * loaded (geo/places.ts). `imported` runs after an import added rows and
 * before its summary is written, so that when the command returns, the
 * service's answers already follow the new rows.
 */
export function watchInbox(
  dataDir: string,
  client: ClickHouseClient,
  options: Pick<ImportOptions, 'database' | 'derivation' | 'trackingPrefix' | 'statementRows'>,
  logger: Logger,
  hooks: InboxHooks = {},
): { stop(): void } {
  const { imported = async () => {}, forgotten = async () => ({}) } = hooks;
  const dir = inboxDir(dataDir);
  writeFileSync(path.join(dir, PID_FILE), String(process.pid), { mode: 0o600 });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const progress = (message: string) => logger.info(`import: ${message}`);
  const importJob = async (job: InboxJob): Promise<ImportSummary | Failure> => {
    let done: ImportSummary;
    try {
      const places = options.derivation.places ?? (await placesFromDatabase(client, options.database, logger.warn));
      // The inbox is chDB's: the engine in this process reads the file.
      done = await importFile(client, job.data, { ...job, ...options, derivation: { ...options.derivation, places }, engineReadsFiles: true, progress });
      logger.info('import finished', { ...done });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      logger.error('import failed', { file: job.name, error });
      return { error, refused: err instanceof ImportRefused };
    }
    if (done.outcome === 'imported' && done.imported > 0) {
      // The rows are in whatever this says: a failure here is the service's, logged, not the file's.
      await imported(done).catch((err: unknown) =>
        logger.error('answers may not follow the import until their caches expire', { file: job.name, error: String(err) }),
      );
    }
    return done;
  };
  const forgetJob = async (erasure: Erasure): Promise<Record<string, unknown> | Failure> => {
    let done: ErasureSummary;
    try {
      done = await forget(client, options.database, checkedErasure(erasure));
    } catch (err) {
      // The message only: the erasure itself (an address) is what must not be kept, in the log as anywhere.
      const error = err instanceof Error ? err.message : String(err);
      logger.error('erasure failed', { kind: erasure.kind, error });
      return { error, refused: err instanceof ErasureRefused };
    }
    logger.info('erasure finished', { ...done });
    // The rows are gone whatever this says: a failure here is the service's, logged.
    const followed = await forgotten(erasure, done).catch((err: unknown) => {
      logger.error('the erasure is made, but what follows it failed (answers, an account’s keys)', { id: done.id, error: String(err) });
      return {};
    });
    return { ...done, ...followed };
  };
  const tick = async () => {
    for (const entry of readdirSync(dir).filter((f) => f.endsWith('.job'))) {
      const jobFile = path.join(dir, entry);
      const job = JSON.parse(readFileSync(jobFile, 'utf8')) as Job;
      const outcome = job.kind === 'forget' ? await forgetJob(job.erasure) : await importJob(job);
      writeFileSync(path.join(dir, `${entry.slice(0, -4)}.result.partial`), JSON.stringify(outcome), { mode: 0o600 });
      renameSync(path.join(dir, `${entry.slice(0, -4)}.result.partial`), path.join(dir, `${entry.slice(0, -4)}.result`));
      rmSync(jobFile, { force: true });
      if (job.kind !== 'forget') rmSync(job.data, { force: true });
    }
  };
  const loop = () => {
    if (stopped) return;
    tick()
      .catch((err: unknown) => logger.error('import inbox failed', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, POLL_MS);
      });
  };
  // An import the service was running when it was killed is undone before new ones start.
  ensureImportTables(client, options.database)
    .then(async () => {
      // Silently: a start without an IP database is no news unless an import is made.
      const places = options.derivation.places ?? ((await geoLoaded(client, options.database)) ? addressPlaces(options.database) : undefined);
      await recoverInterrupted(client, { ...options, derivation: { ...options.derivation, places }, progress });
    })
    .catch((err: unknown) => logger.error('import recovery failed', { error: String(err) }))
    .finally(loop);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      rmSync(path.join(dir, PID_FILE), { force: true });
    },
  };
}
