import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

/**
 * docs/architecture.md's table "What each folder may import", read from the
 * page and held against every file of src/, bench/ and test/: so the table
 * cannot say one thing while the code does another, and a row added to it
 * is enforced as written. And no circle of imports between files.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs', 'architecture.md');
const CHECKED = ['src', 'bench', 'test'];

interface Row {
  /** The folders (ending in /) and files of the row. */
  units: string[];
  /** Folders, files and packages the row names. */
  allowed: string[];
  /** "any package": its packages are not checked. */
  anyPackage: boolean;
}

/** The backquoted names of a cell, those in parentheses left out (they explain). */
function namesIn(cell: string): string[] {
  let text = cell;
  for (let previous = ''; previous !== text;) {
    previous = text;
    text = text.replace(/\([^()]*\)/g, '');
  }
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
}

function tableRows(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('What each folder may import'));
  if (section === undefined) throw new Error('docs/architecture.md has no section "What each folder may import"');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [units, allowed] = line.split('|').slice(1, 3);
      return { units: namesIn(units), allowed: namesIn(allowed), anyPackage: /any package/.test(allowed) };
    });
}

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs|cjs)$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

/** Each module a file imports, requires or re-exports, as the TypeScript compiler reads them (comments and strings aside). */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true).importedFiles.map((imported) => imported.fileName);
}

/** The project file a relative import names, or undefined for a package. */
function projectFile(from: string, module: string): string | undefined {
  if (!module.startsWith('.')) return undefined;
  const base = path.relative(ROOT, path.resolve(ROOT, path.dirname(from), module));
  const found = [base, `${base}.ts`, `${base}.js`, path.join(base, 'index.ts')].find((candidate) => existsSync(path.join(ROOT, candidate)));
  return found ?? base;
}

const isBuiltin = (module: string) => module.startsWith('node:') || builtinModules.includes(module.split('/')[0]);
const isProjectName = (name: string) => CHECKED.some((dir) => name === `${dir}/` || name.startsWith(`${dir}/`));

const rows = tableRows(readFileSync(DOCS, 'utf8'));
const units = rows.flatMap((row, index) => row.units.map((unit) => ({ unit, index })));

/** The row of a file: the row of its longest folder, or its own file's. */
function rowOf(file: string): number | undefined {
  const matching = units.filter(({ unit }) => unit === file || (unit.endsWith('/') && file.startsWith(unit)));
  return matching.sort((a, b) => b.unit.length - a.unit.length)[0]?.index;
}

/** Whether a row's name covers a file: a row's own folder its files only, any other folder everything under it, a file itself. */
function covers(name: string, file: string): boolean {
  if (!name.endsWith('/')) return name === file;
  const own = units.find(({ unit }) => unit === name);
  return own === undefined ? file.startsWith(name) : rowOf(file) === own.index;
}

function coversPackage(name: string, module: string): boolean {
  if (name.endsWith('/*')) return module.startsWith(name.slice(0, -1));
  return module === name || module.startsWith(`${name}/`);
}

const allFiles = CHECKED.flatMap(filesUnder);

describe('what each folder may import (docs/architecture.md)', () => {
  it('reads a table of rows, each naming its folders and what they may import', () => {
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) expect(row.units.length).toBeGreaterThan(0);
  });

  it('has a row for every file of src/, bench/ and test/', () => {
    expect(allFiles.filter((file) => rowOf(file) === undefined)).toEqual([]);
  });

  it('names in each row only rows above it (lower layers), so no import can go up a layer', () => {
    const upward = rows.flatMap((row, index) =>
      row.allowed
        .filter(isProjectName)
        .flatMap((name) =>
          allFiles
            .filter((file) => covers(name, file) && rowOf(file) !== index && rowOf(file)! > index)
            .map((file) => `${row.units[0]} names ${name}, which holds ${file}`),
        ),
    );
    expect(upward).toEqual([]);
  });

  it('holds every import of every file to its row', () => {
    const breaking = allFiles.flatMap((file) => {
      const row = rows[rowOf(file)!];
      return importsOf(file)
        .filter((module) => !isBuiltin(module))
        .filter((module) => {
          const target = projectFile(file, module);
          if (target === undefined) return !row.anyPackage && !row.allowed.some((name) => !isProjectName(name) && coversPackage(name, module));
          if (rowOf(target) === rowOf(file)) return false;
          return !row.allowed.some((name) => isProjectName(name) && covers(name, target));
        })
        .map((module) => `${file} imports ${module}`);
    });
    expect(breaking).toEqual([]);
  });
});

/** The strongly connected components of more than one file (Tarjan), each sorted. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop()!; ; top = stack.pop()!) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Circles of imports between files of src/, type-only imports included: there are none. */
describe('import circles', () => {
  it('has none between files of src/', () => {
    const graph = new Map(
      filesUnder('src').map((file) => [
        file,
        importsOf(file)
          .flatMap((module) => projectFile(file, module) ?? [])
          .filter((target) => target.startsWith('src/')),
      ]),
    );
    expect(circles(graph)).toEqual([]);
  });
});

describe('chDB’s allocator options', () => {
  // libchdb reads JE_MALLOC_CONF once, when it loads (src/warehouse/allocator.ts): a file that imports chdb before
  // the allocator module ran the engine with other options (the export benchmark measured with them for a day).
  // The service's and the benchmarks' files; the tests' oracles need no allocator of the service's.
  it('are set before chdb is imported, in every file of the service and the benchmarks that imports it', () => {
    const late = ['src', 'bench'].flatMap(filesUnder).filter((file) => {
      const modules = importsOf(file);
      const chdb = modules.findIndex((module) => /^chdb(\/|$)/.test(module));
      if (chdb < 0) return false;
      const allocator = modules.findIndex((module) => projectFile(file, module) === 'src/warehouse/allocator.ts');
      return allocator < 0 || allocator > chdb;
    });
    expect(late).toEqual([]);
  });
});
