import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type CubeClient from '@cubejs-client/core' with { 'resolution-mode': 'import' };
import type { CubeApi } from '@cubejs-client/core' with { 'resolution-mode': 'import' };
import { EXPECTED_SCHEMAS } from '../contract/spec-meta';
import { API_KEY, DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { daysAgo } from '../support/days';

/**
 * Cube's own JavaScript client, unchanged, pointed at /cubejs-api/v1 as its
 * documentation says (token as the first argument, sent in Authorization),
 * over real HTTP, with one account's key. Expected figures come from direct
 * SQL over that account's rows, the expected members from the spec.
 */
const ACCOUNT = 'northwind-audio';
const OTHER_ACCOUNTS = ['harbor-lane-media', 'bright-signal', 'cedar-street-studios'];
const db = DATABASE;
const mine = `account_id = '${ACCOUNT}'`;

let service: TestService;
let server: Server;
let oracle: Oracle;
let api: CubeApi;
let base: string;
const logLines: string[] = [];

// The client package is ESM with a CommonJS build; TypeScript's node16
// resolution sees only the ESM side, so the CommonJS build is required here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cube: typeof CubeClient = require('@cubejs-client/core').default;

beforeAll(async () => {
  service = await startService({}, { accounts: [ACCOUNT], log: (line) => logLines.push(line) });
  oracle = openOracle();
  server = await new Promise<Server>((resolve) => {
    const s = service.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cubejs-api/v1`;
  api = cube(service.accountKeys[ACCOUNT], { apiUrl: base });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await oracle.close();
  await service.close();
});

const dailyCounts = (table: string, days: number) =>
  oracle.rows<{ day: string; n: string }>(`
    SELECT toString(toDate(ts)) AS day, count() AS n FROM ${db}.${table}
    WHERE ${mine} AND toDate(ts) BETWEEN '${daysAgo(days)}' AND '${daysAgo(1)}' GROUP BY day ORDER BY day`);

describe('@cubejs-client/core against /cubejs-api/v1 with an account key', () => {
  it('meta(): every cube of the spec with its measures and dimensions', async () => {
    const meta = await api.meta();
    expect(meta.cubes.map((c) => c.name).sort()).toEqual(EXPECTED_SCHEMAS.map((s) => s.name).sort());
    for (const expected of EXPECTED_SCHEMAS) {
      const got = meta.cubes.find((c) => c.name === expected.name)!;
      expect(got.title).toBe(expected.title);
      expect(got.measures.map((m) => m.name).sort()).toEqual(expected.measures.map((m) => m.name).sort());
      expect(got.dimensions.map((d) => d.name).sort()).toEqual(expected.dimensions.map((d) => d.name).sort());
    }
    expect(meta.resolveMember('Downloads.count', 'measures')).toMatchObject({ title: 'Downloads Count', type: 'number' });
  });

  it("load(): tablePivot gives the account's figures of direct SQL", async () => {
    const resultSet = await api.load({ measures: ['Downloads.count'], dimensions: ['Downloads.continent'] });
    const expected = await oracle.rows<{ continent: string; n: string }>(
      `SELECT continent, count() AS n FROM ${db}.downloads WHERE ${mine} GROUP BY continent`,
    );
    const rows = resultSet.tablePivot().map((r) => [r['Downloads.continent'], Number(r['Downloads.count'])]);
    expect(rows).toHaveLength(expected.length);
    for (const { continent, n } of expected) expect(rows).toContainEqual([continent, Number(n)]);
  });

  it('load(): chartPivot and series give the daily counts of the last 7 days', async () => {
    const resultSet = await api.load({
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 7 days' }],
    });
    const expected = await dailyCounts('downloads', 7);
    expect(expected.length).toBeGreaterThan(0);
    const pivot = resultSet.chartPivot();
    expect(pivot.map((p) => [String(p.x).slice(0, 10), Number(p['Downloads.count'])])).toEqual(expected.map((e) => [e.day, Number(e.n)]));
    const [series] = resultSet.series();
    expect(series.series.map((point) => point.value)).toEqual(expected.map((e) => Number(e.n)));
  });

  it('load(): compareDateRange gives one result per range', async () => {
    const resultSet = await api.load({
      measures: ['LinksBasicAnalytics.linkViewCount'],
      timeDimensions: [{ dimension: 'LinksBasicAnalytics.timestamp', compareDateRange: ['last 7 days', 'last 14 days'] }],
    });
    const [week, fortnight] = await Promise.all(
      [7, 14].map((days) => oracle.value(`SELECT count() FROM ${db}.link_views WHERE ${mine} AND toDate(ts) BETWEEN '${daysAgo(days)}' AND '${daysAgo(1)}'`)),
    );
    expect(week).toBeGreaterThan(0);
    const totals = resultSet.decompose().map((r) => Number(r.rawData()[0]?.['LinksBasicAnalytics.linkViewCount'] ?? 0));
    expect(totals).toEqual([week, fortnight]);
  });

  it('load(): an array of queries is blended by day, each query with its own figures', async () => {
    const resultSet = await api.load([
      { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 7 days' }] },
      {
        measures: ['LinksBasicAnalytics.linkViewCount'],
        timeDimensions: [{ dimension: 'LinksBasicAnalytics.timestamp', granularity: 'day', dateRange: 'last 7 days' }],
      },
    ]);
    const [downloads, views] = resultSet.decompose();
    const byDay = (rows: Record<string, unknown>[], time: string, measure: string) =>
      rows.map((r) => [String(r[time]).slice(0, 10), Number(r[measure])]).filter(([, n]) => n !== 0);
    expect(byDay(downloads.rawData(), 'Downloads.ts.day', 'Downloads.count')).toEqual((await dailyCounts('downloads', 7)).map((e) => [e.day, Number(e.n)]));
    expect(byDay(views.rawData(), 'LinksBasicAnalytics.timestamp.day', 'LinksBasicAnalytics.linkViewCount')).toEqual(
      (await dailyCounts('link_views', 7)).map((e) => [e.day, Number(e.n)]),
    );
    expect(resultSet.chartPivot().length).toBeGreaterThan(0);
  });

  it('load(): a query too long for a URL goes as a POST body and is answered alike', async () => {
    // The client switches to POST when the URL would pass 2,000 characters.
    const padding = Array.from({ length: 40 }, (_, i) => `no-such-country-${String(i).padStart(40, '0')}`);
    const resultSet = await api.load({
      measures: ['Downloads.count'],
      filters: [{ member: 'Downloads.country', operator: 'equals', values: ['Germany', 'Spain', ...padding] }],
    });
    const expected = await oracle.value(`SELECT count() FROM ${db}.downloads WHERE ${mine} AND country IN ('Germany', 'Spain')`);
    expect(expected).toBeGreaterThan(0);
    expect(Number(resultSet.rawData()[0]['Downloads.count'])).toBe(expected);
    const requests = logLines.map((line) => JSON.parse(line)).filter((l) => l.msg === 'request' && l.path === '/cubejs-api/v1/load');
    expect(requests.at(-1)).toMatchObject({ method: 'POST', status: 200 });
  });

  it("sql(): the SQL carries the key's account as a parameter, no other account", async () => {
    const sql = await api.sql({ measures: ['Downloads.count'], dimensions: ['Downloads.continent'] });
    const [text, params] = sql.rawQuery().sql as [string, unknown[]];
    expect(sql.sql()).toBe(text);
    expect(text).toMatch(/FROM downloads WHERE account_id = \?/);
    expect(params).toContain(ACCOUNT);
    for (const other of OTHER_ACCOUNTS) expect(params).not.toContain(other);
  });

  it("sql(): an operator key's SQL has no account condition", async () => {
    const operator = cube(API_KEY, { apiUrl: base });
    const [text, params] = (await operator.sql({ measures: ['Downloads.count'] })).rawQuery().sql as [string, unknown[]];
    expect(text).not.toMatch(/account_id/);
    for (const account of [ACCOUNT, ...OTHER_ACCOUNTS]) expect(params).not.toContain(account);
  });

  it('dryRun(): normalized queries, query type and pivot query of a compareDateRange query', async () => {
    const dry = await api.dryRun({
      measures: ['LinksBasicAnalytics.linkViewCount'],
      timeDimensions: [
        {
          dimension: 'LinksBasicAnalytics.timestamp',
          compareDateRange: [
            ['2026-01-01', '2026-01-07'],
            ['2026-02-01', '2026-02-07'],
          ],
        },
      ],
    });
    expect(dry.queryType).toBe('compareDateRangeQuery');
    expect(dry.normalizedQueries.map((q) => q.timeDimensions?.[0]?.dateRange)).toEqual([
      ['2026-01-01T00:00:00.000', '2026-01-07T23:59:59.999'],
      ['2026-02-01T00:00:00.000', '2026-02-07T23:59:59.999'],
    ]);
    expect(dry.pivotQuery).toMatchObject({ measures: ['LinksBasicAnalytics.linkViewCount'], queryType: 'compareDateRangeQuery' });
  });

  it('errors reach the client as a RequestError with the service message', async () => {
    await expect(api.load({ measures: ['Downloads.nope'] })).rejects.toThrow(/nope/);
    await expect(cube('wrong-key', { apiUrl: base }).meta()).rejects.toThrow(/API key/);
  });
});
