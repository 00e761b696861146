/**
 * Outside production the service watches its model directory: an edit
 * serves the next request with no restart; an edit with problems is logged
 * in the validate format and the last good models keep serving.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { modelDir, removeModelDirs } from './support';
import { load, meta } from '../support/api';

// Two small cubes rather than schema/: every reload compiles the directory, and a broken one twice.
const PLAYS = `# access: account
cubes:
  - name: Plays
    title: Plays
    sql: "SELECT * FROM downloads WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}"
    measures:
      - name: count
        description: Number of IAB downloads.
        type: count
        drill_members: [city, country]
    dimensions:
      - name: city
        sql: city
        type: string
      - name: country
        sql: country
        type: string
`;
const CHARTS = `# access: public
cubes:
  - name: Charts
    sql_table: channel_ranks
    measures:
      - name: count
        description: Number of chart entries.
        type: count
`;

const ACCOUNT = 'northwind-audio';
/**
 * The directory's looks, every second in production: an edit is served about two looks later, so each of this
 * suite's eleven edits waited some 2 s for nothing but the clock. What a look finds is the same at any interval.
 */
const POLL_MS = 200;
let dir: string;
let file: string;
let original: string;
let service: TestService;
let oracle: Oracle;
const lines: string[] = [];

beforeAll(async () => {
  dir = modelDir({ 'Plays.yml': PLAYS, 'Charts.yml': CHARTS });
  file = path.join(dir, 'Plays.yml');
  original = readFileSync(file, 'utf8');
  oracle = openOracle();
  service = await startService({ CUBE_MODELS_DIR: dir }, { watchModels: true, modelsPollMs: POLL_MS, accounts: [ACCOUNT], log: (line) => lines.push(line) });
});
afterAll(async () => {
  await service.close();
  await oracle.close();
  removeModelDirs();
});

type LogLine = { msg: string; level?: string; dir?: string; problems?: string[] };

/** The first log line whose message starts with `msg`, written after `from` lines; waits for it (the watcher debounces, then compiles). */
async function logged(msg: string, from: number): Promise<LogLine> {
  for (;;) {
    const found = lines
      .slice(from)
      .map((line) => JSON.parse(line) as LogLine)
      .find((line) => line.msg.startsWith(msg));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function edit(content: string, expect: 'models reloaded' | 'models not reloaded:'): Promise<LogLine> {
  const from = lines.length;
  writeFileSync(file, content);
  return logged(expect, from);
}

const playsTitle = async () => {
  const res = await meta(service).expect(200);
  return res.body.schemas.find((s: { name: string }) => s.name === 'Plays').title;
};

const accountCount = async () => {
  const res = await load(service, { measures: ['Plays.count'] }, { key: service.accountKeys[ACCOUNT] }).expect(200);
  return res.body.data[0]['Plays.count'];
};
const expectedCount = () => oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE account_id = '${ACCOUNT}'`).then(String);

it('serves a changed title in the next /meta, without a restart', async () => {
  expect(await playsTitle()).toBe('Plays');
  await edit(original.replace('title: Plays', 'title: Plays Edited'), 'models reloaded');
  expect(await playsTitle()).toBe('Plays Edited');
});

it('keeps the last good models serving after an edit that does not compile, and logs the problem', async () => {
  const failed = await edit(
    original.replace('title: Plays', 'title: Broken').replace('drill_members: [city,', 'drill_members: [nothere,'),
    'models not reloaded:',
  );
  expect(failed.problems).toEqual(['Plays.yml: Plays.count: nothere is not a member of the cube or a cube (in drillMembers)']);
  expect(await playsTitle()).toBe('Plays Edited');
  expect(await accountCount()).toBe(await expectedCount());
});

it('keeps serving the account filter after an edit that drops it', async () => {
  const leaky = original
    .replace('title: Plays', 'title: Leaky')
    .replace(/^# access: account.*\n/m, '')
    .replace(" WHERE {SECURITY_CONTEXT.accountId.filter('account_id')}", '');
  const failed = await edit(leaky, 'models not reloaded:');
  expect(failed.problems).toEqual([expect.stringMatching(/^Plays\.yml: Plays: reads analytics\.downloads, whose rows belong to accounts/)]);
  expect(await playsTitle()).toBe('Plays Edited');
  expect(await accountCount()).toBe(await expectedCount());
});

it('keeps the last good models serving after an edit that defines a member twice', async () => {
  const twice = original
    .replace('title: Plays', 'title: Twice')
    .replace('    dimensions:\n', '    dimensions:\n      - name: city\n        sql: country\n        type: string\n');
  const failed = await edit(twice, 'models not reloaded:');
  expect(failed.problems).toEqual([
    expect.stringMatching(/^Plays\.yml: Plays\.city: the dimension city is defined 2 times in the cube, at lines 12 and 15 of Plays\.yml;/),
  ]);
  expect(await playsTitle()).toBe('Plays Edited');
});

it('serves the next good edit, new members included', async () => {
  const added = '      - name: continent\n        sql: continent\n        type: string\n      - name: at\n        sql: ts\n        type: time\n';
  const withContinent = original.replace('title: Plays', 'title: Plays Again') + added;
  await edit(withContinent, 'models reloaded');
  expect(await playsTitle()).toBe('Plays Again');
  expect(await accountCount()).toBe(await expectedCount());
  const res = await load(
    service,
    {
      measures: ['Plays.count'],
      dimensions: ['Plays.continent'],
      // A date filter on the new time dimension: the service checks such filters against the members it knows.
      filters: [{ member: 'Plays.at', operator: 'afterDate', values: ['2000-01-01'] }],
      order: { 'Plays.continent': 'asc' },
    },
    { key: service.accountKeys[ACCOUNT] },
  ).expect(200);
  const want = await oracle.rows(
    `SELECT continent AS \`Plays.continent\`, toString(count()) AS \`Plays.count\` FROM ${DATABASE}.downloads WHERE account_id = '${ACCOUNT}' GROUP BY continent ORDER BY continent`,
  );
  expect(res.body.data).toEqual(want);
});

describe('whichever way a file is saved', () => {
  /** Reads /meta until `want` holds of it; a change not followed within this time fails the test. */
  async function served(want: (schemas: { name: string; title: string }[]) => boolean): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const res = await meta(service).expect(200);
      if (want(res.body.schemas)) return;
      if (Date.now() > deadline)
        throw new Error(`/meta still serves ${JSON.stringify(res.body.schemas.map((s: { name: string; title: string }) => [s.name, s.title]))}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const titled = (title: string) => served((schemas) => schemas.find((s) => s.name === 'Plays')?.title === title);

  it('follows a file saved by rename (sed -i), then written in place, created and deleted', async () => {
    // sed -i writes a new file and renames it over the old one, as many editors and git checkout do.
    execFileSync('sed', ['-i', 's/^    title: .*$/    title: Renamed Over/', file]);
    await titled('Renamed Over');
    writeFileSync(file, readFileSync(file, 'utf8').replace('title: Renamed Over', 'title: Written In Place'));
    await titled('Written In Place');
    const extraFile = path.join(dir, 'Extra.yml');
    writeFileSync(extraFile, CHARTS.replace(/Charts/g, 'Extra'));
    await served((schemas) => schemas.some((s) => s.name === 'Extra'));
    unlinkSync(extraFile);
    await served((schemas) => !schemas.some((s) => s.name === 'Extra'));
    unlinkSync(path.join(dir, 'Charts.yml'));
    await served((schemas) => !schemas.some((s) => s.name === 'Charts'));
  });

  it('logs that it cannot follow edits while the directory is gone, and follows them again once it is back', async () => {
    const from = lines.length;
    renameSync(dir, `${dir}.away`);
    try {
      expect(await logged('models directory cannot be read', from)).toMatchObject({ level: 'error', dir });
    } finally {
      renameSync(`${dir}.away`, dir);
    }
    await logged('models directory readable again', from);
    writeFileSync(file, readFileSync(file, 'utf8').replace('title: Written In Place', 'title: Back Again'));
    await titled('Back Again');
  });
});
