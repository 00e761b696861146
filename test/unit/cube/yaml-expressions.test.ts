import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareCompiler } from '@cubejs-backend/schema-compiler';
import { PythonParser } from '@cubejs-backend/schema-compiler/dist/src/parser/PythonParser';
import { YamlCompiler } from '@cubejs-backend/schema-compiler/dist/src/compiler/YamlCompiler';
import { cacheYamlExpressions, ExpressionCache } from '../../../src/cube/engine/yaml-expressions';

type File = { fileName: string; content: string };

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (dir: string): File[] =>
  readdirSync(dir)
    .filter((name) => /\.(yml|yaml|js)$/.test(name))
    .map((fileName) => ({ fileName, content: readFileSync(path.join(dir, fileName), 'utf8') }));
// The project's models and the integration tests' model sets: every kind of string Cube's YAML compiler reads here.
const MODEL_SETS: [string, File[]][] = [
  ['schema', read(path.join(ROOT, 'schema'))],
  ['export-schema', read(path.join(ROOT, 'test/integration/fixtures/export-schema'))],
  ['slow-schema', read(path.join(ROOT, 'test/integration/fixtures/slow-schema'))],
];

const parses = jest.spyOn(PythonParser.prototype, 'transpileToJs');
const yamlProto = YamlCompiler.prototype as unknown as { transpileAndPrepareJsFile(...args: unknown[]): File };
const transpile = jest.spyOn(yamlProto, 'transpileAndPrepareJsFile');

/** Compiles a model set; what Cube's YAML compiler made of each cube and view (the JavaScript it compiles next), and Cube's errors. */
async function compile(files: File[]): Promise<{ cubes: File[]; errors: string[] }> {
  transpile.mockClear();
  const { compiler } = prepareCompiler({ localPath: () => ROOT, dataSchemaFiles: async () => files }, { allowNodeRequire: true });
  let errors: string[] = [];
  await compiler.compile().catch((err: Error) => {
    errors = err.message.split('\n').filter((line) => line.startsWith("Can't parse"));
  });
  return { cubes: transpile.mock.results.map((result) => result.value as File), errors };
}

const tempFile = () => path.join(mkdtempSync(path.join(os.tmpdir(), 'yaml-expressions-')), 'cache', 'expressions.json');

it.each(MODEL_SETS)('%s: a process reading the cache file compiles the cubes Cube parses, without parsing a string again', async (_name, files) => {
  const file = tempFile();
  cacheYamlExpressions(new ExpressionCache(file));
  parses.mockClear();
  const parsed = await compile(files);
  expect(parsed.errors).toEqual([]);
  expect(parsed.cubes.length).toBeGreaterThan(0);
  expect(parses).toHaveBeenCalled();
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object).length).toBeGreaterThan(0);

  // Another process: a cache of its own, read from the file the first wrote.
  cacheYamlExpressions(new ExpressionCache(file));
  parses.mockClear();
  const cached = await compile(files);
  expect(parses).not.toHaveBeenCalled();
  expect(cached).toEqual(parsed);
});

it('keeps no string the parser refuses: every compile reports it', async () => {
  const files = [
    {
      fileName: 'bad.yml',
      content: 'cubes:\n  - name: Bad\n    sql_table: t\n    measures:\n      - name: count\n        type: count\n        drill_members: "id name +"\n',
    },
  ];
  const file = tempFile();
  cacheYamlExpressions(new ExpressionCache(file));
  const first = await compile(files);
  expect(first.errors).toEqual([expect.stringContaining("Can't parse python expression")]);
  cacheYamlExpressions(new ExpressionCache(file));
  expect((await compile(files)).errors).toEqual(first.errors);
  expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object)).not.toContain('id name +');
});

it('compiles as without it when its file is not JSON of its own, or cannot be written', async () => {
  const files = MODEL_SETS[1][1];
  cacheYamlExpressions(new ExpressionCache(tempFile()));
  const expected = await compile(files);

  const garbled = tempFile();
  cacheYamlExpressions(new ExpressionCache(garbled));
  await compile(files);
  writeFileSync(garbled, readFileSync(garbled, 'utf8').slice(0, 1000));
  cacheYamlExpressions(new ExpressionCache(garbled));
  expect(await compile(files)).toEqual(expected);
  writeFileSync(garbled, '["not", "a", "map"]');
  cacheYamlExpressions(new ExpressionCache(garbled));
  expect(await compile(files)).toEqual(expected);

  // A file inside a file: neither its directory nor the file can be made.
  const blocked = path.join(garbled, 'expressions.json');
  cacheYamlExpressions(new ExpressionCache(blocked));
  expect(await compile(files)).toEqual(expected);
});
