/**
 * Erasure and a model's rollups (fixtures/rollup-schema: downloads by country
 * from a rollup, a table per account): after `forget` through the running
 * service, the erased account's rollup answers equal direct SQL over the
 * downloads left, and no table of the rollup database built from the erased
 * rows is left. The other account's rollup stays and keeps answering.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handOff, handOffErasure } from '../../../src/warehouse/import/inbox';
import { TRACKING_PREFIX } from '../../../src/warehouse/reference-data';
import { ROLLUP_DATABASE } from '../support/constants';
import { daysAgo } from '../support/days';
import { openOracle, startService, testDataDir, type Oracle, type TestService } from '../support/service';
import { answer, byCountry, direct, ROLLUP, ROLLUP_SCHEMA, rollupsFor, rollupTables } from '../rollups/support';

const DAY = daysAgo(1);
const ERASED = 'forget-rolled';
const KEPT = 'forget-rolled-other';
const LISTENER = '198.51.100.77';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'forget-rollups-'));

function requestsFile(account: string, ips: string[]): string {
  const file = path.join(scratch, `${account}.ndjson`);
  const lines = ips.map((ip, i) =>
    JSON.stringify({
      time: `${DAY}T03:${String(i).padStart(2, '0')}:00Z`,
      ip,
      method: 'GET',
      url: `${TRACKING_PREFIX}forget02/media.example.com/show/ep-${i}.mp3`,
      userAgent: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0',
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

let oracle: Oracle;
let service: TestService;
const query = byCountry([DAY, DAY]);
const where = (account: string) => `account_id = '${account}' AND toDate(ts) = '${DAY}'`;
const key = (account: string) => service.accountKeys[account];

/** The rollup tables there before this suite imported anything: other suites' builds. */
let earlier: Set<string>;

/**
 * The rollup tables of `account`'s context: of those built since this suite began (its accounts' and the
 * operator's), the ones whose rows count the account's downloads of DAY, which differ between the two accounts.
 */
async function tablesOf(account: string): Promise<string[]> {
  const total = Object.values(await direct(oracle, where(account))).reduce((a, b) => a + b, 0);
  const out: string[] = [];
  for (const name of (await rollupTables(oracle)).filter((t) => !earlier.has(t))) {
    if ((await oracle.value(`SELECT sum(rolled_downloads__count) FROM ${ROLLUP_DATABASE}.${name}`)) === total) out.push(name);
  }
  return out;
}

beforeAll(async () => {
  oracle = openOracle();
  earlier = new Set(await rollupTables(oracle));
  service = await startService({}, { schemaPath: ROLLUP_SCHEMA, accounts: [ERASED, KEPT], importInbox: true });
  const job = (account: string) => ({ format: 'ndjson', account, maxBadRows: 0, ignoreUnknown: false, rejectsDir: scratch });
  const files = { [ERASED]: [LISTENER, LISTENER, '198.51.100.78', '198.51.100.79'], [KEPT]: [LISTENER, '198.51.100.80', '198.51.100.81'] };
  for (const [account, ips] of Object.entries(files)) {
    expect(await handOff(testDataDir(), requestsFile(account, ips), job(account), () => {})).toMatchObject({ outcome: 'imported' });
  }
}, 180_000);

afterAll(async () => {
  await handOffErasure(testDataDir(), { kind: 'account', account: KEPT }, () => {});
  await service.close();
  oracle.close();
  rmSync(scratch, { recursive: true, force: true });
}, 180_000);

it('answers from the rollup, as direct SQL does', async () => {
  expect(await rollupsFor(service, key(ERASED), query)).toEqual([ROLLUP]);
  for (const account of [ERASED, KEPT]) expect(await answer(service, key(account), query)).toEqual(await direct(oracle, where(account)));
});

it('forget --address: the account’s rollup answers without the listener, and its build from before is gone', async () => {
  const kept = await answer(service, key(KEPT), query);
  const before = await tablesOf(ERASED);
  expect(before.length).toBeGreaterThan(0);
  const summary = await handOffErasure(testDataDir(), { kind: 'address', address: LISTENER, account: ERASED }, () => {});
  expect(summary).toMatchObject({ accounts: [ERASED] });
  const left = new Set(await rollupTables(oracle));
  expect(before.filter((name) => left.has(name))).toEqual([]);
  expect(await answer(service, key(ERASED), query)).toEqual(await direct(oracle, where(ERASED)));
  // The other account's listener of the same address stays: the erasure named one account.
  expect(await answer(service, key(KEPT), query)).toEqual(kept);
}, 120_000);

it('forget --account: no rollup table built from its rows is left, and the other account’s still answers', async () => {
  const before = await tablesOf(ERASED);
  expect(before.length).toBeGreaterThan(0);
  await handOffErasure(testDataDir(), { kind: 'account', account: ERASED }, () => {});
  const left = new Set(await rollupTables(oracle));
  expect(before.filter((name) => left.has(name))).toEqual([]);
  expect(await answer(service, key(KEPT), query)).toEqual(await direct(oracle, where(KEPT)));
}, 120_000);
