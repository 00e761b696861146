/**
 * A date that is not a date is refused with a 400 naming the member and the
 * value, wherever a query gives one (each date filter operator, at any
 * depth; a time dimension's dateRange, as dates or as a phrase; each range of
 * a compareDateRange), on both APIs. Cube 0.33 answered some of these 200
 * with 0 rows (a NULL bound in the SQL). Real dates in every form Cube reads
 * still answer, with the count of the same range written as SQL.
 */
import { expectEnvelope } from '../limits/envelope';
import { DATABASE } from '../support/constants';
import { withOwnService } from '../support/default-service';
import { load, type Response } from '../support/api';

const suite = withOwnService();

type Query = Record<string, unknown>;
const APIS = [
  { name: '/v1/data/load', send: (query: Query, multi?: boolean) => load(suite.service, query, { multi }) },
  { name: '/cubejs-api/v1/load', send: (query: Query, multi?: boolean) => load(suite.service, query, { api: 'cubejs', multi }) },
];

const NOT_DATES = ['2026-13-01', '2026-02-30', '2026-11-07T25:00:00', 'next tuesday-ish', '', '11/07/2026'];
const RANGE_OPERATORS = ['inDateRange', 'notInDateRange', 'onTheDate'];
const BOUND_OPERATORS = ['beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate'];
const count = (extra: Query): Query => ({ measures: ['Downloads.count'], ...extra });
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.each(APIS)('$name', ({ send }) => {
  describe.each(NOT_DATES)('the value %j', (bad) => {
    const named = new RegExp(`Downloads\\.ts.*${esc(JSON.stringify(bad))}|${esc(JSON.stringify(bad))}.*Downloads\\.ts`);

    it.each(RANGE_OPERATORS)('in a %s filter, either end: 400 naming the member and the value', async (operator) => {
      for (const values of [[bad, '2026-11-07'], ['2026-11-01', bad], [bad]]) {
        const res = await send(count({ filters: [{ member: 'Downloads.ts', operator, values }] }));
        expectEnvelope(res, 'invalid_query', named);
        expect(res.body.error).toMatch(/^filters\[0\]: /);
      }
    });

    it.each(BOUND_OPERATORS)('in a %s filter: 400 naming the member and the value', async (operator) => {
      const res = await send(count({ filters: [{ member: 'Downloads.ts', operator, values: [bad] }] }));
      expectEnvelope(res, 'invalid_query', named);
    });

    it('in a filter nested in or/and: 400 naming where', async () => {
      const res = await send(
        count({
          filters: [{ or: [{ member: 'Downloads.country', operator: 'set' }, { and: [{ member: 'Downloads.ts', operator: 'afterDate', values: [bad] }] }] }],
        }),
      );
      expectEnvelope(res, 'invalid_query', named);
      expect(res.body.error).toMatch(/^filters\[0\]\.or\[1\]\.and\[0\]: /);
    });

    it('in a dateRange, as either end or alone: 400 naming the member and the value', async () => {
      for (const dateRange of [[bad, '2026-11-07'], ['2026-11-01', bad], [bad]]) {
        const res = await send(count({ timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange }] }));
        expectEnvelope(res, 'invalid_query', named);
        expect(res.body.error).toMatch(/^timeDimensions\[0\]\.dateRange: /);
      }
    });

    it('in a range of a compareDateRange: 400 naming the member and the value', async () => {
      const res = await send(
        count({
          timeDimensions: [
            {
              dimension: 'Downloads.ts',
              granularity: 'day',
              compareDateRange: [
                ['2026-11-01', '2026-11-02'],
                [bad, '2026-11-07'],
              ],
            },
          ],
        }),
        true,
      );
      expectEnvelope(res, 'invalid_query', named);
      expect(res.body.error).toMatch(/^timeDimensions\[0\]\.compareDateRange\[1\]: /);
    });
  });

  it.each(['2026-13-01', 'from 2026-11-01 to 2026-13-01', 'whenever it suits you', 'from whenever to now'])(
    'the dateRange phrase %j: 400 naming the member and the phrase',
    async (phrase) => {
      const res = await send(count({ timeDimensions: [{ dimension: 'Downloads.ts', dateRange: phrase }] }));
      expectEnvelope(res, 'invalid_query', new RegExp(`^timeDimensions\\[0\\]\\.dateRange: ${esc(JSON.stringify(phrase))} .*Downloads\\.ts.*last 7 days`));
    },
  );

  it('a compareDateRange phrase that is no range: 400', async () => {
    const res = await send(count({ timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last 7 days', 'some other week'] }] }), true);
    expectEnvelope(res, 'invalid_query', /^timeDimensions\[0\]\.compareDateRange\[1\]: "some other week" .*Downloads\.ts/);
  });

  it('a value that is no string (null, a number): 400', async () => {
    for (const value of [null, 20261101]) {
      const res = await send(count({ filters: [{ member: 'Downloads.ts', operator: 'beforeDate', values: [value] }] }));
      expectEnvelope(res, 'invalid_query', /Downloads\.ts/);
    }
  });

  it('a bound operator with two dates, a range operator with three: 400 saying how many it takes', async () => {
    expectEnvelope(
      await send(count({ filters: [{ member: 'Downloads.ts', operator: 'afterDate', values: ['2026-11-01', '2026-11-02'] }] })),
      'invalid_query',
      /afterDate filter on Downloads\.ts takes 1 date; got 2/,
    );
    expectEnvelope(
      await send(count({ filters: [{ member: 'Downloads.ts', operator: 'inDateRange', values: ['2026-11-01', '2026-11-02', '2026-11-03'] }] })),
      'invalid_query',
      /inDateRange filter on Downloads\.ts takes 1 or 2 dates; got 3/,
    );
  });

  describe('dates in every form Cube reads still answer, as SQL over the same range counts', () => {
    let day: string;
    beforeAll(async () => {
      [{ day }] = await suite.oracle.rows<{ day: string }>(`SELECT toString(max(toDate(ts)) - 3) AS day FROM ${DATABASE}.downloads`);
    });
    const sqlCount = async (where: string) =>
      Number((await suite.oracle.rows<{ n: string }>(`SELECT count() AS n FROM ${DATABASE}.downloads WHERE ${where}`))[0].n);
    const answered = (res: Response) => {
      expect(res.status).toBe(200);
      const data = (res.body.data ?? res.body.results?.[0]?.data) as Record<string, string>[];
      return Number(data[0]?.['Downloads.count'] ?? 0);
    };

    it.each([
      ['a date', (d: string) => [d, d], (d: string) => `toDate(ts) = '${d}'`],
      [
        'local times with milliseconds',
        (d: string) => [`${d}T06:00:00.000`, `${d}T17:59:59.999`],
        (d: string) => `ts BETWEEN '${d} 06:00:00' AND '${d} 17:59:59'`,
      ],
      ['local times with a space, to the minute', (d: string) => [`${d} 06:00`, `${d} 18:00`], (d: string) => `ts BETWEEN '${d} 06:00:00' AND '${d} 18:00:00'`],
      ['times in UTC with Z', (d: string) => [`${d}T06:00:00Z`, `${d}T18:00:00Z`], (d: string) => `ts BETWEEN '${d} 06:00:00' AND '${d} 18:00:00'`],
    ])('%s, in an inDateRange filter and as a dateRange', async (_name, values, where) => {
      const want = await sqlCount(where(day));
      expect(want).toBeGreaterThan(0);
      expect(answered(await send(count({ filters: [{ member: 'Downloads.ts', operator: 'inDateRange', values: values(day) }] })))).toBe(want);
      expect(answered(await send(count({ timeDimensions: [{ dimension: 'Downloads.ts', dateRange: values(day) }] })))).toBe(want);
    });

    it('a leap day exists: 2024-02-29 is a date (no rows, but answered)', async () => {
      expect(answered(await send(count({ filters: [{ member: 'Downloads.ts', operator: 'inDateRange', values: ['2024-02-29', '2024-02-29'] }] })))).toBe(0);
    });

    it('relative phrases: "last 7 days", "yesterday", "from 7 days ago to now"', async () => {
      for (const dateRange of ['last 7 days', 'yesterday', 'from 7 days ago to now', 'This week']) {
        expect((await send(count({ timeDimensions: [{ dimension: 'Downloads.ts', dateRange }] }))).status).toBe(200);
      }
    });
  });
});
