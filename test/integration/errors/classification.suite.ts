import path from 'node:path';
import { expectEnvelope } from '../limits/envelope';
import { openOracle, startService, type TestService } from '../support/service';
import { load } from '../support/api';

/**
 * A database error is the client's only when the query's own values caused
 * it (400, with ClickHouse's sentence); a mistake of the model or the engine
 * is the service's failure: 500 with a generic sentence, the detail in the
 * log only. The model mistakes are real: the models validate at start-up,
 * then the table one cube reads and the column one dimension reads are
 * dropped, as an operator might.
 */

const BROKEN_SCHEMA = path.join(__dirname, '..', 'fixtures', 'broken-schema');

let service: TestService;
let demo: TestService;
const lines: Record<string, unknown>[] = [];
beforeAll(async () => {
  const oracle = openOracle();
  try {
    await oracle.rows('CREATE DATABASE IF NOT EXISTS broken_probe');
    await oracle.rows('CREATE OR REPLACE TABLE broken_probe.vanishing_table (number UInt64) ENGINE = MergeTree ORDER BY number');
    await oracle.rows(
      'CREATE OR REPLACE TABLE broken_probe.numbers ENGINE = MergeTree ORDER BY number AS SELECT number, toString(number) AS vanishing_column FROM numbers(10)',
    );
    service = await startService({}, { schemaPath: BROKEN_SCHEMA, log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    await oracle.rows('DROP TABLE broken_probe.vanishing_table');
    await oracle.rows('ALTER TABLE broken_probe.numbers DROP COLUMN vanishing_column');
  } finally {
    await oracle.close();
  }
  demo = await startService();
});
afterAll(async () => {
  await service.close();
  await demo.close();
});

it.each([
  ['a table that no longer exists', { measures: ['Broken.count'] }, /vanishing_table/],
  ['a column that no longer exists', { measures: ['Numbers.count'], dimensions: ['Numbers.missing'] }, /vanishing_column/],
])('%s in the model: 500 internal, the detail in the log only', async (_label, query, detail) => {
  const res = await load(service, query);
  expectEnvelope(res, 'internal');
  expect(res.body.error).not.toMatch(detail);
  const logged = lines.filter((line) => line.level === 'error' && line.requestId === res.body.requestId);
  expect(logged).toHaveLength(1);
  expect(JSON.stringify(logged[0])).toMatch(detail);
});

it('the same model answers a sound query', async () => {
  const res = await load(service, { measures: ['Numbers.count'] }).expect(200);
  expect(res.body.data).toEqual([{ 'Numbers.count': '10' }]);
});

describe('query mistakes that only the database would find: 400', () => {
  it.each([
    ['contains on a number measure', 'Downloads.count', 'contains', /filters\[0\]: the contains filter compares text; Downloads\.count is of type number/],
    [
      'startsWith on a boolean dimension',
      'LinksDashboard.isUniqueLinkView',
      'startsWith',
      /startsWith filter compares text; LinksDashboard\.isUniqueLinkView is of type boolean/,
    ],
    ['notEndsWith on a time dimension', 'Downloads.ts', 'notEndsWith', /Downloads\.ts is of type time/],
  ])('%s', async (_label, member, operator, message) => {
    expectEnvelope(await load(demo, { measures: ['Downloads.count'], filters: [{ member, operator, values: ['1'] }] }), 'invalid_query', message);
  });

  it.each(['contains', 'notStartsWith'])('%s with a null value (Cube would write SQL that does not parse)', async (operator) => {
    const res = await load(demo, {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country'],
      filters: [{ member: 'Downloads.country', operator, values: [null] }],
    });
    expectEnvelope(res, 'invalid_query', new RegExp(`filters\\[0\\]: the ${operator} filter needs text values, not null`));
  });

  it('a time zone in the wrong case, which Intl accepts and ClickHouse does not', async () => {
    const query = {
      measures: ['WebEventsFromPodcastFunnel.conversionsPercent'],
      filters: [{ member: 'WebEventsFromPodcastFunnel.step', operator: 'in', values: ['x'] }],
      timezone: 'utc',
      total: true,
    };
    expectEnvelope(await load(demo, query), 'invalid_query', /"utc".*case-sensitive.*"UTC"/);
  });

  it('a boolean filter value that is not a boolean', async () => {
    const res = await load(demo, {
      measures: ['LinksDashboard.count'],
      filters: [{ member: 'LinksDashboard.isUniqueLinkView', operator: 'equals', values: ['9999-12-31'] }],
    });
    expectEnvelope(res, 'invalid_query', /could not use a value of the query: Cannot parse boolean value/);
    expect(res.body.error).not.toMatch(/In scope|query id/);
  });

  // A bound on filter values before Cube may answer this first, with the same code.
  it('filter values that make the SQL longer than ClickHouse accepts (max_query_size): 400 query_too_large', async () => {
    const values = Array.from({ length: 4000 }, (_, i) => String(i));
    expectEnvelope(
      await load(demo, { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'contains', values }] }),
      'query_too_large',
    );
  });
});
