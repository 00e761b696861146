import fc from 'fast-check';
import { transformData } from '@cubejs-backend/api-gateway/dist/src/helpers/transformData';
import * as cubeValues from '@cubejs-backend/api-gateway/dist/src/helpers/transformValue';
import { transformResultsInSlices } from '../../../src/cube/engine/request-path';

/**
 * Cube's result transform, run on slices of the rows with each distinct time
 * formatted once, against Cube's own transform of all the rows in one pass:
 * the same answer for any rows. The gateway's getResultInternal reads Cube's
 * environment, which this tier does not load, so it is stood for by what it
 * does with the rows: Cube's transformData, called as it calls it.
 */

type Row = Record<string, unknown>;
type Annotation = Record<'measures' | 'dimensions' | 'timeDimensions', Record<string, unknown>>;
const cubes = (
  _context: unknown,
  queryType: unknown,
  normalizedQuery: unknown,
  sqlQuery: { aliasNameToMember: Record<string, string> },
  annotation: Annotation,
  response: { data: unknown[] },
  responseType: unknown,
) => ({
  query: normalizedQuery,
  data: transformData(
    sqlQuery.aliasNameToMember,
    { ...annotation.measures, ...annotation.dimensions, ...annotation.timeDimensions } as never,
    response.data as never,
    normalizedQuery as never,
    queryType as never,
    responseType as never,
  ),
  annotation,
});

const aliasNameToMember = {
  downloads__city: 'Downloads.city',
  downloads__ts_day: 'Downloads.ts.day',
  downloads__ts_hour: 'Downloads.ts.hour',
  downloads__count: 'Downloads.count',
  downloads__avg: 'Downloads.avg',
};
const annotation = {
  measures: { 'Downloads.count': { type: 'number' }, 'Downloads.avg': { type: 'number' } },
  dimensions: { 'Downloads.city': { type: 'string' } },
  timeDimensions: { 'Downloads.ts.day': { type: 'time' }, 'Downloads.ts.hour': { type: 'time' }, 'Downloads.ts': { type: 'time' } },
  segments: {},
};
const query = {
  measures: ['Downloads.count', 'Downloads.avg'],
  dimensions: ['Downloads.city'],
  timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day' }],
};

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** Time values as drivers give them, and some moment reads oddly or not at all. */
const time = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 1970, max: 2100 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 31 }),
      fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 999 }),
    )
    .map(([y, m, d, h, ms]) => `${y}-${pad(m)}-${pad(d)} ${pad(h)}:00:00.${pad(ms, 3)}`),
  fc.constantFrom('2026-11-24T00:00:00.000', '2026-11-24T00:00:00Z', '2026-02-30 00:00:00', '2026-11-24', '', '1970-01-01 00:00:00'),
  fc.constant(null),
);
const value = fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null), fc.integer().map(String));
const row = fc.record({
  downloads__city: value,
  downloads__ts_day: time,
  downloads__ts_hour: time,
  downloads__count: value,
  downloads__avg: fc.oneof(fc.double(), value),
});

describe('transformResultsInSlices', () => {
  it.each(['default', 'compact'])('answers as Cube does in one pass (%s format)', async (responseType) => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 40 }), fc.integer({ min: 1, max: 9 }), async (rows, sliceRows) => {
        const gateway = { getResultInternal: cubes };
        transformResultsInSlices(gateway, sliceRows);
        const response = { data: rows, lastRefreshTime: new Date(0) };
        const expected = cubes({}, 'regularQuery', query, { aliasNameToMember }, annotation, response, responseType);
        const actual = await (gateway.getResultInternal as typeof cubes)({}, 'regularQuery', query, { aliasNameToMember }, annotation, response, responseType);
        expect(actual).toEqual(expected);
        expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 200 },
    );
  });

  it('formats each distinct time once, through the formatter Cube’s transform calls', async () => {
    const format = cubeValues.transformValue;
    const formatted: unknown[] = [];
    (cubeValues as { transformValue: typeof format }).transformValue = (value, type) => {
      formatted.push(value);
      return format(value, type);
    };
    try {
      const gateway = { getResultInternal: cubes };
      transformResultsInSlices(gateway, 2);
      const days = ['2026-11-24 00:00:00', '2026-11-25 00:00:00', '2026-11-24 00:00:00', '2026-11-25 00:00:00', '2026-11-24 00:00:00'];
      const result = (await (gateway.getResultInternal as typeof cubes)(
        {},
        'regularQuery',
        query,
        { aliasNameToMember },
        annotation,
        { data: days.map((d) => ({ downloads__ts_day: d })) },
        'default',
      )) as { data: Row[] };
      expect(result.data.map((row) => row['Downloads.ts.day'])).toEqual(days.map((d) => `${d.replace(' ', 'T')}.000`));
      expect(formatted.sort()).toEqual(['2026-11-24 00:00:00', '2026-11-25 00:00:00']);
    } finally {
      (cubeValues as { transformValue: typeof format }).transformValue = format;
    }
  });

  it('gives back Cube’s own formatter once the transform is done', async () => {
    const before = cubeValues.transformValue;
    const gateway = { getResultInternal: cubes };
    transformResultsInSlices(gateway, 2);
    await (gateway.getResultInternal as typeof cubes)(
      {},
      'regularQuery',
      query,
      { aliasNameToMember },
      annotation,
      { data: [{ downloads__ts_day: '2026-11-24 00:00:00' }, { downloads__ts_day: '2026-11-25 00:00:00' }, { downloads__ts_day: null }] },
      'default',
    );
    expect(cubeValues.transformValue).toBe(before);
  });
});
