import { resolveDateRange } from '../../../src/cube/engine/date-parser';
import { admitQueries } from '../../../src/query/admit';
import type { ModelMembers } from '../../../src/query/members';
import { whereJsonFails } from '../../../src/query/request';
import { QueryRefusal } from '../../../src/query/rules';

/**
 * Refusals a client can act on (issue 40 §4): each says what the member or
 * value is and what to write instead. Cube 0.33 answered these with its
 * own or ClickHouse's words: "'country' not found for path
 * 'Downloads.country'", a raw regular expression of granularities without
 * quarter, "Cannot parse Float64 from String".
 */
const MODEL: ModelMembers = {
  measures: new Set(['Downloads.count', 'Downloads.listeners', 'WebEvents.count']),
  dimensions: new Set(['Downloads.country', 'Downloads.ts', 'Downloads.episodes', 'WebEvents.country', 'WebEvents.trackTs', 'WebEvents.seValue']),
  timeDimensions: new Set(['Downloads.ts', 'WebEvents.trackTs']),
  segments: new Set(['Downloads.mobile']),
  types: new Map([
    ['Downloads.count', 'number'],
    ['Downloads.listeners', 'number'],
    ['WebEvents.count', 'number'],
    ['Downloads.country', 'string'],
    ['WebEvents.country', 'string'],
    ['Downloads.ts', 'time'],
    ['WebEvents.trackTs', 'time'],
    ['Downloads.episodes', 'number'],
    ['WebEvents.seValue', 'number'],
  ]),
};

function refusal(query: Record<string, unknown>): { rule: string; message: string } {
  try {
    admitQueries(query, MODEL, resolveDateRange);
  } catch (err) {
    if (err instanceof QueryRefusal) return { rule: err.rule, message: err.message };
    throw err;
  }
  throw new Error('admitted');
}

const count = 'Downloads.count';

describe('a member in the wrong list says what it is and where it goes', () => {
  it.each([
    [{ measures: ['Downloads.country'] }, 'measures[0]: "Downloads.country" is a dimension, not a measure: list it in "dimensions".'],
    [{ measures: ['Downloads.ts'] }, 'measures[0]: "Downloads.ts" is a time dimension, not a measure: list it in "dimensions", or in "timeDimensions"'],
    [
      { measures: ['Downloads.ts.day'] },
      'measures[0]: "Downloads.ts.day" is a time dimension by day, not a measure: list it in "dimensions", or as {"dimension": "Downloads.ts", "granularity": "day"} in "timeDimensions".',
    ],
    [{ measures: ['Downloads.mobile'] }, 'measures[0]: "Downloads.mobile" is a segment, not a measure: list it in "segments".'],
    [{ measures: [count], dimensions: [count] }, 'dimensions[0]: "Downloads.count" is a measure, not a dimension or a time dimension: list it in "measures".'],
    [{ measures: [count], dimensions: ['Downloads.mobile'] }, 'dimensions[0]: "Downloads.mobile" is a segment'],
    [{ measures: [count], dimensions: ['Downloads.country.day'] }, '"Downloads.country" is a dimension, not a time dimension, so it has no granularity.'],
    [{ measures: [count], segments: ['Downloads.country'] }, 'segments[0]: "Downloads.country" is a dimension, not a segment: list it in "dimensions".'],
    [{ measures: [count], segments: [count] }, 'segments[0]: "Downloads.count" is a measure, not a segment: list it in "measures".'],
    [{ measures: [count], timeDimensions: [{ dimension: 'Downloads.mobile' }] }, 'timeDimensions[0].dimension: "Downloads.mobile" is a segment'],
    [{ measures: [count], filters: [{ member: 'Downloads.mobile', operator: 'set' }] }, 'filters[0].member: "Downloads.mobile" is a segment'],
    [{ measures: [count], order: { 'Downloads.mobile': 'asc' } }, 'order: "Downloads.mobile" is a segment'],
  ])('%j', (query, message) => {
    const { rule, message: said } = refusal(query);
    expect(rule).toBe('memberKinds');
    expect(said).toContain(message);
  });
});

describe('an unknown member is answered with the closest names', () => {
  it.each([
    ['Downloads.contry', ['"Downloads.country" (a dimension)']],
    ['downloads.count', ['"Downloads.count" (a measure)']],
    ['Download.count', ['"Downloads.count" (a measure)']],
    ['country', ['"Downloads.country" (a dimension)', '"WebEvents.country" (a dimension)']],
    ['Downloads.listener', ['"Downloads.listeners" (a measure)']],
    ['Nothing.likeIt', []],
  ])('%s', (name, near) => {
    for (const query of [
      { measures: [name] },
      { measures: [count], dimensions: [name] },
      { measures: [count], filters: [{ member: name, operator: 'set' }] },
    ]) {
      const { rule, message } = refusal(query);
      expect(rule).toBe('knownMembers');
      expect(message).toContain(`${JSON.stringify(name)} is not a member of the model`);
      if (near.length === 0) expect(message).not.toContain('did you mean');
      else expect(message).toContain(`did you mean ${near.join(' or ')}?`);
    }
  });
});

describe('granularities are listed, quarter included', () => {
  const LIST = 'second, minute, hour, day, week, month, quarter, year';
  it.each([
    [{ measures: [count], dimensions: ['Downloads.ts.weekly'] }, `dimensions[0]: "weekly" is not a granularity; use one of ${LIST}. Did you mean "week"?`],
    [
      { measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'Day' }] },
      `timeDimensions[0].granularity: "Day" is not a granularity; use one of ${LIST}. Did you mean "day"?`,
    ],
    [{ measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'fortnight' }] }, `"fortnight" is not a granularity; use one of ${LIST}.`],
    [{ measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', granularity: 7 }] }, `7 is not a granularity; use one of ${LIST}.`],
    [
      { measures: [count], timeDimensions: [{ dimension: 'Downloads.ts.day' }] },
      'timeDimensions[0].dimension: "Downloads.ts.day" names a granularity; write it apart: {"dimension": "Downloads.ts", "granularity": "day"}.',
    ],
    [
      { measures: [count], dimensions: ['Downloads.ts.quarter'] },
      'for quarters write {"dimension": "Downloads.ts", "granularity": "quarter"} in "timeDimensions".',
    ],
  ])('%j', (query, message) => {
    const { rule, message: said } = refusal(query);
    expect(rule).toBe('granularities');
    expect(said).toContain(message);
  });

  it('admits each of them', () => {
    for (const granularity of LIST.split(', ')) {
      expect(() => admitQueries({ measures: [count], timeDimensions: [{ dimension: 'Downloads.ts', granularity }] }, MODEL, resolveDateRange)).not.toThrow();
      if (granularity !== 'quarter')
        expect(() => admitQueries({ measures: [count], dimensions: [`Downloads.ts.${granularity}`] }, MODEL, resolveDateRange)).not.toThrow();
    }
  });
});

describe('a number member compares numbers', () => {
  const on = (member: string, operator: string, values: unknown[]) => ({ measures: [count], filters: [{ member, operator, values }] });
  it.each([
    [count, 'gt', ['lots']],
    [count, 'gte', ['']],
    [count, 'lt', ['1,000']],
    [count, 'lte', [' 20']],
    [count, 'equals', ['20', 'twenty']],
    [count, 'notEquals', [true]],
    [count, 'in', ['NaN']],
    [count, 'notIn', ['inf']],
    ['Downloads.episodes', 'gt', ['0x10']],
    ['WebEvents.seValue', 'equals', [{ value: 1 }]],
  ])('%s %s %j', (member, operator, values) => {
    const { rule, message } = refusal(on(member, operator, values));
    expect(rule).toBe('numberValues');
    expect(message).toContain(`the ${operator} filter on ${member} compares numbers;`);
    expect(message).toContain('is not one');
  });

  it('admits numbers, strings of one and null where Cube reads it', () => {
    for (const [operator, values] of [
      ['gt', ['20']],
      ['gte', [20.5]],
      ['lt', ['-1e3']],
      ['lte', ['.5']],
      ['equals', ['20', 21, null]],
      ['in', ['1', '2.50']],
      ['notIn', [0]],
      ['set', []],
    ] as const) {
      expect(() => admitQueries(on(count, operator, [...values]), MODEL, resolveDateRange)).not.toThrow();
    }
  });
});

describe('whereJsonFails', () => {
  it.each([
    ['{"query": lots}', 'invalid symbol on line 1, column 11 (offset 10)'],
    ['{"query":\n  {"measures": ["a",]}}', 'value expected on line 2, column 21 (offset 30)'],
    ['{"query": {', 'close brace expected on line 1, column 12 (offset 11)'],
    ['{"a":1}}', 'end of file expected on line 1, column 8 (offset 7)'],
    ['{\n"query":\n{"measures":["x"] "limit": 1}}', 'comma expected on line 3, column 19 (offset 29)'],
    ['', 'value expected on line 1, column 1 (offset 0)'],
  ])('%j', (text, where) => {
    expect(whereJsonFails(text)).toBe(where);
  });

  it('is undefined for JSON, and for brackets nested deeper than it reads (no stack overflow)', () => {
    expect(whereJsonFails('{"query": {"measures": ["Downloads.count"]}}')).toBeUndefined();
    expect(whereJsonFails('['.repeat(50_000))).toBeUndefined();
  });
});
