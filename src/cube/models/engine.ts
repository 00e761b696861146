import { prepareCompiler } from '../engine/schema-compiler';
import type { ModelSnapshot } from './snapshot';
import type { CompiledModels, GeneratedSql, ModelEngine } from './validate';

/** The pieces of the serving core that validation uses, for one model version. */
export interface EngineParts {
  /** Cube's CompilerApi of the core for a model version. */
  compilerApi(modelVersion: string): Promise<unknown>;
  /** The API gateway's SQL for a query under an account (null: an operator). */
  generateSql(modelVersion: string, query: Record<string, unknown>, accountId: string | null): Promise<GeneratedSql>;
  /** Runs a statement the way Cube's driver runs the cubes' SQL (its parameter formatting, read-only client). */
  query(sql: string, params: unknown[]): Promise<Record<string, unknown>[]>;
}

/** What Cube's CompilerApi keeps of its options; it passes them to the compiler on every compile. */
interface CompilerApiInternals {
  getCompilers(options?: { requestId?: string }): Promise<CompiledModels>;
  allowNodeRequire: boolean;
  compileContext: unknown;
  allowJsDuplicatePropsInSchema: boolean;
  standalone: boolean;
  nativeInstance: unknown;
}

export function createModelEngine(parts: EngineParts): ModelEngine {
  const api = async (snapshot: ModelSnapshot) => (await parts.compilerApi(snapshot.version)) as CompilerApiInternals;
  return {
    compile: async (snapshot) => (await api(snapshot)).getCompilers({ requestId: `models-${snapshot.version}` }),

    // Cube throws one CompileError joining every message into a string; the
    // compiler it threw from keeps them one by one. Compiled again with the
    // options the core's CompilerApi passes.
    compileErrors: async (snapshot) => {
      const core = await api(snapshot);
      const { compiler } = prepareCompiler(snapshot.repository, {
        allowNodeRequire: core.allowNodeRequire,
        compileContext: core.compileContext,
        allowJsDuplicatePropsInSchema: core.allowJsDuplicatePropsInSchema,
        standalone: core.standalone,
        nativeInstance: core.nativeInstance,
      } as Parameters<typeof prepareCompiler>[1]);
      try {
        await compiler.compile();
        return [];
      } catch (err) {
        const reporter = (compiler as unknown as { errorsReport?: { rootReporter(): { errors: unknown[] } } }).errorsReport;
        const errors = reporter?.rootReporter().errors ?? [];
        return errors.length > 0 ? errors : [err];
      }
    },

    sql: (snapshot, query, accountId) => parts.generateSql(snapshot.version, query, accountId),

    tablesRead: async ({ sql, params }) => {
      const rows = await parts.query(`EXPLAIN QUERY TREE ${sql}`, params);
      const tree = rows.map((row) => String(Object.values(row)[0])).join('\n');
      return [...new Set([...tree.matchAll(/\btable_name: (\S+?),?$/gm)].map((m) => m[1]))].sort();
    },

    accountTables: async () => {
      const rows = await parts.query("SELECT concat(database, '.', table) AS t FROM system.columns WHERE name = 'account_id'", []);
      return new Set(rows.map((r) => String(r.t)));
    },
  };
}
