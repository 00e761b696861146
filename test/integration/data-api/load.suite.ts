import { EXPECTED_SCHEMAS } from '../contract/spec-meta';
import { funnelStepsSql, UTM_SOURCE_MEDIUM_SQL } from '../support/catalog';
import { withOwnService } from '../support/default-service';
import { load } from '../support/api';

const suite = withOwnService();

const db = 'analytics';

const FUNNEL_STEPS_SQL = funnelStepsSql(db);

/** Every count measure of the spec, with the same count written as direct SQL. */
const COUNT_ORACLES: Record<string, string> = {
  'ChannelRanks.count': `SELECT count() FROM ${db}.channel_ranks`,
  'DownloadEvents.count': `SELECT count() FROM ${db}.downloads`,
  'Downloads.count': `SELECT count() FROM ${db}.downloads`,
  'EpisodeRanks.count': `SELECT count() FROM ${db}.episode_ranks`,
  'LinksAdvancedAnalytics.count': `SELECT count() FROM ${db}.link_views`,
  'LinksAdvancedAnalytics.linkViewCount': `SELECT count() FROM ${db}.link_views`,
  'LinksAdvancedAnalytics.uniqueLinkViewCount': `SELECT countIf(is_unique) FROM ${db}.link_views`,
  'LinksAdvancedAnalytics.openLinkViewCount': `SELECT countIf(open_param != '') FROM ${db}.link_views`,
  'LinksBasicAnalytics.linkViewCount': `SELECT count() FROM ${db}.link_views`,
  'LinksBasicAnalytics.uniqueLinkViewCount': `SELECT countIf(is_unique) FROM ${db}.link_views`,
  'LinksDashboard.count': `SELECT count() FROM ${db}.link_views`,
  'LinksDashboard.linkViewCount': `SELECT count() FROM ${db}.link_views`,
  'LinksDashboard.uniqueLinkViewCount': `SELECT countIf(is_unique) FROM ${db}.link_views`,
  'LinksDashboard.openLinkViewCount': `SELECT countIf(open_param != '') FROM ${db}.link_views`,
  'PodcastEvents.count': `SELECT count() FROM ${db}.podcast_events`,
  'WebEvents.count': `SELECT count() FROM ${db}.web_events`,
  'WebEventsFromPodcastFunnel.conversions': `SELECT sum(v) FROM (${FUNNEL_STEPS_SQL})`,
};

const countMeasures = EXPECTED_SCHEMAS.flatMap((s) => s.measures).filter((m) => m.aggType === 'count');

describe('POST /v1/data/load/ with one count measure', () => {
  it('covers every count measure of the spec', () => {
    expect(countMeasures.map((m) => m.name).sort()).toEqual(Object.keys(COUNT_ORACLES).sort());
  });

  it.each(countMeasures.map((m) => m.name))('%s returns one row keyed by the measure, a string of digits equal to direct SQL', async (measure) => {
    const res = await load(suite.service, { measures: [measure] }).expect(200);
    expect(res.body.data).toHaveLength(1);
    expect(Object.keys(res.body.data[0])).toEqual([measure]);
    const value = res.body.data[0][measure];
    expect(value).toMatch(/^\d+$/);
    const expected = await suite.oracle.value(COUNT_ORACLES[measure]);
    expect(expected).toBeGreaterThan(0);
    expect(Number(value)).toBe(expected);
  });
});

/** One grouping per cube: the dimension, and the same grouping as direct SQL (k = member value, v = count). */
const GROUPINGS = [
  { measure: 'ChannelRanks.count', dimension: 'ChannelRanks.platform', sql: `SELECT platform AS k, count() AS v FROM ${db}.channel_ranks GROUP BY k` },
  { measure: 'DownloadEvents.count', dimension: 'DownloadEvents.token', sql: `SELECT token AS k, count() AS v FROM ${db}.downloads GROUP BY k` },
  { measure: 'Downloads.count', dimension: 'Downloads.country', sql: `SELECT country AS k, count() AS v FROM ${db}.downloads GROUP BY k` },
  { measure: 'EpisodeRanks.count', dimension: 'EpisodeRanks.countryCode', sql: `SELECT country_code AS k, count() AS v FROM ${db}.episode_ranks GROUP BY k` },
  {
    measure: 'LinksAdvancedAnalytics.uniqueLinkViewCount',
    dimension: 'LinksAdvancedAnalytics.utmSourceMedium',
    sql: `SELECT ${UTM_SOURCE_MEDIUM_SQL} AS k, countIf(is_unique) AS v FROM ${db}.link_views GROUP BY k`,
  },
  {
    measure: 'LinksDashboard.linkViewCount',
    dimension: 'LinksDashboard.openParam',
    sql: `SELECT open_param AS k, count() AS v FROM ${db}.link_views GROUP BY k`,
  },
  {
    measure: 'LinksBasicAnalytics.linkViewCount',
    dimension: 'LinksBasicAnalytics.link',
    sql: `SELECT link AS k, count() AS v FROM ${db}.link_views GROUP BY k`,
  },
  { measure: 'PodcastEvents.count', dimension: 'PodcastEvents.parsedUa', sql: `SELECT parsed_ua AS k, count() AS v FROM ${db}.podcast_events GROUP BY k` },
  { measure: 'WebEvents.count', dimension: 'WebEvents.appId', sql: `SELECT app_id AS k, count() AS v FROM ${db}.web_events GROUP BY k` },
  { measure: 'WebEventsFromPodcastFunnel.conversions', dimension: 'WebEventsFromPodcastFunnel.step', sql: FUNNEL_STEPS_SQL },
];

describe.each(GROUPINGS)('$measure by $dimension', ({ measure, dimension, sql }) => {
  let expected: Map<string, number>;
  beforeAll(async () => {
    expected = new Map((await suite.oracle.rows<{ k: string; v: string }>(sql)).map((r) => [r.k, Number(r.v)]));
  });

  it('groups exactly as direct SQL does, and the groups sum to the total', async () => {
    const [grouped, total] = await Promise.all([
      load(suite.service, { measures: [measure], dimensions: [dimension] }).expect(200),
      load(suite.service, { measures: [measure] }).expect(200),
    ]);
    const actual = new Map<string, number>(grouped.body.data.map((row: Record<string, string>) => [row[dimension], Number(row[measure])]));
    expect(actual).toEqual(expected);
    const sum = [...actual.values()].reduce((a, b) => a + b, 0);
    expect(sum).toBe(Number(total.body.data[0][measure]));
  });

  it('an equals filter returns the grouped value of that member', async () => {
    const [member, count] = [...expected.entries()].sort((a, b) => b[1] - a[1])[0];
    const res = await load(suite.service, { measures: [measure], filters: [{ member: dimension, operator: 'equals', values: [member] }] }).expect(200);
    expect(res.body.data).toEqual([{ [measure]: String(count) }]);
  });
});

describe('response shape (spec 2.5, 4.2)', () => {
  it('has exactly the documented fields, and the query echoes the always-present keys', async () => {
    const res = await load(suite.service, { measures: ['ChannelRanks.avgRank', 'ChannelRanks.count'] }).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['annotation', 'data', 'lastRefreshTime', 'query', 'slowQuery', 'total']);
    expect(res.body.query).toStrictEqual({
      measures: ['ChannelRanks.avgRank', 'ChannelRanks.count'],
      dimensions: [],
      timeDimensions: [],
      timezone: 'UTC',
      order: [],
      filters: [],
    });
    expect(res.body.lastRefreshTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(res.body.slowQuery).toBe(false);
    expect(res.body.total).toBeNull();
    expect(Object.keys(res.body.annotation).sort()).toEqual(['dimensions', 'measures', 'segments', 'timeDimensions']);
    expect(res.body.annotation.dimensions).toEqual({});
    expect(res.body.annotation.segments).toEqual({});
    expect(res.body.annotation.timeDimensions).toEqual({});
  });

  it('annotates each measure with the fields of its meta entry (spec 2.2)', async () => {
    for (const name of ['ChannelRanks.avgRank', 'LinksDashboard.conversionRate', 'WebEventsFromPodcastFunnel.conversions']) {
      const res = await load(suite.service, { measures: [name] }).expect(200);
      const spec = EXPECTED_SCHEMAS.flatMap((s) => s.measures).find((m) => m.name === name)!;
      expect(res.body.annotation.measures[name]).toStrictEqual({
        title: spec.title,
        shortTitle: spec.shortTitle,
        type: spec.type,
        ...(spec.format ? { format: spec.format } : {}),
        drillMembers: spec.drillMembers,
        drillMembersGrouped: spec.drillMembersGrouped,
      });
    }
  });

  it('echoes the keys the client sent beyond the documented ones, such as limit', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['Downloads.country'], limit: 3 }).expect(200);
    expect(res.body.query.limit).toBe(3);
    expect(res.body.data.length).toBeLessThanOrEqual(3);
  });

  it('answers total as the row count when asked for it', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['Downloads.country'], total: true, limit: 2 }).expect(200);
    const countries = await suite.oracle.value(`SELECT uniqExact(country) FROM ${db}.downloads`);
    expect(res.body.total).toBe(countries);
    expect(res.body.data).toHaveLength(2);
  });

  it('finds rows in the last 7 days, because demo data ends today', async () => {
    const res = await load(suite.service, { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last 7 days' }] }).expect(
      200,
    );
    expect(Number(res.body.data[0]['Downloads.count'])).toBeGreaterThan(0);
  });
});

describe('measures that are ratios', () => {
  it('avgRank × count = rankSum', async () => {
    const res = await load(suite.service, { measures: ['ChannelRanks.avgRank', 'ChannelRanks.count', 'ChannelRanks.rankSum'] }).expect(200);
    const row = res.body.data[0];
    expect(Number(row['ChannelRanks.avgRank']) * Number(row['ChannelRanks.count'])).toBeCloseTo(Number(row['ChannelRanks.rankSum']), 3);
    expect(Number(row['ChannelRanks.rankSum'])).toBe(await suite.oracle.value(`SELECT sum(rank) FROM ${db}.channel_ranks`));
  });

  it('conversionRate = opens ÷ views × 100', async () => {
    const res = await load(suite.service, { measures: ['LinksAdvancedAnalytics.conversionRate'] }).expect(200);
    const expected = await suite.oracle.value(`SELECT 100 * countIf(open_param != '') / count() FROM ${db}.link_views`);
    expect(Number(res.body.data[0]['LinksAdvancedAnalytics.conversionRate'])).toBeCloseTo(expected, 6);
  });

  it('se_value_sum adds the structured-event values', async () => {
    const res = await load(suite.service, { measures: ['WebEvents.se_value_sum'] }).expect(200);
    const expected = await suite.oracle.value(`SELECT sum(se_value) FROM ${db}.web_events`);
    expect(Number(res.body.data[0]['WebEvents.se_value_sum'])).toBeCloseTo(expected, 2);
  });
});
