/**
 * Services started in one process share compiled models when their model
 * files and settings are the same (src/cube/engine/shared-compile.ts), and
 * only then: a service on other files compiles and serves its own.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { modelDir, removeModelDirs } from './support';
import { load, meta } from '../support/api';

const charts = (title: string) => `# access: public
cubes:
  - name: Charts
    title: ${title}
    sql_table: channel_ranks
    measures:
      - name: count
        description: Number of chart entries.
        type: count
`;

interface Started {
  service: TestService;
  lines: string[];
}

// Cube's own log lines about compiling are debug lines.
async function start(dir: string): Promise<Started> {
  const lines: string[] = [];
  const service = await startService({ CUBE_MODELS_DIR: dir }, { log: (line) => lines.push(line), logLevel: 'debug' });
  return { service, lines };
}

const said = ({ lines }: Started, msg: string) => lines.some((line) => (JSON.parse(line) as { msg: string }).msg === msg);

const chartsTitle = async ({ service }: Started) => {
  const res = await meta(service).expect(200);
  return res.body.schemas.find((s: { name: string }) => s.name === 'Charts').title;
};

const chartsCount = async ({ service }: Started) => {
  const res = await load(service, { measures: ['Charts.count'] }).expect(200);
  return res.body.data[0]['Charts.count'];
};

let oracle: Oracle;
let first: Started;
let second: Started;
let other: Started;

beforeAll(async () => {
  oracle = openOracle();
  const dir = modelDir({ 'Charts.yml': charts('Charts One') });
  first = await start(dir);
  second = await start(dir);
  // The same folder and file name, another content.
  writeFileSync(path.join(dir, 'Charts.yml'), charts('Charts Two'));
  other = await start(dir);
});
afterAll(async () => {
  for (const started of [first, second, other]) await started?.service.close();
  await oracle.close();
  removeModelDirs();
});

it('a second service on the same model files takes the models the first compiled, and answers as SQL does', async () => {
  expect(said(first, 'cube: Compiling schema')).toBe(true);
  expect(said(second, 'cube: Reusing compiled schema')).toBe(true);
  expect(said(second, 'cube: Compiling schema')).toBe(false);
  const expected = String(await oracle.value(`SELECT count() FROM ${DATABASE}.channel_ranks`));
  expect(await chartsCount(first)).toBe(expected);
  expect(await chartsCount(second)).toBe(expected);
});

it('a service on changed model files compiles and serves its own', async () => {
  expect(said(other, 'cube: Compiling schema')).toBe(true);
  expect(said(other, 'cube: Reusing compiled schema')).toBe(false);
  expect(await chartsTitle(other)).toBe('Charts Two');
  expect(await chartsTitle(second)).toBe('Charts One');
});
