import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request } from 'express';
import type { Config } from '../../../src/config';
import { resolveDateRange } from '../../../src/cube/engine/date-parser';
import { STATUS_BY_CODE } from '../../../src/http/errors';
import { admitQueries, refuseInExport, refuseMultiOnly } from '../../../src/query/admit';
import { createAdmission } from '../../../src/query/admission';
import type { ModelMembers } from '../../../src/query/members';
import { pagingOf } from '../../../src/query/paging';
import { oneQueryOf, queryOrListOf, readQueryRequest } from '../../../src/query/request';
import { ADMISSION_RULES, QueryRefusal, type AdmissionRuleName } from '../../../src/query/rules';
import { checkQuerySize, type QuerySizeLimits } from '../../../src/query/size';

const LIMITS: QuerySizeLimits = {
  maxMembers: 5,
  maxFilters: 4,
  maxQueries: 3,
  maxFilterValues: 6,
  maxValueLength: 20,
  maxTimeBuckets: 40,
  maxDepth: 8,
  maxLimit: 100,
};

const MODEL: ModelMembers = {
  measures: new Set(['Downloads.count']),
  dimensions: new Set(['Downloads.country', 'Downloads.ts', 'Downloads.episodes', 'Events.id']),
  timeDimensions: new Set(['Downloads.ts']),
  segments: new Set(['Downloads.mobile']),
  types: new Map([
    ['Downloads.count', 'number'],
    ['Downloads.country', 'string'],
    ['Downloads.ts', 'time'],
    ['Downloads.episodes', 'number'],
    ['Events.id', 'string'],
  ]),
  keyed: new Set(['Events']),
};

const asRequest = (method: 'GET' | 'POST', fields: Record<string, unknown>) =>
  (method === 'GET' ? { method, query: fields } : { method, body: fields }) as unknown as Request;

const count = 'Downloads.count';
const byDay = (dateRange: unknown) => ({ measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange }] });

/** Each case: what runs, the rule that must refuse it, and the code the spec's error table gives that rule (400s all). */
const CASES: [string, () => unknown, AdmissionRuleName, string][] = [
  ['a POST body without "query"', () => readQueryRequest(asRequest('POST', { queryType: 'multi' })), 'body', 'invalid_request'],
  ['a GET without the query parameter', () => readQueryRequest(asRequest('GET', {})), 'body', 'invalid_request'],
  ['a query that is a string', () => oneQueryOf('Downloads.count'), 'body', 'invalid_request'],
  ['an empty array of queries', () => queryOrListOf([]), 'body', 'invalid_request'],
  ['a GET query parameter that is not JSON', () => readQueryRequest(asRequest('GET', { query: '{measures' })), 'json', 'invalid_json'],
  ['queryType "single"', () => readQueryRequest(asRequest('POST', { query: {}, queryType: 'single' })), 'queryType', 'invalid_request'],
  ['an array of queries without multi', () => refuseMultiOnly([{ measures: [count] }]), 'multi', 'invalid_query'],
  [
    'a compareDateRange without multi',
    () => refuseMultiOnly({ timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last week'] }] }),
    'multi',
    'invalid_query',
  ],
  [
    'a compareDateRange in an export',
    () => refuseInExport({ timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last week', 'this week'] }] }),
    'exportOne',
    'invalid_query',
  ],
  ['four queries in an array', () => checkQuerySize([{}, {}, {}, {}], LIMITS, resolveDateRange), 'queries', 'query_too_large'],
  [
    'two ranges of a compareDateRange in each of two queries',
    () =>
      checkQuerySize(
        [byDay(undefined), byDay(undefined)].map((q) => ({ ...q, timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['today', 'yesterday'] }] })),
        LIMITS,
        resolveDateRange,
      ),
    'queries',
    'query_too_large',
  ],
  ['a limit above the maximum', () => checkQuerySize([{ limit: 101 }], LIMITS, resolveDateRange), 'limit', 'invalid_query'],
  ['a limit above the maximum, written as digits', () => checkQuerySize([{ limit: '101' }], LIMITS, resolveDateRange), 'limit', 'invalid_query'],
  [
    'six members',
    () => checkQuerySize([{ measures: [count, count, count], dimensions: ['a', 'b', 'c'] }], LIMITS, resolveDateRange),
    'members',
    'query_too_large',
  ],
  [
    'six order entries',
    () => checkQuerySize([{ order: { a: 'asc', b: 'asc', c: 'asc', d: 'asc', e: 'asc', f: 'asc' } }], LIMITS, resolveDateRange),
    'order',
    'query_too_large',
  ],
  [
    'five filters, two of them inside an "or"',
    () => checkQuerySize([{ filters: [{}, {}, { or: [{}, {}] }] }], LIMITS, resolveDateRange),
    'filters',
    'query_too_large',
  ],
  [
    'seven filter values over two filters',
    () => checkQuerySize([{ filters: [{ values: ['1', '2', '3'] }, { values: ['1', '2', '3', '4'] }] }], LIMITS, resolveDateRange),
    'filterValues',
    'query_too_large',
  ],
  [
    'a filter value of 21 characters',
    () => checkQuerySize([{ filters: [{ values: ['x'.repeat(21)] }] }], LIMITS, resolveDateRange),
    'valueLength',
    'query_too_large',
  ],
  ['a date range string of 21 characters', () => checkQuerySize([byDay('x'.repeat(21))], LIMITS, resolveDateRange), 'valueLength', 'query_too_large'],
  [
    'a day granularity over 40 days (41 buckets and more)',
    () => checkQuerySize([byDay(['2026-01-01', '2026-02-09'])], LIMITS, resolveDateRange),
    'buckets',
    'query_too_large',
  ],
  [
    'nesting nine deep',
    () => checkQuerySize([{ filters: [{ or: [{ and: [{ or: [{ values: [] }] }] }] }] }], LIMITS, resolveDateRange),
    'depth',
    'query_too_large',
  ],
  ['a limit of "2.0"', () => pagingOf([{ limit: 1 }, { limit: '2.0' }]), 'paging', 'invalid_query'],
  ['an offset of " 2"', () => pagingOf({ offset: ' 2' }), 'paging', 'invalid_query'],
  ['a measure the model lacks', () => admitQueries({ measures: ['Downloads.nope'] }, MODEL, resolveDateRange), 'knownMembers', 'invalid_query'],
  ['an inherited property as a member', () => admitQueries({ dimensions: ['Downloads.__proto__'] }, MODEL, resolveDateRange), 'knownMembers', 'invalid_query'],
  [
    'an order key that is no member',
    () => admitQueries({ measures: [count], order: { 'Downloads.nope': 'asc' } }, MODEL, resolveDateRange),
    'knownMembers',
    'invalid_query',
  ],
  [
    'an order by a measure the query does not return',
    () => admitQueries({ dimensions: ['Downloads.country'], order: { [count]: 'desc' } }, MODEL, resolveDateRange),
    'orderedMembers',
    'invalid_query',
  ],
  [
    'an order by a dimension the query does not return, in the array form',
    () =>
      admitQueries(
        {
          measures: [count],
          order: [
            [count, 'desc'],
            ['Downloads.country', 'asc'],
          ],
        },
        MODEL,
        resolveDateRange,
      ),
    'orderedMembers',
    'invalid_query',
  ],
  [
    'an order by a time dimension the query only filters on',
    () =>
      admitQueries(
        { measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'last week' }], order: { 'Downloads.ts': 'asc' } },
        MODEL,
        resolveDateRange,
      ),
    'orderedMembers',
    'invalid_query',
  ],
  [
    'a nested filter on an unknown member',
    () => admitQueries({ filters: [{ or: [{ member: 'Nope.x', operator: 'set' }] }] }, MODEL, resolveDateRange),
    'knownMembers',
    'invalid_query',
  ],
  ['an unknown segment', () => admitQueries({ segments: ['Downloads.desktop'] }, MODEL, resolveDateRange), 'knownMembers', 'invalid_query'],
  ['a dimension in measures', () => admitQueries({ measures: ['Downloads.country'] }, MODEL, resolveDateRange), 'memberKinds', 'invalid_query'],
  [
    'an unknown granularity',
    () => admitQueries({ measures: [count], dimensions: ['Downloads.ts.weekly'] }, MODEL, resolveDateRange),
    'granularities',
    'invalid_query',
  ],
  [
    'a word compared with a measure',
    () => admitQueries({ measures: [count], filters: [{ member: count, operator: 'gt', values: ['lots'] }] }, MODEL, resolveDateRange),
    'numberValues',
    'invalid_query',
  ],
  [
    'an unknown filter operator',
    () => admitQueries({ filters: [{ member: 'Downloads.country', operator: 'like', values: ['x'] }] }, MODEL, resolveDateRange),
    'operators',
    'invalid_query',
  ],
  [
    'contains on a number',
    () => admitQueries({ filters: [{ member: 'Downloads.episodes', operator: 'contains', values: ['1'] }] }, MODEL, resolveDateRange),
    'memberKinds',
    'invalid_query',
  ],
  [
    'a date operator on a text dimension',
    () => admitQueries({ filters: [{ member: 'Downloads.country', operator: 'afterDate', values: ['2026-01-01'] }] }, MODEL, resolveDateRange),
    'memberKinds',
    'invalid_query',
  ],
  [
    'a text dimension as a time dimension',
    () =>
      admitQueries(
        { measures: [count], timeDimensions: [{ dimension: 'Downloads.country', granularity: 'day', dateRange: 'last week' }] },
        MODEL,
        resolveDateRange,
      ),
    'memberKinds',
    'invalid_query',
  ],
  [
    'measureFilter on a dimension',
    () => admitQueries({ filters: [{ member: 'Downloads.country', operator: 'measureFilter' }] }, MODEL, resolveDateRange),
    'memberKinds',
    'invalid_query',
  ],
  [
    'gt with null',
    () => admitQueries({ filters: [{ member: 'Downloads.episodes', operator: 'gt', values: [null] }] }, MODEL, resolveDateRange),
    'nullValues',
    'invalid_query',
  ],
  [
    'startsWith with null',
    () => admitQueries({ filters: [{ member: 'Downloads.country', operator: 'startsWith', values: [null] }] }, MODEL, resolveDateRange),
    'nullValues',
    'invalid_query',
  ],
  ['an unknown time zone', () => admitQueries({ measures: [count], timezone: 'Mars/Olympus' }, MODEL, resolveDateRange), 'timezone', 'invalid_query'],
  ['a time zone in the wrong case', () => admitQueries({ measures: [count], timezone: 'utc' }, MODEL, resolveDateRange), 'timezone', 'invalid_query'],
  [
    'timeDimensions as an object',
    () => admitQueries({ measures: [count], timeDimensions: { dimension: 'Downloads.ts' } }, MODEL, resolveDateRange),
    'timeDimensions',
    'invalid_query',
  ],
  [
    'a time dimension that is a string',
    () => admitQueries({ measures: [count], timeDimensions: ['Downloads.ts'] }, MODEL, resolveDateRange),
    'timeDimensions',
    'invalid_query',
  ],
  [
    'an empty compareDateRange',
    () => admitQueries({ measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: [] }] }, MODEL, resolveDateRange),
    'compareDateRange',
    'invalid_query',
  ],
  [
    'a date filter value that is not on the calendar',
    () => admitQueries({ filters: [{ member: 'Downloads.ts', operator: 'afterDate', values: ['2026-02-30'] }] }, MODEL, resolveDateRange),
    'dateFilters',
    'invalid_query',
  ],
  ['an empty or, nested', () => admitQueries({ filters: [{ and: [{ or: [] }] }] }, MODEL, resolveDateRange), 'emptyOr', 'invalid_query'],
  [
    'gt with two values',
    () => admitQueries({ filters: [{ member: 'Downloads.episodes', operator: 'gt', values: ['5', '100'] }] }, MODEL, resolveDateRange),
    'oneValue',
    'invalid_query',
  ],
  [
    'equals on a time dimension with a value that is not a time',
    () => admitQueries({ filters: [{ member: 'Downloads.ts', operator: 'equals', values: ['2026-11-01T10:00:00', 'yesterday'] }] }, MODEL, resolveDateRange),
    'dateFilters',
    'invalid_query',
  ],
  [
    'lt on a time dimension with a number',
    () => admitQueries({ filters: [{ member: 'Downloads.ts', operator: 'lt', values: [1767225600] }] }, MODEL, resolveDateRange),
    'dateFilters',
    'invalid_query',
  ],
  [
    'beforeDate with two dates',
    () => admitQueries({ filters: [{ member: 'Downloads.ts', operator: 'beforeDate', values: ['2026-01-01', '2026-01-02'] }] }, MODEL, resolveDateRange),
    'dateFilters',
    'invalid_query',
  ],
  ['a date range of month 13', () => admitQueries(byDay(['2026-13-01', '2026-13-02']), MODEL, resolveDateRange), 'dateRanges', 'invalid_query'],
  ['a phrase with a date that does not exist', () => admitQueries(byDay('from 2026-13-01 to now'), MODEL, resolveDateRange), 'dateRanges', 'invalid_query'],
  [
    'a compareDateRange range of three dates',
    () =>
      admitQueries(
        { measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: [['2026-01-01', '2026-01-02', '2026-01-03']] }] },
        MODEL,
        resolveDateRange,
      ),
    'dateRanges',
    'invalid_query',
  ],
  [
    'an array whose second query has no granularity',
    () => admitQueries([byDay('last week'), { measures: [count] }], MODEL, resolveDateRange),
    'blending',
    'invalid_query',
  ],
  [
    'ungrouped on a cube without a key',
    () => admitQueries({ dimensions: ['Downloads.country'], ungrouped: true }, MODEL, resolveDateRange),
    'ungrouped',
    'invalid_query',
  ],
];

function refusalOf(run: () => unknown): QueryRefusal | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    if (err instanceof QueryRefusal) return err;
    throw err;
  }
}

describe('query admission: one error type, one table of rules', () => {
  it.each(CASES)('refuses %s by its rule, with its code', (_, run, rule, code) => {
    const refusal = refusalOf(run);
    expect({ rule: refusal?.rule, code: refusal?.code }).toEqual({ rule, code });
  });

  it('has a case for every rule of the table', () => {
    const covered = new Set(CASES.map(([, , rule]) => rule));
    expect(Object.keys(ADMISSION_RULES).filter((rule) => !covered.has(rule as AdmissionRuleName))).toEqual([]);
  });

  it('names the setting of a bounded rule in its message, so a client knows what to ask the operator', () => {
    for (const [, run, rule] of CASES) {
      const { setting } = ADMISSION_RULES[rule] as { setting?: string };
      if (setting !== undefined) expect(refusalOf(run)?.message).toContain(`(${setting})`);
    }
  });

  it("answers every refusal 400: the query is the client's mistake", () => {
    for (const { code } of Object.values(ADMISSION_RULES)) expect(STATUS_BY_CODE[code]).toBe(400);
  });

  it("refuses an export's limit below 1 by the paging rule, before the models are asked", async () => {
    const admission = createAdmission(LIMITS as Config['query'], { members: () => Promise.reject(new Error('asked')), readDateRange: resolveDateRange });
    const admitted = admission.admit('export', asRequest('POST', { query: { measures: [count], limit: 0 } }));
    await expect(admitted).rejects.toMatchObject({ name: 'QueryRefusal', rule: 'paging', code: 'invalid_query' });
  });

  it('admits what is within every rule', () => {
    const query = {
      measures: [count],
      dimensions: ['Downloads.country'],
      segments: ['Downloads.mobile'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: ['2026-01-01', '2026-01-30'] }],
      filters: [
        {
          or: [
            { member: 'Downloads.country', operator: 'contains', values: ['U'] },
            { member: 'Downloads.ts', operator: 'afterDate', values: ['2026-01-02'] },
          ],
        },
      ],
      order: { 'Downloads.count': 'desc' },
      timezone: 'America/New_York',
      limit: '100',
    };
    expect(() => checkQuerySize([query], LIMITS, resolveDateRange)).not.toThrow();
    expect(() => admitQueries(pagingOf(query), MODEL, resolveDateRange)).not.toThrow();
    expect(() => admitQueries([byDay('last week'), byDay('this week')], MODEL, resolveDateRange)).not.toThrow();
    expect(() => admitQueries({ dimensions: ['Events.id'], ungrouped: true }, MODEL, resolveDateRange)).not.toThrow();
    const filtered = (filters: unknown[]) => admitQueries({ measures: [count], filters }, MODEL, resolveDateRange);
    expect(() => filtered([{ member: 'Downloads.ts', operator: 'equals', values: ['2026-01-02', '2026-01-03T10:00:00.000', null] }])).not.toThrow();
    expect(() => filtered([{ member: 'Downloads.ts', operator: 'gt', values: ['2026-01-02T10:00:00Z'] }])).not.toThrow();
    expect(() => filtered([{ member: 'Downloads.episodes', operator: 'lte', values: [100] }])).not.toThrow();
    expect(() => filtered([{ and: [] }])).not.toThrow();
    // A time dimension is returned when grouped by a granularity, in either form.
    expect(() => admitQueries({ ...byDay('last week'), order: { 'Downloads.ts': 'asc' } }, MODEL, resolveDateRange)).not.toThrow();
    expect(() =>
      admitQueries({ measures: [count], dimensions: ['Downloads.ts.day'], order: [['Downloads.ts', 'asc']] }, MODEL, resolveDateRange),
    ).not.toThrow();
    expect(() => refuseMultiOnly(query)).not.toThrow();
    expect(() => refuseInExport(query)).not.toThrow();
  });
});

describe("docs/reference/query-language.md's table of admission rules", () => {
  it('is the table of src/query/rules.ts, row for row', () => {
    const doc = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'query-language.md'), 'utf8');
    const [, written = ''] = /<!-- admission-rules -->\n([\s\S]*?)\n<!-- \/admission-rules -->/.exec(doc) ?? [];
    const rows = Object.entries(ADMISSION_RULES).map(([rule, { code, stage, asks, ...bound }]) => {
      const { setting } = bound as { setting?: string };
      return `| \`${rule}\` | ${stage} | \`${STATUS_BY_CODE[code]} ${code}\` | ${setting ? `\`${setting}\`` : '–'} | ${asks} |`;
    });
    const expected = ['| Rule | Stage | Answer | Setting | What it asks |', '|---|---|---|---|---|', ...rows].join('\n');
    // On a failure, the expected text is what goes between the markers.
    expect(written).toBe(expected);
  });
});
