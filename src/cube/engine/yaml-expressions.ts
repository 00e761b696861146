import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { YamlCompiler } from '@cubejs-backend/schema-compiler/dist/src/compiler/YamlCompiler';

/** What of Cube's YAML compiler the cache wraps (test/unit/cube/cube-internals.test.ts lists them). */
interface YamlCompilerInternals {
  parsePythonAndTranspileToJs(code: string, errorsReport: unknown): unknown;
  compileYamlFile(...args: unknown[]): unknown;
}

/** Expressions kept; a models folder holds hundreds, so this leaves room for many edits of it before the oldest go. */
const MAX_ENTRIES = 20_000;

const SCHEMA_COMPILER_DIR = path.dirname(require.resolve('@cubejs-backend/schema-compiler/package.json'));
const { version: CUBE_VERSION } = JSON.parse(readFileSync(path.join(SCHEMA_COMPILER_DIR, 'package.json'), 'utf8')) as { version: string };

/**
 * The cache's file: in node_modules/.cache beside the Cube it belongs to, which holds nothing less trusted than the
 * code (the trees become the models' code), and which a fresh install starts without. Named by Cube's version, whose
 * parser made the trees.
 */
export const DEFAULT_CACHE_FILE = path.join(SCHEMA_COMPILER_DIR, '..', '..', '.cache', 'analytics-api', `cube-yaml-expressions-${CUBE_VERSION}.json`);

/** Each expression Cube's Python parser read, and the syntax tree it made of it, as JSON; kept in a file for other processes. */
export class ExpressionCache {
  private entries: Map<string, string> | undefined;
  private added = 0;

  constructor(readonly file: string) {}

  /** A fresh copy of the tree kept for `code` (Cube builds on the trees it is given), or undefined. */
  get(code: string): unknown {
    const json = this.load().get(code);
    return json === undefined ? undefined : JSON.parse(json);
  }

  set(code: string, tree: unknown): void {
    this.load().set(code, JSON.stringify(tree));
    this.added += 1;
  }

  /**
   * Writes what this process added, merged with what others wrote meanwhile, through a file of its own renamed over
   * the cache's, so a reader never sees half a file. A cache that cannot be written (a read-only install) stays
   * in memory: the compile it would speed up is not worth failing.
   */
  flush(): void {
    if (this.added === 0) return;
    this.added = 0;
    const entries = new Map([...readEntries(this.file), ...this.load()]);
    const kept = [...entries].slice(-MAX_ENTRIES);
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      const temporary = `${this.file}.${process.pid}`;
      writeFileSync(temporary, JSON.stringify(Object.fromEntries(kept)));
      renameSync(temporary, this.file);
    } catch {
      // Read-only or full: the next process parses again, as without the cache.
    }
  }

  private load(): Map<string, string> {
    this.entries ??= readEntries(this.file);
    return this.entries;
  }
}

/** The file's entries; none when it is missing or unreadable (written by something else, cut short). */
function readEntries(file: string): Map<string, string> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return new Map();
    return new Map(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return new Map();
  }
}

let current: ExpressionCache | undefined;

/**
 * Cube reads every string of a YAML model (each sql, title, description, format) with an ANTLR parser of Python 3
 * f-strings and turns it into a JavaScript syntax tree: two thirds of compiling this project's models (about 1 s of
 * CPU of 1.5, quiet), paid again by every process that starts the service, the model CLI or a test file. The tree
 * depends on the string alone, so it is kept, by the string, in a file every process reads (ExpressionCache), and a
 * string read before is not parsed again. A string the parser refuses is not kept: Cube reports it each time, as it
 * would. Cube's own module, patched once for the process; `cache` replaces the one in use (a test's own file).
 */
export function cacheYamlExpressions(cache: ExpressionCache = current ?? new ExpressionCache(DEFAULT_CACHE_FILE)): void {
  const proto = YamlCompiler.prototype as unknown as YamlCompilerInternals;
  if (current === undefined) {
    const parse = proto.parsePythonAndTranspileToJs;
    proto.parsePythonAndTranspileToJs = function parsePythonAndTranspileToJs(this: YamlCompilerInternals, code, errorsReport) {
      const kept = current?.get(code);
      if (kept !== undefined) return kept;
      // Cube reports a refused string to errorsReport.error (once per message) and answers a null literal for it.
      let refused = false;
      const report = errorsReport as { error(...args: unknown[]): unknown };
      const watched = Object.assign(Object.create(report) as typeof report, {
        error: (...args: unknown[]) => {
          refused = true;
          return report.error(...args);
        },
      });
      const tree = parse.call(this, code, watched);
      if (!refused) current?.set(code, tree);
      return tree;
    };
    const compileFile = proto.compileYamlFile;
    proto.compileYamlFile = function compileYamlFile(this: YamlCompilerInternals, ...args) {
      try {
        return compileFile.apply(this, args);
      } finally {
        current?.flush();
      }
    };
  }
  current = cache;
}
