import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveDateRange } from '../../../src/cube/engine/date-parser';
import { DATE_PHRASE_FORMS, datePhraseSuggestions } from '../../../src/query/date-phrases';
import { checkDateRange } from '../../../src/query/dates';
import { QueryRefusal } from '../../../src/query/rules';
import { meaning } from '../../support/date-phrase-meaning';

/**
 * The date-range grammar of docs/reference/query-language.md ("Date ranges"): each accepted
 * phrase resolves, by the parser Cube runs, to the range its row of the
 * table says (test/support/date-phrase-meaning.ts, without moment or
 * chrono); every other phrase is refused, naming itself and the forms. The
 * clock is set by hand to instants where a day, a month, a year or a
 * daylight-saving change is near. test/integration/query-language/
 * date-phrases.suite.ts asks the service the same.
 */
// ---------------------------------------------------------------------------

const ACCEPTED = [
  'today',
  'yesterday',
  'tomorrow',
  ...['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'].flatMap((unit) => [`this ${unit}`, `last ${unit}`, `next ${unit}`]),
  'last 7 days',
  'last 30 days',
  'last 1 day',
  'last 2 weeks',
  'last 3 months',
  'last 2 quarters',
  'last 1 year',
  'last 36 hours',
  'last 90 minutes',
  'last 30 seconds',
  'next 3 days',
  'next 2 months',
  'Last 7 Days',
  'from 7 days ago to now',
  'from 30 days ago to 1 day ago',
  'from 3 hours ago to now',
  'from 45 minutes ago to now',
  'from 10 seconds ago to 5 seconds ago',
  'from 2 weeks ago to 1 week ago',
  'from 3 months ago to 1 month ago',
  'from 2 quarters ago to now',
  'from 1 year ago to now',
  'from now to 3 days from now',
  'from 2026-11-01 to now',
  'from 2026-11-01 to 2 hours ago',
  'from 2026-10-20 to 2026-10-21',
  'from 2026-10-20T06:00:00 to 2026-10-21',
  'from 2026-10-20T10:00:00Z to 2026-10-21T12:30:00.250',
  '2026-11-01',
  '2026-11-01T10:00:00',
];

/** Instants near a turn of the day, month or year, a leap day, and daylight-saving changes of New York and Lord Howe Island. */
const CLOCKS = [
  '2026-11-28T23:58:43.250Z',
  '2026-12-31T23:30:00.000Z',
  '2026-03-31T10:00:00.000Z',
  '2028-02-29T12:00:00.000Z',
  '2026-03-08T08:10:00.000Z',
  '2026-11-01T06:30:00.000Z',
  '2026-04-04T15:20:00.000Z',
];
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati', 'Australia/Lord_Howe'];

describe('accepted phrases mean what the grammar says', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it.each(CLOCKS.flatMap((clock) => ZONES.map((zone) => [clock, zone])))('at %s in %s', (clock, zone) => {
    const now = Date.parse(clock);
    jest.setSystemTime(now);
    for (const phrase of ACCEPTED) expect(() => checkDateRange('dateRange', 'Downloads.ts', phrase, zone, resolveDateRange)).not.toThrow();
    const wrong = ACCEPTED.flatMap((phrase) => {
      const [got, meant] = [resolveDateRange(phrase, zone), meaning(phrase, now, zone)];
      return JSON.stringify(got) === JSON.stringify(meant) ? [] : [`${phrase}: ${got.join(' – ')}, not ${meant.join(' – ')}`];
    });
    expect(wrong).toEqual([]);
  });
});

/** Refused phrases, and what the refusal suggests (empty: nothing close). */
const REFUSED: [string, string[]][] = [
  ['past 30 days', ['"last 30 days"', '"from 30 days ago to now"']],
  ['past week', ['"last week"', '"from 1 week ago to now"']],
  ['past 3 hours', ['"last 3 hours"', '"from 3 hours ago to now"']],
  ['the last 7 days', ['"last 7 days"', '"from 7 days ago to now"']],
  ['previous month', ['"last month"', '"from 1 month ago to now"']],
  ['since 2026-11-01', ['"from 2026-11-01 to now"']],
  ['since yesterday', ['"from 1 day ago to now"']],
  ['from 2026-11-01', ['"from 2026-11-01 to now"']],
  ['November 2026', ['["2026-11-01", "2026-11-30"]']],
  ['nov 2026', ['["2026-11-01", "2026-11-30"]']],
  ['Feb 2028', ['["2028-02-01", "2028-02-29"]']],
  ['2026-02', ['["2026-02-01", "2026-02-28"]']],
  ['2026', ['["2026-01-01", "2026-12-31"]']],
  ['from 7 days ago to today', ['"from 7 days ago to now"']],
  ['from yesterday to now', ['"from 1 day ago to now"']],
  ['from 3 hours ago to today', []],
  ['between 2026-11-01 and 2026-11-05', ['"from 2026-11-01 to 2026-11-05"']],
  ['from 2026-11-01 until 2026-11-05', ['"from 2026-11-01 to 2026-11-05"']],
  ['last  7 days', ['"last 7 days"']],
  [' last 7 days', ['"last 7 days"']],
  ['last 0 days', []],
  ['last days', ['"last day"', '"from 1 day ago to now"']],
  ['last weekend', []],
  ['last 7 days ago', []],
  ['7 days ago', []],
  ['now', []],
  ['from this month to now', []],
  ['from last week to now', []],
  ['from a week ago to now', []],
  ['last seven days', []],
  ['this fortnight', []],
  ['from 2026-13-01 to now', []],
  ['2026-02-30', []],
  ['whenever it suits you', []],
  ['', []],
];

describe('every other phrase is refused', () => {
  it.each(REFUSED)('%j', (phrase, suggestions) => {
    // Each suggestion, less what it says it means.
    expect(datePhraseSuggestions(phrase).map((suggestion) => suggestion.replace(/ \(.*\)$/, ''))).toEqual(suggestions);
    let refusal: unknown;
    try {
      checkDateRange('timeDimensions[0].dateRange', 'Downloads.ts', phrase, 'UTC', resolveDateRange);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(QueryRefusal);
    const { rule, message } = refusal as QueryRefusal;
    expect(rule).toBe('dateRanges');
    expect(message).toContain(`timeDimensions[0].dateRange: ${JSON.stringify(phrase)} is not a date range for Downloads.ts.`);
    expect(message).toContain(DATE_PHRASE_FORMS);
    for (const suggestion of suggestions) expect(message).toContain(suggestion);
  });
});

describe('docs/reference/query-language.md, "Date ranges"', () => {
  const doc = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'query-language.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Date ranges'), doc.indexOf('\nFilter operators:'));
  /** The backquoted phrases of one column of the section's table whose header starts with `header`. */
  const column = (header: string, index: number) => {
    const table = section.slice(section.indexOf(`| ${header}`)).split('\n\n')[0];
    return table
      .split('\n')
      .slice(2)
      .flatMap((row) => [...row.split(' | ')[index].matchAll(/`([^`]+)`/g)].map((match) => match[1]));
  };

  it('lists examples that are accepted', () => {
    const examples = column('Form |', 1);
    expect(examples.length).toBeGreaterThan(5);
    for (const example of examples) expect(() => checkDateRange('dateRange', 'Downloads.ts', example, 'UTC', resolveDateRange)).not.toThrow();
  });

  it('lists refused phrases that are refused', () => {
    const refused = column('Refused |', 0);
    expect(refused.length).toBeGreaterThan(10);
    for (const phrase of refused) expect(() => checkDateRange('dateRange', 'Downloads.ts', phrase, 'UTC', resolveDateRange)).toThrow(QueryRefusal);
  });
});
