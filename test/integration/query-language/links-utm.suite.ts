/**
 * utmSourceMedium of both Links cubes on views of an account of its own, one of each kind: source and medium, source
 * only, medium only, neither. What each reads is worked out by hand from docs/reference/models.md's rule ("source / medium", a
 * missing side "(none)", empty when both are missing), and the same rows counted by hand-written SQL over link_views
 * agree; set/notSet see the empty one as not set, like every other text member.
 */
import { UTM_SOURCE_MEDIUM_SQL } from '../support/catalog';
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { dataOf, load } from '../support/api';

const ACCOUNT = 'utm-source-medium-probe';
/** [utm_source, utm_medium, views] */
const VIEWS: [string, string, number][] = [
  ['google', 'cpc', 3],
  ['newsletter', '', 2],
  ['', 'email', 4],
  ['', '', 5],
];
const EXPECTED = { 'google / cpc': 3, 'newsletter / (none)': 2, '(none) / email': 4, '': 5 };

let service: TestService;
let oracle: Oracle;
beforeAll(async () => {
  oracle = openOracle();
  for (const [source, medium, views] of VIEWS) {
    await oracle.command(
      `INSERT INTO ${DATABASE}.link_views (account_id, ts, link, link_viewer, is_unique, utm_source, utm_medium)
       SELECT '${ACCOUNT}', toDateTime('2026-01-05 12:00:00', 'UTC'), 'https://links.example/probe', toString(number), true, '${source}', '${medium}'
       FROM numbers(${views})`,
    );
  }
  service = await startService({ RESULT_CACHE_MB: '0' }, { accounts: [ACCOUNT] });
});
afterAll(async () => {
  await service?.close();
  await oracle.command(`ALTER TABLE ${DATABASE}.link_views DELETE WHERE account_id = '${ACCOUNT}' SETTINGS mutations_sync = 2`);
  await oracle.close();
});

/** The account's rows of a load. */
const accountRows = (query: Record<string, unknown>) => dataOf<Record<string, string>>(load(service, query, { key: service.accountKeys[ACCOUNT] }));

describe.each(['LinksAdvancedAnalytics', 'LinksDashboard'])('%s.utmSourceMedium', (cube) => {
  const member = `${cube}.utmSourceMedium`;
  const counts = (rows: Record<string, string>[]) => Object.fromEntries(rows.map((r) => [r[member], Number(r[`${cube}.count`])]));

  it('reads "source / medium", "(none)" for a missing side, and nothing when both are missing', async () => {
    const bySql = await oracle.rows<{ k: string; v: string }>(
      `SELECT ${UTM_SOURCE_MEDIUM_SQL} AS k, count() AS v FROM ${DATABASE}.link_views WHERE account_id = '${ACCOUNT}' GROUP BY k`,
    );
    expect(Object.fromEntries(bySql.map((r) => [r.k, Number(r.v)]))).toEqual(EXPECTED);
    expect(counts(await accountRows({ measures: [`${cube}.count`], dimensions: [member] }))).toEqual(EXPECTED);
  });

  it('a view with neither is not set; the others are', async () => {
    const filtered = (operator: string) => accountRows({ measures: [`${cube}.count`], dimensions: [member], filters: [{ member, operator }] });
    expect(counts(await filtered('notSet'))).toEqual({ '': 5 });
    expect(counts(await filtered('set'))).toEqual({ 'google / cpc': 3, 'newsletter / (none)': 2, '(none) / email': 4 });
  });
});
