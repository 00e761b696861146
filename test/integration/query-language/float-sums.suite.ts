/**
 * Sums and averages of floats answer the number their values add up to, not
 * its binary rounding error ("61848.499999999956" for 61848.5): each is the
 * exact decimal sum (ClickHouse's Decimal arithmetic over the same rows, the
 * oracle) to the 15 significant digits a Float64 holds, on both APIs, for a
 * sum measure, a ratio of measures and a float dimension; integer measures
 * are left exact.
 */
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { dataOf, load, type Api } from '../support/api';

let service: TestService;
let oracle: Oracle;
/**
 * An app whose values add up to a sum a Float64 cannot hold in any order (ten times 0.1 is 0.9999999999999999):
 * the demo's values are prices, mostly whole, whose sums came out clean on some days' test data.
 */
const PROBE_APP = 'float-sums-probe';
beforeAll(async () => {
  oracle = openOracle();
  await oracle.command(
    `INSERT INTO ${DATABASE}.web_events (account_id, app_id, track_ts, se_category, se_action, se_value) SELECT 'float-sums', '${PROBE_APP}', now() - INTERVAL 1 DAY, 'shop', 'add_to_cart', 0.1 FROM numbers(10)`,
  );
  service = await startService({ RESULT_CACHE_MB: '0' });
});
afterAll(async () => {
  await service.close();
  await oracle.command(`ALTER TABLE ${DATABASE}.web_events DELETE WHERE app_id = '${PROBE_APP}' SETTINGS mutations_sync = 2`);
  await oracle.close();
});

type Row = Record<string, string | number | null>;

/** The exact decimal as a Float64 shows it: its 15 significant digits, no more. */
const fifteenDigits = (exact: string) => String(Number(Number(exact).toPrecision(15)));
const significantDigits = (text: string) =>
  text
    .replace(/^-?0*\.?0*/, '')
    .replace(/\./, '')
    .replace(/0+$/, '').length;

describe.each<Api>(['data', 'cubejs'])('the %s API', (api) => {
  const answer = (query: Record<string, unknown>) => dataOf<Row>(load(service, query, { api }));

  it('WebEvents.se_value_sum, in total and by app: the exact decimal sum', async () => {
    const exact = await oracle.rows<{ app: string; s: string }>(
      `SELECT app_id AS app, toString(sum(toDecimal128(se_value, 12))) AS s FROM ${DATABASE}.web_events WHERE se_value IS NOT NULL GROUP BY app_id`,
    );
    const [{ s: total }] = await oracle.rows<{ s: string }>(`SELECT toString(sum(toDecimal128(se_value, 12))) AS s FROM ${DATABASE}.web_events`);
    // The data shows the problem: a plain Float64 sum has more digits than a Float64 holds (the probe app's, always).
    const noisy = await oracle.rows<{ s: string }>(
      `SELECT toString(sum(se_value)) AS s FROM ${DATABASE}.web_events WHERE se_value IS NOT NULL GROUP BY app_id`,
    );
    expect(Math.max(...noisy.map((r) => significantDigits(r.s)))).toBeGreaterThan(15);

    const [all] = await answer({ measures: ['WebEvents.se_value_sum'] });
    expect(String(all['WebEvents.se_value_sum'])).toBe(fifteenDigits(total));

    const byApp = await answer({ measures: ['WebEvents.se_value_sum'], dimensions: ['WebEvents.appId'] });
    const want = Object.fromEntries(exact.map((r) => [r.app, fifteenDigits(r.s)]));
    const got = Object.fromEntries(
      byApp.filter((r) => r['WebEvents.se_value_sum'] !== null).map((r) => [r['WebEvents.appId'], String(r['WebEvents.se_value_sum'])]),
    );
    expect(got).toEqual(want);
  });

  it('a ratio of measures (ChannelRanks.avgRank) shows at most 15 digits', async () => {
    const ranks = await answer({ measures: ['ChannelRanks.avgRank'], dimensions: ['ChannelRanks.platform'] });
    expect(ranks.length).toBeGreaterThan(0);
    for (const row of ranks) expect(significantDigits(String(row['ChannelRanks.avgRank']))).toBeLessThanOrEqual(15);
    const exact = await oracle.rows<{ p: string; s: string }>(
      `SELECT platform AS p, toString(sum(toDecimal128(rank, 12)) / toDecimal128(count(), 12)) AS s FROM ${DATABASE}.channel_ranks GROUP BY platform`,
    );
    for (const { p, s } of exact) {
      const row = ranks.find((r) => r['ChannelRanks.platform'] === p)!;
      expect(Number(row['ChannelRanks.avgRank'])).toBeCloseTo(Number(s), 9);
    }
  });

  it('integer sums and counts stay exact', async () => {
    const [{ n }] = await oracle.rows<{ n: string }>(`SELECT toString(count()) AS n FROM ${DATABASE}.downloads`);
    const [row] = await answer({ measures: ['Downloads.count'] });
    expect(String(row['Downloads.count'])).toBe(n);
  });
});
