/**
 * Account isolation, cube by cube: an account's key reads exactly its own
 * account's rows (equal to direct SQL over `account_id = <its account>`),
 * never another account's, whatever it filters on; chart ranks stay public;
 * /meta is the same for every key; and a cached answer for one account is
 * never served to another.
 */
import { CUBES, declaredAccess, funnelStepsSql, PUBLIC_CUBES, type CubeSpec } from '../support/catalog';
import { API_KEY, DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load, meta } from '../support/api';

const db = DATABASE;
/**
 * Per account-owned cube, a dimension whose values belong to one account
 * each, and whether its rows are records an ungrouped query lists (the cubes
 * with a primary key; the others are refused).
 */
const OWNED_VALUES: Record<string, { dim: string; sql: string; ungroupedWith?: string[] }> = {
  DownloadEvents: { dim: 'token', sql: 'token' },
  Downloads: { dim: 'token', sql: 'token' },
  PodcastEvents: { dim: 'token', sql: 'token', ungroupedWith: [] },
  WebEvents: { dim: 'appId', sql: 'app_id', ungroupedWith: [] },
  LinksAdvancedAnalytics: { dim: 'link', sql: 'link' },
  LinksDashboard: { dim: 'link', sql: 'link' },
  LinksBasicAnalytics: { dim: 'link', sql: 'link' },
};

let service: TestService;
let oracle: Oracle;
let accounts: string[];

beforeAll(async () => {
  oracle = openOracle();
  accounts = (await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.downloads ORDER BY a`)).map((r) => r.a);
  service = await startService({}, { accounts });
});
afterAll(async () => {
  await service.close();
  await oracle.close();
});

async function data(key: string, query: Record<string, unknown>): Promise<Record<string, string>[]> {
  const res = await load(service, query, { key });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(query)}`);
  return res.body.data;
}

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const tableCubes = CUBES.filter((c): c is CubeSpec & { table: string } => c.accountOwned && c.table !== undefined);

describe('the dataset', () => {
  it('spreads several accounts over every account-owned table', async () => {
    expect(accounts.length).toBeGreaterThanOrEqual(3);
    for (const table of ['podcast_events', 'downloads', 'link_views', 'web_events']) {
      const present = await oracle.rows<{ a: string }>(`SELECT DISTINCT account_id AS a FROM ${db}.${table} ORDER BY a`);
      expect(present.map((r) => r.a)).toEqual(accounts);
    }
  });

  it('gives each account its own podcasts, links and websites', async () => {
    for (const [table, column] of [
      ['downloads', 'token'],
      ['link_views', 'link'],
      ['web_events', 'app_id'],
    ]) {
      const shared = await oracle.value(`SELECT count() FROM (SELECT ${column} FROM ${db}.${table} GROUP BY ${column} HAVING uniqExact(account_id) > 1)`);
      expect(shared).toBe(0);
    }
  });
});

describe('every cube is either public or isolated by account', () => {
  it("leaves no cube of /meta without its file's declaration, or untested", async () => {
    const res = await meta(service).expect(200);
    const names: string[] = res.body.schemas.map((s: { name: string }) => s.name).sort();
    expect(names.map((name) => [name, declaredAccess(name)])).toEqual(names.map((name) => [name, expect.stringMatching(/^(public|account)$/)]));
    const isolated = CUBES.filter((c) => c.accountOwned).map((c) => c.cube);
    expect([...PUBLIC_CUBES, ...isolated].sort()).toEqual(names);
  });

  it("declares the spec's chart cubes public and no other", () => {
    expect(PUBLIC_CUBES).toEqual(['ChannelRanks', 'EpisodeRanks']);
  });
});

describe.each(tableCubes)('$cube', (spec) => {
  const measures = spec.counts.map((m) => `${spec.cube}.${m}`);
  const expected = async (account: string | null, where = '1 = 1') => {
    const select = spec.counts.map((m) => `toString(${spec.countSql[m]}) AS \`${spec.cube}.${m}\``).join(', ');
    const accountWhere = account === null ? '1 = 1' : `account_id = ${quote(account)}`;
    return (await oracle.rows(`SELECT ${select} FROM ${db}.${spec.table} WHERE ${accountWhere} AND ${where}`))[0];
  };

  it("answers each account's key with that account's rows only", async () => {
    for (const account of accounts) {
      const [row] = await data(service.accountKeys[account], { measures });
      const want = await expected(account);
      expect(row).toEqual(want);
      expect(Number(row[measures[0]])).toBeGreaterThan(0);
    }
  });

  it("answers the operator key with every account's rows", async () => {
    const [row] = await data(API_KEY, { measures });
    expect(row).toEqual(await expected(null));
  });

  it("finds nothing when an account filters on another account's values, alone or in an or", async () => {
    const { dim, sql, ungroupedWith } = OWNED_VALUES[spec.cube];
    const [own, other] = accounts;
    const theirs = (
      await oracle.rows<{ v: string }>(`SELECT DISTINCT ${sql} AS v FROM ${db}.${spec.table} WHERE account_id = ${quote(other)} ORDER BY v LIMIT 50`)
    ).map((r) => r.v);
    expect(theirs.length).toBeGreaterThan(0);
    const member = `${spec.cube}.${dim}`;
    const key = service.accountKeys[own];

    const [filtered] = await data(key, { measures, filters: [{ member, operator: 'equals', values: theirs }] });
    for (const m of measures) expect(filtered[m]).toBe('0');

    const grouped = await data(key, {
      measures,
      dimensions: [member],
      filters: [
        {
          or: [
            { member, operator: 'equals', values: theirs },
            { member, operator: 'set' },
          ],
        },
      ],
    });
    const mine = new Set(
      (await oracle.rows<{ v: string }>(`SELECT DISTINCT ${sql} AS v FROM ${db}.${spec.table} WHERE account_id = ${quote(own)}`)).map((r) => r.v),
    );
    expect(grouped.length).toBe(mine.size);
    for (const row of grouped) expect(mine.has(row[member])).toBe(true);

    if (ungroupedWith) {
      const filters = [{ member, operator: 'equals', values: theirs }];
      expect(await data(key, { dimensions: [member, ...ungroupedWith], filters, ungrouped: true, limit: 50 })).toEqual([]);
    }
  });
});

describe('WebEventsFromPodcastFunnel', () => {
  const query = { measures: ['WebEventsFromPodcastFunnel.conversions'], dimensions: ['WebEventsFromPodcastFunnel.step'] };
  const steps = async (key: string) =>
    Object.fromEntries((await data(key, query)).map((r) => [r['WebEventsFromPodcastFunnel.step'], Number(r['WebEventsFromPodcastFunnel.conversions'])]));
  const oracleSteps = async (where?: string) =>
    Object.fromEntries((await oracle.rows<{ k: string; v: string }>(funnelStepsSql(db, where))).map((r) => [r.k, Number(r.v)]));

  it("counts each account's own listeners and visitors only", async () => {
    let downloaders = 0;
    for (const account of accounts) {
      const got = await steps(service.accountKeys[account]);
      expect(got).toEqual(await oracleSteps(`account_id = ${quote(account)}`));
      downloaders += got['Podcast Download'];
    }
    // An address counts once per account, so the operator's step 1 is the sum.
    expect((await steps(API_KEY))['Podcast Download']).toBe(downloaders);
  });
});

describe('the PodcastEvents → WebEvents join', () => {
  it("matches an account's raw requests with that account's web events only", async () => {
    const query = { measures: ['PodcastEvents.count'], filters: [{ member: 'WebEvents.appId', operator: 'set' }] };
    for (const account of accounts) {
      const [row] = await data(service.accountKeys[account], query);
      const want = await oracle.value(`
        SELECT count() FROM ${db}.podcast_events
        WHERE account_id = ${quote(account)}
          AND (account_id, ip4) IN (SELECT account_id, ip4 FROM ${db}.web_events WHERE account_id = ${quote(account)})`);
      expect(Number(row['PodcastEvents.count'])).toBe(want);
      expect(want).toBeGreaterThan(0);
    }
  });

  it("counts an account's web events once each, by the country of that account's requests from their address", async () => {
    const query = { measures: ['WebEvents.count'], dimensions: ['PodcastEvents.country'] };
    for (const account of accounts) {
      const got = Object.fromEntries((await data(service.accountKeys[account], query)).map((r) => [r['PodcastEvents.country'], Number(r['WebEvents.count'])]));
      const want = await oracle.rows<{ country: string; events: string }>(`
        SELECT p.country AS country, count(w.event_id) AS events
        FROM (SELECT DISTINCT account_id, ip4, country FROM ${db}.podcast_events WHERE account_id = ${quote(account)}) AS p
        LEFT JOIN (SELECT * FROM ${db}.web_events WHERE account_id = ${quote(account)}) AS w ON p.account_id = w.account_id AND p.ip4 = w.ip4
        GROUP BY p.country SETTINGS join_use_nulls = 1`);
      expect(got).toEqual(Object.fromEntries(want.map((r) => [r.country, Number(r.events)])));
      expect(want.some((r) => Number(r.events) > 0)).toBe(true);
    }
  });
});

describe('public chart cubes', () => {
  it.each(PUBLIC_CUBES)('%s: every account sees every row', async (cube) => {
    const table = CUBES.find((c) => c.cube === cube)!.table;
    const total = String(await oracle.value(`SELECT count() FROM ${db}.${table}`));
    for (const account of accounts) {
      const [row] = await data(service.accountKeys[account], { measures: [`${cube}.count`] });
      expect(row[`${cube}.count`]).toBe(total);
    }
  });
});

describe('/meta', () => {
  it('is the same for every key', async () => {
    const metaOf = async (key: string) => (await meta(service, { key }).expect(200)).body;
    const operator = await metaOf(API_KEY);
    for (const account of accounts) expect(await metaOf(service.accountKeys[account])).toEqual(operator);
  });
});

describe('the result cache', () => {
  it("never serves one account's cached answer to another", async () => {
    // A query no other test sends, so the first answer is computed and cached.
    const query = { measures: ['Downloads.count'], dimensions: ['Downloads.continent'], order: { 'Downloads.continent': 'desc' } };
    for (const account of accounts) {
      for (let round = 0; round < 2; round++) {
        const got = await data(service.accountKeys[account], query);
        const want = await oracle.rows(`
          SELECT continent AS \`Downloads.continent\`, toString(count()) AS \`Downloads.count\`
          FROM ${db}.downloads WHERE account_id = ${quote(account)} GROUP BY continent ORDER BY continent DESC`);
        expect(got).toEqual(want);
      }
    }
  });
});
