import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The import rules of docs/architecture.md ("What each folder may import")
 * that a merge most easily breaks, checked over the source text.
 */
const ROOT = path.resolve(__dirname, '..', '..');

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

/** Each file of `dir` with the modules it imports or requires. */
function importsUnder(dir: string): [string, string[]][] {
  return filesUnder(dir).map((file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const named = [...text.matchAll(/(?:from\s+|require(?:\.resolve)?\(|import\(|^import\s+)\s*['"]([^'"]+)['"]/gm)].map((match) => match[1]);
    return [file, named];
  });
}

/** Files of `dir` that import a module `rule` refuses, with what they import. */
function breaking(dir: string, rule: (module: string, file: string) => boolean): string[] {
  return importsUnder(dir).flatMap(([file, modules]) => modules.filter((module) => rule(module, file)).map((module) => `${file} imports ${module}`));
}

const resolved = (file: string, module: string) => (module.startsWith('.') ? path.relative(ROOT, path.resolve(ROOT, path.dirname(file), module)) : module);

describe('what each folder may import', () => {
  it('reaches Cube only in src/cube/engine/', () => {
    expect(breaking('src', (module, file) => module.startsWith('@cubejs-backend/') && !file.startsWith('src/cube/engine/'))).toEqual([]);
  });

  it('keeps query admission apart from the HTTP layer and the warehouse', () => {
    expect(breaking('src/query', (module, file) => /^src\/(http|warehouse)\//.test(resolved(file, module)))).toEqual([]);
  });

  it('keeps bench/ off test/', () => {
    expect(breaking('bench', (module, file) => resolved(file, module).startsWith('test/'))).toEqual([]);
  });

  it('keeps src/ off test/ and bench/', () => {
    expect(breaking('src', (module, file) => /^(test|bench)\//.test(resolved(file, module)))).toEqual([]);
  });
});

describe('chDB’s allocator options', () => {
  // libchdb reads JE_MALLOC_CONF once, when it loads (src/warehouse/allocator.ts): a file that imports chdb before
  // the allocator module ran the engine with other options (the export benchmark measured with them for a day).
  // The service's and the benchmarks' files; the tests' oracles need no allocator of the service's.
  it('are set before chdb is imported, in every file of the service and the benchmarks that imports it', () => {
    const late = ['src', 'bench'].flatMap((dir) =>
      importsUnder(dir)
        .filter(([, modules]) => modules.some((module) => /^chdb(\/|$)/.test(module)))
        .filter(([file, modules]) => {
          const allocator = modules.findIndex((module) => resolved(file, module) === 'src/warehouse/allocator');
          return allocator < 0 || allocator > modules.findIndex((module) => /^chdb(\/|$)/.test(module));
        })
        .map(([file]) => file),
    );
    expect(late).toEqual([]);
  });
});
