import { cubeYaml } from '../engine/schema-compiler';
import type { ModelProblem } from './problems';
import type { ModelFile, ModelSnapshot } from './snapshot';

/**
 * Cube reports compile errors as loose strings: some name a cube ("X cube: …"),
 * some only a JavaScript stack into the transpiled model, some a member
 * reference. These functions turn each into a problem with its file, cube
 * and member, finding them in the model files when Cube does not say.
 */

// The YAML parser Cube's own YAML compiler uses, so a file it cannot read is
// reported as Cube would read it, but with the file and line it omits.

type YamlCube = { name?: unknown } & Record<string, unknown>;
const MEMBER_KINDS = ['measures', 'dimensions', 'segments', 'joins', 'pre_aggregations', 'preAggregations'];

const isYaml = (file: ModelFile) => /\.ya?ml$/.test(file.fileName);

/** Files Cube's YAML parser rejects; Cube itself stops at the first with no file name. */
export function yamlProblems(snapshot: ModelSnapshot): ModelProblem[] {
  const problems: ModelProblem[] = [];
  for (const file of snapshot.files.filter(isYaml)) {
    try {
      cubeYaml.load(file.content);
    } catch (err) {
      const e = err as { reason?: string; mark?: { line: number; column: number }; message: string };
      const at = e.mark ? ` (line ${e.mark.line + 1}, column ${e.mark.column + 1})` : '';
      problems.push({ file: file.fileName, message: `YAML syntax error: ${e.reason ?? e.message}${at}` });
    }
  }
  return problems;
}

function yamlCubes(file: ModelFile): YamlCube[] {
  try {
    const doc = cubeYaml.load(file.content) as { cubes?: unknown; views?: unknown } | null;
    return [doc?.cubes, doc?.views].flatMap((list) => (Array.isArray(list) ? (list as YamlCube[]) : []));
  } catch {
    return [];
  }
}

/** Names of the cubes and views a file defines, read from its text (for when Cube could not compile it). */
export function cubesDefinedIn(file: ModelFile): string[] {
  if (isYaml(file)) return yamlCubes(file).map((c) => String(c.name));
  return [...file.content.matchAll(/\b(?:cube|view)\(\s*['"`](\w+)['"`]/g)].map((m) => m[1]);
}

const mentions = (value: unknown, word: string): boolean => {
  if (typeof value === 'string') return new RegExp(`(^|[^\\w.])${word.replace(/\./g, '\\.')}($|[^\\w])`).test(value);
  if (Array.isArray(value)) return value.some((v) => mentions(v, word));
  if (value && typeof value === 'object') return Object.values(value).some((v) => mentions(v, word));
  return false;
};

/** The file, cube and member whose definition mentions `word` (a member reference Cube could not resolve). */
function locate(snapshot: ModelSnapshot, word: string, inFile?: string): Omit<ModelProblem, 'message'> | undefined {
  const files = snapshot.files.filter((f) => inFile === undefined || f.fileName === inFile);
  for (const file of files) {
    if (!isYaml(file)) continue;
    for (const cube of yamlCubes(file)) {
      for (const kind of MEMBER_KINDS) {
        const members = cube[kind];
        if (!Array.isArray(members)) continue;
        const hit = (members as { name?: unknown }[]).find((m) => mentions(m, word));
        if (hit) return { file: file.fileName, cube: String(cube.name), member: String(hit.name) };
      }
      if (mentions(cube, word)) return { file: file.fileName, cube: String(cube.name) };
    }
  }
  const plain = files.find((f) => f.content.includes(word));
  return plain ? { file: plain.fileName, ...onlyCube(plain) } : undefined;
}

const onlyCube = (file: ModelFile): { cube?: string } => {
  const cubes = cubesDefinedIn(file);
  return cubes.length === 1 ? { cube: cubes[0] } : {};
};

const fileNamed = (snapshot: ModelSnapshot, name: string | undefined) => snapshot.files.find((f) => f.fileName === name);

/** One entry of Cube's error reporter: `{ message, fileName? }` or an Error. */
export function problemOf(snapshot: ModelSnapshot, entry: unknown): ModelProblem {
  const raw = entry as { message?: unknown; fileName?: unknown };
  const text = String(raw?.message ?? entry);
  const lines = text.split('\n');
  let message = lines[0];
  const problem: Omit<ModelProblem, 'message'> = { file: '' };

  const context = /^(\w+) cube: (.*)$/.exec(message);
  if (context) {
    problem.cube = context[1];
    message = context[2];
    const file = snapshot.files.find((f) => cubesDefinedIn(f).includes(context[1]));
    if (file) problem.file = file.fileName;
  }
  if (typeof raw?.fileName === 'string') problem.file = raw.fileName;

  const syntax = /^Syntax error during '(.+?)' parsing: (.*)$/.exec(message);
  const plainSyntax = /^Syntax Error: (.*) in (\S+)$/.exec(message);
  if (syntax) {
    problem.file = syntax[1];
    message = `syntax error: ${syntax[2]}`;
  } else if (plainSyntax) {
    problem.file = plainSyntax[2];
    message = `syntax error: ${plainSyntax[1]}`;
  }

  // "ReferenceError: x is not defined\n    at drillMembers (A.yml:6:30)": a
  // reference to a member that does not exist, in the property of the frame.
  const frame = lines.map((l) => /^\s+at (\w+) \(([^():]+):(\d+):\d+\)$/.exec(l)).find((m) => m && fileNamed(snapshot, m[2]));
  const undefinedName = /^ReferenceError: (\w+) is not defined$/.exec(message);
  if (frame) {
    const [, property, fileName, line] = frame;
    problem.file = fileName;
    const found = undefinedName ? locate(snapshot, undefinedName[1], fileName) : undefined;
    Object.assign(problem, found ?? onlyCube(fileNamed(snapshot, fileName)!));
    const where = isYaml(fileNamed(snapshot, fileName)!) ? property : `${property}, line ${line}`;
    message = undefinedName ? `${undefinedName[1]} is not a member of the cube or a cube (in ${where})` : `${message.replace(/^\w*Error: /, '')} (in ${where})`;
  }

  const unresolved = /^([\w.]+) cannot be resolved/.exec(message);
  if (unresolved && !problem.member) Object.assign(problem, locate(snapshot, unresolved[1]) ?? {});

  // Cube's validator names the member in its message: "(measures.count.type = x) must be one of …".
  const member = /\((?:measures|dimensions|segments|joins|preAggregations)\.(\w+)/.exec(message);
  if (member && !problem.member) problem.member = member[1];

  return { ...problem, message };
}
