import { expectEnvelope } from '../limits/envelope';
import { withOwnService } from '../support/default-service';
import { load, send } from '../support/api';

/**
 * Mistakes a client can fix from the answer alone (issue 40 §4), on the
 * real service: Cube 0.33 answered them with ClickHouse's "Cannot parse
 * Float64 from String", its own "'country' not found for path
 * 'Downloads.country'", a raw regular expression of granularities that left
 * out quarter, and "The request body is not valid JSON." without a place.
 * The rules themselves are unit-tested in test/unit/query/member-errors.test.ts.
 */

const suite = withOwnService();

const post = (path: string, body: string) => send(suite.service, 'post', path).type('json').send(body);

describe('a filter value a number member cannot take', () => {
  it.each([
    ['Downloads.count', 'gt', 'lots'],
    ['Downloads.count', 'in', 'many'],
    ['WebEvents.se_value', 'lte', 'twenty'],
    ['WebEvents.se_value', 'equals', '20 EUR'],
  ])('%s %s "%s": 400 naming the filter and the value', async (member, operator, value) => {
    const measure = member.startsWith('WebEvents') ? 'WebEvents.count' : 'Downloads.count';
    const res = await load(suite.service, { measures: [measure], filters: [{ member, operator, values: [value] }] });
    expectEnvelope(
      res,
      'invalid_query',
      new RegExp(`^filters\\[0\\]: the ${operator} filter on ${member.replace('.', '\\.')} compares numbers; "${value}" is not one`),
    );
    expect(res.body.error).not.toMatch(/Float64|Cannot parse/);
  });

  it('a number written as a string still filters', async () => {
    const res = await load(suite.service, {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country'],
      filters: [{ member: 'Downloads.count', operator: 'gt', values: ['1'] }],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
  });
});

describe('a member in the wrong list', () => {
  it.each([
    [{ measures: ['Downloads.country'] }, 'measures[0]: "Downloads.country" is a dimension, not a measure: list it in "dimensions".'],
    [{ measures: ['Downloads.ts.day'] }, 'measures[0]: "Downloads.ts.day" is a time dimension by day, not a measure'],
    [
      { measures: ['Downloads.count'], dimensions: ['Downloads.count'] },
      'dimensions[0]: "Downloads.count" is a measure, not a dimension or a time dimension: list it in "measures".',
    ],
    [
      { measures: ['Downloads.count'], segments: ['Downloads.country'] },
      'segments[0]: "Downloads.country" is a dimension, not a segment: list it in "dimensions".',
    ],
  ])('%j', async (query, message) => {
    const res = await load(suite.service, query);
    expectEnvelope(res, 'invalid_query');
    expect(res.body.error).toContain(message);
    expect(res.body.error).not.toMatch(/not found for path/);
  });
});

it('an unknown member: the closest names of the models', async () => {
  const res = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['Downloads.contry'] });
  expectEnvelope(
    res,
    'invalid_query',
    /^dimensions\[0\]: "Downloads\.contry" is not a member of the model; did you mean "Downloads\.country" \(a dimension\)\?/,
  );
  const bare = await load(suite.service, { measures: ['Downloads.count'], dimensions: ['continent'] });
  expectEnvelope(bare, 'invalid_query', /did you mean "Downloads\.continent" \(a dimension\)/);
});

describe('granularities', () => {
  const LIST = 'second, minute, hour, day, week, month, quarter, year';
  it.each([
    [
      { measures: ['Downloads.count'], dimensions: ['Downloads.ts.weekly'] },
      `dimensions[0]: "weekly" is not a granularity; use one of ${LIST}. Did you mean "week"?`,
    ],
    [
      { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'weekly' }] },
      `timeDimensions[0].granularity: "weekly" is not a granularity; use one of ${LIST}. Did you mean "week"?`,
    ],
    [
      { measures: ['Downloads.count'], dimensions: ['Downloads.ts.quarter'] },
      `dimensions[0]: the <Cube>.<time dimension>.<granularity> shorthand takes second, minute, hour, day, week, month, year; for quarters write {"dimension": "Downloads.ts", "granularity": "quarter"} in "timeDimensions".`,
    ],
  ])('%j', async (query, message) => {
    const res = await load(suite.service, query);
    expectEnvelope(res, 'invalid_query');
    expect(res.body.error).toBe(message);
  });

  it('quarter, as the refusal says it, answers', async () => {
    await load(suite.service, { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'quarter' }] }).expect(200);
  });
});

describe('malformed JSON: where, on every JSON route', () => {
  const BODY = '{"query": {\n  "measures": ["Downloads.count",]\n}}';
  const WHERE = 'value expected on line 2, column 34 (offset 45)';

  it.each(['/v1/data/load', '/v1/data/export', '/cubejs-api/v1/load', '/cubejs-api/v1/sql', '/cubejs-api/v1/dry-run'])('POST %s', async (path) => {
    expectEnvelope(await post(path, BODY), 'invalid_json', new RegExp(`^The request body is not valid JSON: ${WHERE.replace(/[()]/g, '\\$&')}\\.$`));
  });

  it.each(['/v1/data/load', '/v1/data/export', '/cubejs-api/v1/load'])('GET %s?query=', async (path) => {
    const res = await send(suite.service, 'get', path).query({ query: '{"measures": [Downloads.count]}' });
    expectEnvelope(res, 'invalid_json', /^The "query" URL parameter is not valid JSON: invalid symbol on line 1, column 15 \(offset 14\)\.$/);
  });

  it('JSON that is not an object', async () => {
    expectEnvelope(await post('/v1/data/load', '"Downloads.count"'), 'invalid_json', /must be a JSON object/);
  });
});
