import { ServiceError } from '../../errors';
import type { Logger } from '../../log';
import { formatProblem, isWarning, ModelsInvalid, type ModelProblem } from './problems';
import { directoryState, readSnapshot, type ModelSnapshot } from './snapshot';
import { validateSnapshot, type ModelEngine } from './validate';

/**
 * The models the service serves. They are read from the directory into a
 * snapshot, compiled and validated; only a snapshot without problems is
 * served. With `watch`, an edit is compiled and validated in the background
 * and served from the next request on; an edit with problems is logged in the
 * validate format and the last good snapshot keeps serving.
 *
 * Cube compiles one model set per app id (its documented multitenancy:
 * `contextToAppId` with `repositoryFactory`); the app id here is the
 * snapshot's version, so a new snapshot is a new compile and a request in
 * flight keeps the version it started with.
 */
export interface Models {
  /** Settles once the first snapshot is compiled and validated; rejects with ModelsInvalid. */
  ready(): Promise<void>;
  /** True while a compiled, validated snapshot is being served. */
  compiled(): boolean;
  /** Version of the snapshot serving now, once there is one. */
  version(): Promise<string>;
  /** For Cube's core: the app id and the model files of a request's context. */
  appIdOf(context: ModelContext): string;
  /** Warnings of the snapshot serving now: advice, and members left out. */
  warnings(): readonly ModelProblem[];
  /** Members of a version that cannot be queried (Cube.member → why), refused before Cube sees the query. */
  unavailable(version: string): ReadonlyMap<string, string>;
  repositoryOf(context: ModelContext): ModelSnapshot['repository'];
  close(): void;
}

export interface ModelContext {
  modelVersion?: string;
}

export interface ModelsOptions {
  dir: string;
  watch: boolean;
  logger: Logger;
  engine: ModelEngine;
  /** How often the directory is looked at for edits; a change is served about two intervals later. */
  pollMs?: number;
}

/** Snapshots kept for requests in flight when a newer one starts serving. */
const KEEP = 4;

export function createModels(options: ModelsOptions): Models {
  const { dir, logger, engine, pollMs = 1000 } = options;
  const snapshots = new Map<string, ModelSnapshot>();
  const warningsOf = new Map<string, ModelProblem[]>();
  let current: ModelSnapshot | undefined;

  const remember = (snapshot: ModelSnapshot) => {
    snapshots.delete(snapshot.version);
    snapshots.set(snapshot.version, snapshot);
    while (snapshots.size > KEEP) {
      const oldest = [...snapshots.keys()].find((v) => v !== current?.version && v !== snapshot.version);
      if (oldest === undefined) break;
      snapshots.delete(oldest);
      warningsOf.delete(oldest);
    }
  };

  const check = async (snapshot: ModelSnapshot) => {
    remember(snapshot);
    const found = await validateSnapshot(snapshot, engine);
    const warnings = found.filter(isWarning);
    const problems = found.filter((p) => !isWarning(p));
    if (problems.length > 0) throw new ModelsInvalid(dir, problems, warnings);
    warningsOf.set(snapshot.version, warnings);
    if (warnings.length > 0) logger.warn('models served with warnings', { dir, version: snapshot.version, warnings: warnings.map(formatProblem) });
  };

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // The directory is looked at, not watched: Node's recursive fs.watch on
  // Linux loses a file once it is saved by rename (sed -i, many editors, git
  // checkout), and watches of bind mounts and network shares miss events.
  // A change is read once the directory stayed the same for a whole
  // interval, so a save in several steps is compiled once, complete.
  let seen: string | undefined;
  let read: string | undefined;
  let unreadable = false;
  const look = async () => {
    let state: string;
    try {
      state = await directoryState(dir);
    } catch (err) {
      if (!unreadable)
        logger.error('models directory cannot be read: edits are not followed until it can be; the last good models keep serving', {
          dir,
          error: (err as Error).message,
        });
      unreadable = true;
      return;
    }
    if (unreadable) logger.info('models directory readable again: following edits', { dir });
    unreadable = false;
    if (state === seen && state !== read) {
      read = state;
      reload();
    }
    seen = state;
  };
  const lookAgain = () => {
    if (closed) return;
    timer = setTimeout(() => void look().finally(lookAgain), pollMs);
    timer.unref();
  };
  // Watched from the first good snapshot on: before it there is nothing to keep serving.
  const startWatching = () => {
    if (!options.watch || closed) return;
    logger.info('following edits of the models directory', { dir, everyMs: pollMs });
    lookAgain();
  };

  // The first snapshot is settled once: good, or invalid models. A warehouse
  // that could not be reached to check them settles nothing, so the next
  // caller (a request, a readiness probe) tries again.
  let first: Promise<void> | undefined;
  const firstGood = () =>
    (first ??= (async () => {
      const started = performance.now();
      const snapshot = await readSnapshot(dir);
      await check(snapshot);
      current = snapshot;
      // Compiling holds the event loop for most of this: said here, as the work it is.
      logger.info('models compiled', { dir, version: snapshot.version, files: snapshot.files.length, durationMs: Math.round(performance.now() - started) });
      startWatching();
    })().catch((err: unknown) => {
      if (err instanceof ServiceError && err.code === 'warehouse_unavailable') first = undefined;
      throw err;
    }));
  // Callers that never ask (a request arriving first) still see the failure through version().
  firstGood().catch(() => {});

  let reloading = Promise.resolve();
  const reload = () => {
    reloading = reloading
      .then(async () => {
        try {
          const started = performance.now();
          const snapshot = await readSnapshot(dir);
          if (snapshot.version === current?.version) return;
          await check(snapshot);
          current = snapshot;
          logger.info('models reloaded', { dir, version: snapshot.version, durationMs: Math.round(performance.now() - started) });
        } catch (err) {
          if (!(err instanceof ModelsInvalid)) throw err;
          logger.error('models not reloaded: the last good models keep serving', {
            dir,
            serving: current?.version,
            problems: err.problems.map(formatProblem),
          });
        }
      })
      .catch((err: unknown) => logger.error('models reload failed', { dir, error: String(err) }));
  };

  const versionOf = (context: ModelContext) => {
    const version = context.modelVersion ?? current?.version;
    if (version === undefined || !snapshots.has(version)) throw new Error(`no compiled models for version ${String(version)}`);
    return version;
  };

  return {
    ready: () => firstGood(),
    compiled: () => current !== undefined,
    version: async () => {
      await firstGood();
      return current!.version;
    },
    appIdOf: (context) => `models-${versionOf(context)}`,
    warnings: () => (current ? (warningsOf.get(current.version) ?? []) : []),
    unavailable: (version) =>
      new Map((warningsOf.get(version) ?? []).flatMap((p) => (p.unavailable ? [[`${p.cube}.${p.member}`, p.unavailable] as const] : []))),
    repositoryOf: (context) => snapshots.get(versionOf(context))!.repository,
    close: () => {
      closed = true;
      clearTimeout(timer);
    },
  };
}
