import { compiledModelsKey, type CompileSettings } from '../../../src/cube/engine/shared-compile';

const SETTINGS: CompileSettings = {
  allowNodeRequire: true,
  allowJsDuplicatePropsInSchema: undefined,
  standalone: true,
  preAggregationsSchema: 'analytics_rollups',
  allowUngroupedWithoutPrimaryKey: true,
  convertTzForRawTimeDimension: false,
  sqlCache: true,
  dialect: { visit: "(se_category = '')", conversion: "((se_category = 'conversion'))" },
};
const FILES = [
  { fileName: 'A.yml', content: 'cubes: []' },
  { fileName: 'B.js', content: 'cube(`B`, {})' },
];
const key = compiledModelsKey('/models', FILES, SETTINGS);

it('is the same for the same folder, files (in any order) and settings', () => {
  expect(compiledModelsKey('/models', [...FILES].reverse(), { ...SETTINGS })).toBe(key);
});

it('differs when a file, its name, the folder or a setting differs', () => {
  expect(compiledModelsKey('/models', [FILES[0], { ...FILES[1], content: 'cube(`B`, { title: "b" })' }], SETTINGS)).not.toBe(key);
  expect(compiledModelsKey('/models', [FILES[0], { ...FILES[1], fileName: 'C.js' }], SETTINGS)).not.toBe(key);
  expect(compiledModelsKey('/models', [FILES[0]], SETTINGS)).not.toBe(key);
  expect(compiledModelsKey('/other', FILES, SETTINGS)).not.toBe(key);
  for (const name of Object.keys(SETTINGS) as (keyof CompileSettings)[]) {
    expect(compiledModelsKey('/models', FILES, { ...SETTINGS, [name]: 'other' })).not.toBe(key);
  }
  // A setting's value is taken whole, its own keys included.
  expect(
    compiledModelsKey('/models', FILES, { ...SETTINGS, dialect: { visit: "(se_category = 'player')", conversion: "((se_category = 'conversion'))" } }),
  ).not.toBe(key);
});
