import { cubeYaml } from '../engine/schema-compiler';
import type { ModelProblem } from './problems';
import type { ModelFile, ModelSnapshot } from './snapshot';

/**
 * Names defined more than once. Cube keeps one of them without a word: a
 * YAML member list becomes an object keyed by name (the last entry wins),
 * and of two cubes with one name the later file's replaces the other, so
 * what serves depends on the order of the entries and the files. Each
 * problem names every place, so the engineer can pick the one to keep.
 */

const MEMBER_KINDS: Record<string, string> = {
  measures: 'measure',
  dimensions: 'dimension',
  segments: 'segment',
  joins: 'join',
  pre_aggregations: 'pre-aggregation',
  preAggregations: 'pre-aggregation',
};

interface Definition {
  file: string;
  line: number;
}

type Named = { name?: unknown } & Record<string, unknown>;

/** The cubes and views of a YAML file, each object with the line it starts on; none when the file does not parse (reported elsewhere). */
function yamlDefinitions(file: ModelFile): { cubes: Named[]; lineOf: (node: object) => number } {
  const opened: number[] = [];
  const positions = new WeakMap<object, number>();
  let doc: unknown;
  try {
    doc = cubeYaml.load(file.content, {
      listener(event, state) {
        if (event === 'open') opened.push(state.position);
        else {
          const position = opened.pop()!;
          if (typeof state.result === 'object' && state.result !== null) positions.set(state.result, position);
        }
      },
    });
  } catch {
    return { cubes: [], lineOf: () => 0 };
  }
  const top = (doc ?? {}) as { cubes?: unknown; views?: unknown };
  const cubes = [top.cubes, top.views]
    .flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : []))
    .filter((c): c is Named => typeof c === 'object' && c !== null);
  const lineOf = (node: object) => file.content.slice(0, positions.get(node) ?? 0).split('\n').length;
  return { cubes, lineOf };
}

/** `cube('X', …)` and `view('X', …)` of a JavaScript model, with their lines. */
function jsDefinitions(file: ModelFile): { name: string; line: number }[] {
  return [...file.content.matchAll(/\b(?:cube|view)\(\s*['"`](\w+)['"`]/g)].map((m) => ({
    name: m[1],
    line: file.content.slice(0, m.index).split('\n').length,
  }));
}

const places = (definitions: Definition[]) => {
  const files = new Set(definitions.map((d) => d.file));
  return files.size === 1
    ? `lines ${definitions.map((d) => d.line).join(' and ')} of ${definitions[0].file}`
    : definitions.map((d) => `${d.file} line ${d.line}`).join(' and ');
};

export function duplicateProblems(snapshot: ModelSnapshot): ModelProblem[] {
  const problems: ModelProblem[] = [];
  const cubes = new Map<string, Definition[]>();
  const define = (name: string, at: Definition) => cubes.set(name, [...(cubes.get(name) ?? []), at]);

  for (const file of snapshot.files) {
    if (!/\.ya?ml$/.test(file.fileName)) {
      for (const { name, line } of jsDefinitions(file)) define(name, { file: file.fileName, line });
      continue;
    }
    const { cubes: defined, lineOf } = yamlDefinitions(file);
    for (const cube of defined) {
      const cubeName = String(cube.name);
      define(cubeName, { file: file.fileName, line: lineOf(cube) });
      for (const [kind, singular] of Object.entries(MEMBER_KINDS)) {
        const members = cube[kind];
        if (!Array.isArray(members)) continue;
        const byName = new Map<string, Definition[]>();
        for (const member of members as Named[]) {
          if (typeof member !== 'object' || member === null || member.name === undefined) continue;
          const name = String(member.name);
          byName.set(name, [...(byName.get(name) ?? []), { file: file.fileName, line: lineOf(member) }]);
        }
        for (const [name, definitions] of byName) {
          if (definitions.length < 2) continue;
          problems.push({
            file: file.fileName,
            cube: cubeName,
            member: name,
            message: `the ${singular} ${name} is defined ${definitions.length} times in the cube, at ${places(definitions)}; Cube would keep only the last: remove or rename the others`,
          });
        }
      }
    }
  }

  for (const [name, definitions] of cubes) {
    if (definitions.length < 2) continue;
    problems.push({
      file: definitions[0].file,
      cube: name,
      message: `the cube ${name} is defined ${definitions.length} times, at ${places(definitions)}; Cube would serve only one of them: remove or rename the others`,
    });
  }
  return problems;
}
