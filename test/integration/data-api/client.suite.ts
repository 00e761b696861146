import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type CubeClient from '@cubejs-client/core' with { 'resolution-mode': 'import' };
import type { CubeApi } from '@cubejs-client/core' with { 'resolution-mode': 'import' };
import { API_KEY, DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { daysAgo } from '../support/days';

/**
 * Cube's own JavaScript client, unchanged, against the running service over
 * real HTTP: it sends GET /load?query=…&queryType=multi and retries on
 * "Continue wait". Expected numbers come from direct SQL.
 */
let service: TestService;
let server: Server;
let oracle: Oracle;
let api: CubeApi;

beforeAll(async () => {
  service = await startService();
  oracle = openOracle();
  server = await new Promise<Server>((resolve) => {
    const s = service.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  api = cube('', { apiUrl: `http://127.0.0.1:${port}/v1/data`, headers: { 'x-api-key': API_KEY } });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await oracle.close();
  await service.close();
});

const db = DATABASE;

// The client package is ESM with a CommonJS build; TypeScript's node16
// resolution sees only the ESM side, so the CommonJS build is required here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cube: typeof CubeClient = require('@cubejs-client/core').default;

describe('@cubejs-client/core against the service', () => {
  it('loads a grouped query; tablePivot gives the numbers of direct SQL', async () => {
    const resultSet = await api.load({ measures: ['Downloads.count'], dimensions: ['Downloads.continent'] });
    const expected = await oracle.rows<{ continent: string; n: string }>(`SELECT continent, count() AS n FROM ${db}.downloads GROUP BY continent`);
    const rows = resultSet.tablePivot().map((r) => [r['Downloads.continent'], Number(r['Downloads.count'])]);
    expect(rows).toHaveLength(expected.length);
    for (const { continent, n } of expected) expect(rows).toContainEqual([continent, Number(n)]);
  });

  it('chartPivot and series give daily counts over the last 7 days', async () => {
    const resultSet = await api.load({
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: 'last 7 days' }],
    });
    const expected = await oracle.rows<{ day: string; n: string }>(`
      SELECT toString(toDate(ts)) AS day, count() AS n FROM ${db}.downloads
      WHERE toDate(ts) BETWEEN '${daysAgo(7)}' AND '${daysAgo(1)}' GROUP BY day ORDER BY day`);
    const pivot = resultSet.chartPivot();
    expect(pivot.map((p) => [String(p.x).slice(0, 10), Number(p['Downloads.count'])])).toEqual(expected.map((e) => [e.day, Number(e.n)]));
    const [series] = resultSet.series();
    expect(series.series.reduce((sum, point) => sum + point.value, 0)).toBe(expected.reduce((sum, e) => sum + Number(e.n), 0));
  });

  it('runs compareDateRange queries: one result per range', async () => {
    const resultSet = await api.load({
      measures: ['LinksBasicAnalytics.linkViewCount'],
      timeDimensions: [{ dimension: 'LinksBasicAnalytics.timestamp', compareDateRange: ['last 7 days', 'last 14 days'] }],
    });
    const [week, fortnight] = await Promise.all(
      [7, 14].map((days) => oracle.value(`SELECT count() FROM ${db}.link_views WHERE toDate(ts) BETWEEN '${daysAgo(days)}' AND '${daysAgo(1)}'`)),
    );
    const totals = resultSet.decompose().map((r) => Number(r.rawData()[0]?.['LinksBasicAnalytics.linkViewCount'] ?? 0));
    expect(totals).toEqual([week, fortnight]);
  });

  it('surfaces errors as a RequestError with the service message', async () => {
    await expect(api.load({ measures: ['Downloads.nope'] })).rejects.toThrow(/nope/);
  });
});
