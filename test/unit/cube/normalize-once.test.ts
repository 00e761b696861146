import fc from 'fast-check';
import { createRequire } from 'node:module';
import { normalizeEachQueryOnce, withLocalBounds } from '../../../src/cube/engine/normalize-once';
import { FILTER_OPERATORS } from '../../../src/query/members';

type Loose = Record<string, unknown>;
type Normalize = (query: unknown, persistent: boolean) => Loose;

// The copy of Cube's query module the service's gateway loads; its own normalizeQuery taken before the change.
const fromServerCore = createRequire(require.resolve('@cubejs-backend/server-core'));
const cubeQuery = fromServerCore('@cubejs-backend/api-gateway/dist/src/query') as { normalizeQuery: Normalize };
const cubeNormalize = cubeQuery.normalizeQuery;
// Cube's answer for the query as the service hands it over: date range bounds with an offset made local times (tested apart below).
const cubes: Normalize = (query, persistent) =>
  cubeNormalize(typeof query === 'object' && query !== null ? withLocalBounds(query as Loose) : query, persistent);
normalizeEachQueryOnce();
const ours = (): Normalize => cubeQuery.normalizeQuery;

// The joi Cube's query module validates with, whose validate a query of a shape seen before never reaches.
const cubeJoi = createRequire(fromServerCore.resolve('@cubejs-backend/api-gateway/dist/src/query'))('joi') as { object(): object };
let validator: object = cubeJoi.object();
while (!Object.prototype.hasOwnProperty.call(validator, 'validate')) validator = Object.getPrototypeOf(validator) as object;

/** What a call gives: its answer, or the error it throws (class and message). */
function outcome(run: () => unknown): unknown {
  try {
    return { answer: run() };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

// Cube's operators and one it refuses.
const OPERATORS = [...FILTER_OPERATORS, 'between'];
const member = fc.constantFrom('Downloads.count', 'Downloads.country', 'Episodes.title', 'Requests.userAgent', 'bad member');
const time = fc.constantFrom('Downloads.time', 'Requests.time');
const granularity = fc.constantFrom('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year', null);
const value = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const values = fc.array(value, { maxLength: 3 });
const leaf = fc
  .record(
    { key: fc.constantFrom('member', 'dimension'), member, operator: fc.constantFrom(...OPERATORS), values },
    { requiredKeys: ['key', 'member', 'operator'] },
  )
  .map(({ key, member: name, ...rest }) => ({ [key]: name, ...rest }));
const { filter } = fc.letrec((tie) => ({
  filter: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('group')),
  group: fc.oneof(fc.record({ or: fc.array(tie('filter'), { maxLength: 3 }) }), fc.record({ and: fc.array(tie('filter'), { maxLength: 3 }) })),
}));
const andGroup = fc.record({ and: fc.array(leaf, { maxLength: 3 }) });
const dateRange = fc.oneof(
  fc.constantFrom('today', 'yesterday', 'last 7 days', 'this month', 'last week', 'from 7 days ago to now', 'this hour', 'not a date at all'),
  fc.constantFrom(
    ['2026-01-01'],
    ['2026-01-01', '2026-01-31'],
    ['2026-01-01T10:00:00', '2026-01-02T11:30:00.123'],
    ['2026-01-01', '2026-02-01T05:00:00.000'],
    ['2026-01-01T00:00:00.000Z', '2026-01-31'],
  ),
);
const timeDimension = fc.record({ dimension: time, granularity, dateRange }, { requiredKeys: ['dimension'] });
const order = fc.oneof(
  fc.dictionary(member, fc.constantFrom('asc', 'desc'), { maxKeys: 2 }),
  fc.array(fc.tuple(member, fc.constantFrom('asc', 'desc')), { maxLength: 2 }),
);
const query = fc.record(
  {
    measures: fc.array(member, { maxLength: 2 }),
    dimensions: fc.array(fc.oneof(member, fc.constantFrom('Downloads.time.day', 'Requests.time.month', 'Downloads.time.fortnight')), { maxLength: 3 }),
    timeDimensions: fc.array(timeDimension, { maxLength: 2 }),
    filters: fc.array(fc.oneof(filter, andGroup), { maxLength: 3 }),
    segments: fc.array(member, { maxLength: 1 }),
    order,
    limit: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.constant(undefined)),
    offset: fc.integer({ min: -1, max: 100 }),
    timezone: fc.constantFrom('UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Not/AZone'),
    total: fc.boolean(),
    renewQuery: fc.boolean(),
    ungrouped: fc.boolean(),
    responseFormat: fc.constantFrom('default', 'compact'),
  },
  { requiredKeys: [] },
);

describe('normalizeEachQueryOnce', () => {
  // Relative ranges are read against the clock; both paths read the same instant.
  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-26T10:15:30.250Z'), doNotFake: ['nextTick', 'setImmediate'] });
    // moment-timezone reports an unknown zone on the console as well as in the answer compared.
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('gives what Cube’s gateway gives, normalizing the first answer again, for generated queries', () => {
    let answered = 0;
    fc.assert(
      fc.property(query, fc.boolean(), (q, persistent) => {
        const expected = outcome(() => cubes(cubes(q, persistent), persistent));
        const actual = outcome(() => ours()(ours()(q, persistent), persistent));
        expect(actual).toStrictEqual(expected);
        if ('answer' in (expected as Loose)) answered++;
      }),
      { numRuns: 1500, seed: 21 },
    );
    // Most generated queries are refused somewhere; enough must get through for the answers to be compared.
    expect(answered).toBeGreaterThan(150);
  });

  it('normalizes each query as Cube does on the first call', () => {
    fc.assert(
      fc.property(query, fc.boolean(), (q, persistent) => {
        expect(outcome(() => ours()(q, persistent))).toStrictEqual(outcome(() => cubes(q, persistent)));
      }),
      { numRuns: 500, seed: 2126 },
    );
  });

  it('normalizes a query of a shape seen before (other string values, later on the clock) as Cube does, without validating it again', () => {
    const validate = jest.spyOn(validator as { validate(...args: unknown[]): unknown }, 'validate');
    const strings = fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', `\u0000strings:1`, "it's", '%_\\', 'é😀')), {
      minLength: 12,
      maxLength: 12,
    });
    const later = fc.constantFrom(0, 300, 1000, 3_600_000, 86_400_000);
    let reused = 0;
    fc.assert(
      fc.property(query, strings, later, (q, others, ms) => {
        const first = outcome(() => ours()(q, true));
        jest.advanceTimersByTime(ms);
        const again = withOtherStrings(q, others);
        const calls = validate.mock.calls.length;
        const actual = outcome(() => ours()(ours()(again, true), true));
        if ('answer' in (first as Loose) && validate.mock.calls.length === calls) reused++;
        expect(actual).toStrictEqual(outcome(() => cubes(cubes(again, true), true)));
        if (!('answer' in (first as Loose))) return;
        const answer = ours()(again, true);
        expect(answer).toStrictEqual(cubes(again, true));
        // An answer is the caller's: changing it changes no later one.
        (answer.filters as Loose[]).push({ member: 'Downloads.country', operator: 'set' });
        (answer.timeDimensions as Loose[]).length = 0;
        (answer.order as unknown[]).push(['Downloads.count', 'asc']);
        (answer.dimensions as unknown[]).push('Downloads.country');
        const third = withOtherStrings(q, others.slice().reverse());
        expect(ours()(third, true)).toStrictEqual(cubes(third, true));
      }),
      { numRuns: 800, seed: 2121 },
    );
    // Most generated queries are refused; of the 800, about 100 are answered from their shape.
    expect(reused).toBeGreaterThan(60);
  });

  it('tells shapes apart by the count, type and place of values, and keeps no answer a caller changed', () => {
    const base = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.time', dateRange: ['2026-01-01', '2026-01-31'] }] };
    const withValues = (values: unknown) => ({ ...base, filters: [{ member: 'Downloads.country', operator: 'equals', values }] });
    const first = ours()(withValues(['a']), true);
    (first.filters as Loose[])[0].values = ['changed'];
    (first.timeDimensions as Loose[])[0].dateRange = ['1999-01-01'];
    (first.order as unknown[]).push(['Downloads.count', 'desc']);
    for (const values of [
      ['b'],
      [],
      ['a', 'b'],
      [5],
      [true],
      [null],
      'a',
      '\u0000strings:1',
      ['\u0000strings:1'],
      [['a']],
      [5, '1970-01-01T00:00:00.000Z'],
      [5, new Date(0)],
      [5, 'a'],
      [5, { toJSON: () => 'a' }],
    ]) {
      expect([values, outcome(() => ours()(withValues(values), true))]).toStrictEqual([values, outcome(() => cubes(withValues(values), true))]);
    }
  });

  it('normalizes an answer again once it has been changed', () => {
    const q = {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.time.day'],
      filters: [{ dimension: 'Downloads.country', operator: 'equals', values: [7] }],
    };
    const first = ours()(q, true);
    (first.filters as Loose[]).push({ member: 'Downloads.country', operator: 'equals', values: [8] });
    first.limit = 0;
    expect(outcome(() => ours()(first, true))).toStrictEqual(outcome(() => cubes(first, true)));
    const again = ours()(q, true);
    (again.filters as Loose[])[0].values = [9];
    expect(ours()(again, true)).toStrictEqual(cubes(again, true));
  });

  it('normalizes the same answer in full when it comes back with the other persistence', () => {
    const first = ours()({ measures: ['Downloads.count'], limit: 100_000 }, true);
    expect(outcome(() => ours()(first, false))).toStrictEqual(outcome(() => cubes(first, false)));
  });
});

// Cube 0.33 wrote such a bound with moment.utc, its UTC clock time, then read it as a local time of the query's zone.
describe('date range bounds with an offset', () => {
  const range = (timezone: string, dateRange: unknown[]) => ({ timezone, timeDimensions: [{ dimension: 'Downloads.time', dateRange }] });

  it.each([
    ['America/Los_Angeles', '2026-01-01T00:00:00.000Z', '2025-12-31T16:00:00.000'],
    ['Asia/Kolkata', '2026-01-01T00:00:00Z', '2026-01-01T05:30:00.000'],
    ['America/New_York', '2026-07-01T12:00:00+02:00', '2026-07-01T06:00:00.000'],
    ['America/New_York', '2026-07-01 12:00:00.5+0200', '2026-07-01T06:00:00.500'],
    ['UTC', '2026-07-01T23:59:59.999-01:00', '2026-07-02T00:59:59.999'],
  ])('in %s, %s is the local time %s', (timezone, bound, local) => {
    expect(withLocalBounds(range(timezone, [bound, '2026-12-31']))).toEqual(range(timezone, [local, '2026-12-31']));
    // And the service's normalization hands Cube those local times.
    expect((ours()({ measures: ['Downloads.count'], ...range(timezone, [bound]) }, false).timeDimensions as Loose[])[0].dateRange).toEqual([local, local]);
  });

  it('leaves a query without such bounds, or in a zone no one knows, as it is', () => {
    for (const q of [range('America/New_York', ['2026-01-01', '2026-01-02T10:00:00.000']), range('Not/AZone', ['2026-01-01T00:00:00Z']), { measures: [] }]) {
      expect(withLocalBounds(q)).toBe(q);
    }
  });
});

/** The query with each filter's values that are all strings replaced, in order, by `others` (as many as before). */
function withOtherStrings(q: Loose, others: string[]): Loose {
  let next = 0;
  const filters = (list: unknown): unknown =>
    Array.isArray(list)
      ? list.map((f: Loose) => {
          if (f.or) return { ...f, or: filters(f.or) };
          if (f.and) return { ...f, and: filters(f.and) };
          if (Array.isArray(f.values) && f.values.every((v) => typeof v === 'string'))
            return { ...f, values: f.values.map(() => others[next++ % others.length]) };
          return f;
        })
      : list;
  return 'filters' in q ? { ...q, filters: filters(q.filters) } : q;
}
