import { createHash } from 'node:crypto';
import type { CompilerApi } from '@cubejs-backend/server-core';

type Compilers = Awaited<ReturnType<CompilerApi['getCompilers']>>;

/**
 * The settings of a CompilerApi its compiled models depend on, or the SQL
 * cached beside them (CompilerApi.getSql keys that by the query alone), as
 * does what its dialect gives the models.
 */
const SETTINGS = [
  'allowNodeRequire',
  'allowJsDuplicatePropsInSchema',
  'standalone',
  'preAggregationsSchema',
  'allowUngroupedWithoutPrimaryKey',
  'convertTzForRawTimeDimension',
  'sqlCache',
] as const;
/** Those settings, and what the engine's dialect gives the models (its funnel's steps, dialect.ts). */
export type CompileSettings = Record<(typeof SETTINGS)[number] | 'dialect', unknown>;

/** What of Cube's CompilerApi the sharing reads and sets (test/unit/cube/cube-internals.test.ts lists them). */
interface CompilerApiInternals extends Record<(typeof SETTINGS)[number], unknown> {
  dialectClass?: (options: { dataSource: string; dbType: string }) => { modelSettings?: unknown } | undefined;
  repository: { localPath(): string; dataSchemaFiles(): Promise<{ fileName: string; content: string }[]> };
  options: { devServer?: boolean };
  schemaVersion: unknown;
  logger(message: string, params: Record<string, unknown>): void;
  getCompilers(options?: { requestId?: string }): Promise<Compilers>;
  createQueryFactory(compilers: Compilers): Promise<unknown>;
  compilers: Compilers;
  queryFactory: unknown;
}

/**
 * Which compiled models two Cube cores may share: the same models folder (a
 * JavaScript model may require files beside it), the same files by name and
 * content, and the same settings.
 */
export function compiledModelsKey(dir: string, files: readonly { fileName: string; content: string }[], settings: CompileSettings): string {
  const hash = createHash('sha256');
  hash.update(`${dir}\0`);
  for (const file of [...files].sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0))) {
    hash.update(`${file.fileName}\0${file.content}\0`);
  }
  // Each setting whole: a replacer list of names would also drop the names inside a setting's value.
  hash.update(
    JSON.stringify(
      Object.keys(settings)
        .sort()
        .map((name) => [name, settings[name as keyof CompileSettings]]),
    ),
  );
  return hash.digest('hex');
}

/** Compiles kept for cores that start later; as many as one core's compilerCacheSize holds (core.ts). */
const KEEP = 4;
const compiled = new Map<string, Promise<Compilers>>();

function remember(key: string, compiling: Promise<Compilers>): void {
  compiled.set(key, compiling);
  // A failed compile is not kept: the next core compiles (and reports) again, as Cube would.
  compiling.catch(() => {
    if (compiled.get(key) === compiling) compiled.delete(key);
  });
  while (compiled.size > KEEP) compiled.delete(compiled.keys().next().value as string);
}

/**
 * Cube compiles a model set once per app and core: every service started in
 * one process (the tests' many services, a benchmark's) paid the whole
 * compile again for the same files, 5 s of CPU each. Compiled models are
 * read-only after the compile (Cube's own cache inside them is keyed by the
 * query and the settings that shape its SQL), so a CompilerApi here takes the
 * models another core compiled from the same files with the same settings
 * (compiledModelsKey), and builds only its own query factory from them.
 *
 * Cube's compile context (the context of the first request of an app) is
 * left out of the key: this service compiles one model set per snapshot
 * whatever context asks first (models/models.ts), so models cannot depend on
 * it. A CompilerApi with a schema version or the dev server recompiles as its
 * version turns, which sharing would skip: those keep Cube's own compile.
 */
export function shareCompiledModels(api: CompilerApi): CompilerApi {
  const target = api as unknown as CompilerApiInternals;
  if (target.schemaVersion !== undefined || target.options.devServer) return api;
  const compile = target.getCompilers.bind(target);
  const adopt = async (options?: { requestId?: string }): Promise<Compilers> => {
    const dialect = target.dialectClass?.({ dataSource: 'default', dbType: 'clickhouse' })?.modelSettings;
    const settings = { ...Object.fromEntries(SETTINGS.map((name) => [name, target[name]])), dialect } as CompileSettings;
    const key = compiledModelsKey(target.repository.localPath(), await target.repository.dataSchemaFiles(), settings);
    const known = compiled.get(key);
    if (known === undefined) {
      const compiling = compile(options);
      remember(key, compiling);
      return compiling;
    }
    const compilers = await known;
    target.logger('Reusing compiled schema', { requestId: options?.requestId });
    target.queryFactory = await target.createQueryFactory(compilers);
    target.compilers = compilers;
    return compilers;
  };
  let adopted: Promise<Compilers> | undefined;
  target.getCompilers = (options) => {
    if (adopted === undefined) {
      const attempt = adopt(options);
      adopted = attempt;
      // Cube compiles again on the next call after a failed compile; so does this.
      attempt.catch(() => {
        if (adopted === attempt) adopted = undefined;
      });
    }
    return adopted;
  };
  return api;
}
