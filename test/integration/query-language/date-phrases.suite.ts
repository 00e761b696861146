/**
 * Date-range phrases through the service (docs/reference/query-language.md, "Date ranges"): each
 * accepted phrase answers what the same range written as two dates answers,
 * the range worked out here from the clock (test/support/date-phrase-meaning.ts,
 * not from the service) and counted by hand-written SQL; every other phrase
 * is a 400 naming it. The grammar's rules, at clocks set by hand, are
 * test/unit/query/date-phrases.test.ts.
 */
import { DATABASE } from '../support/constants';
import { withDefaultService } from '../support/default-service';
import { meaning } from '../../support/date-phrase-meaning';
import { load } from '../support/api';

const suite = withDefaultService();

const countIn = (timezone: string, dateRange: unknown) => ({
  measures: ['Downloads.count'],
  timezone,
  timeDimensions: [{ dimension: 'Downloads.ts', dateRange }],
});

const counted = (body: { data: Record<string, unknown>[] }) => Number(body.data[0]?.['Downloads.count'] ?? 0);

/** Downloads between two local times of a zone, both included, by SQL of our own. */
function oracleCount([from, to]: string[], zone: string): Promise<number> {
  const at = (time: string) => `toDateTime64('${time.replace('T', ' ')}', 3, '${zone}')`;
  return suite.oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE ts >= ${at(from)} AND ts <= ${at(to)}`);
}

/** The UTC date `daysAgo` days before today: inside the demo window, which ends today. */
const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

const ACCEPTED: [string, string][] = [
  ['today', 'UTC'],
  ['yesterday', 'UTC'],
  ['tomorrow', 'UTC'],
  ['this week', 'UTC'],
  ['last week', 'America/New_York'],
  ['next week', 'UTC'],
  ['this month', 'Asia/Kolkata'],
  ['last month', 'UTC'],
  ['this quarter', 'UTC'],
  ['last quarter', 'Pacific/Kiritimati'],
  ['this year', 'UTC'],
  ['last year', 'UTC'],
  ['this day', 'America/New_York'],
  ['last day', 'UTC'],
  ['this hour', 'UTC'],
  ['last hour', 'Asia/Kolkata'],
  ['this minute', 'UTC'],
  ['last minute', 'UTC'],
  ['last second', 'UTC'],
  ['last 7 days', 'UTC'],
  ['last 7 days', 'America/New_York'],
  ['last 30 days', 'UTC'],
  ['last 30 days', 'Pacific/Kiritimati'],
  ['last 1 day', 'UTC'],
  ['last 2 weeks', 'Asia/Kolkata'],
  ['last 3 months', 'UTC'],
  ['last 2 quarters', 'UTC'],
  ['last 1 year', 'UTC'],
  ['last 36 hours', 'America/New_York'],
  ['last 90 minutes', 'UTC'],
  ['last 30 seconds', 'UTC'],
  ['next 3 days', 'UTC'],
  ['Last 14 Days', 'UTC'],
  ['from 7 days ago to now', 'UTC'],
  ['from 30 days ago to 1 day ago', 'Asia/Kolkata'],
  ['from 3 hours ago to now', 'America/New_York'],
  ['from 45 minutes ago to now', 'UTC'],
  ['from 2 weeks ago to 1 week ago', 'UTC'],
  ['from 3 months ago to 1 month ago', 'UTC'],
  ['from 1 year ago to now', 'UTC'],
  ['from now to 3 days from now', 'UTC'],
  [`from ${day(20)} to now`, 'UTC'],
  [`from ${day(20)} to 2 hours ago`, 'America/New_York'],
  [`from ${day(12)} to ${day(5)}`, 'Pacific/Kiritimati'],
  [`from ${day(6)}T06:30:00 to ${day(3)}T18:15:30.500`, 'Asia/Kolkata'],
  [`from ${day(6)}T10:00:00Z to ${day(3)}`, 'America/New_York'],
  [day(4), 'UTC'],
  [`${day(4)}T10:00:00`, 'UTC'],
];

describe('accepted phrases answer as the same range written as two dates', () => {
  it.each(ACCEPTED)('"%s" in %s', async (phrase, timezone) => {
    // Should the range move on (a second, a minute, a day turning) during the requests, ask again.
    for (let attempt = 0; ; attempt++) {
      const range = meaning(phrase, Date.now(), timezone);
      const asPhrase = await load(suite.service, countIn(timezone, phrase)).expect(200);
      const asDates = await load(suite.service, countIn(timezone, range)).expect(200);
      if (JSON.stringify(meaning(phrase, Date.now(), timezone)) !== JSON.stringify(range) && attempt < 3) continue;
      expect(asPhrase.body.query.timeDimensions).toEqual([{ dimension: 'Downloads.ts', dateRange: range }]);
      expect(asPhrase.body.query.timeDimensions).toEqual(asDates.body.query.timeDimensions);
      expect(counted(asPhrase.body)).toBe(counted(asDates.body));
      expect(counted(asPhrase.body)).toBe(await oracleCount(range, timezone));
      return;
    }
  });

  it('the demo window has rows in the ranges that reach into it, so the counts above are not all zero', async () => {
    for (const phrase of ['last 30 days', 'from 7 days ago to now', 'yesterday']) {
      expect(await oracleCount(meaning(phrase, Date.now(), 'UTC'), 'UTC')).toBeGreaterThan(0);
    }
  });

  it('a compareDateRange of phrases answers each range as its two dates', async () => {
    const phrases = ['last 7 days', 'from 14 days ago to 8 days ago'];
    for (let attempt = 0; ; attempt++) {
      const ranges = phrases.map((phrase) => meaning(phrase, Date.now(), 'UTC'));
      const res = await load(
        suite.service,
        { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: phrases }] },
        { multi: true },
      ).expect(200);
      if (JSON.stringify(phrases.map((phrase) => meaning(phrase, Date.now(), 'UTC'))) !== JSON.stringify(ranges) && attempt < 3) continue;
      const results = res.body.results as { query: { timeDimensions: { dateRange: string[] }[] }; data: Record<string, unknown>[] }[];
      expect(results.map((result) => result.query.timeDimensions[0].dateRange)).toEqual(ranges);
      expect(results.map((result) => counted(result))).toEqual(await Promise.all(ranges.map((range) => oracleCount(range, 'UTC'))));
      return;
    }
  });
});

/** Phrases Cube 0.33 read as something else (the first four as one day each), and what the refusal offers instead. */
const REFUSED: [string, string][] = [
  ['past 30 days', '"last 30 days"'],
  ['past week', '"last week"'],
  ['since 2026-11-01', '"from 2026-11-01 to now"'],
  ['November 2026', '["2026-11-01", "2026-11-30"]'],
  ['from 7 days ago to today', '"from 7 days ago to now"'],
  ['from yesterday to now', '"from 1 day ago to now"'],
  ['last weekend', 'A date range is one or two dates'],
  ['from this month to now', 'A date range is one or two dates'],
  ['last 0 days', 'A date range is one or two dates'],
];

describe('every other phrase is a 400 naming it', () => {
  it.each(REFUSED)('"%s"', async (phrase, offered) => {
    const res = await load(suite.service, countIn('UTC', phrase)).expect(400);
    expect(res.body.code).toBe('invalid_query');
    expect(res.body.error).toContain(`timeDimensions[0].dateRange: ${JSON.stringify(phrase)} is not a date range for Downloads.ts.`);
    expect(res.body.error).toContain(offered);
    expect(res.body.error).toContain('from <point> to <point>');
  });

  it('in a compareDateRange too, naming the range', async () => {
    const res = await load(
      suite.service,
      { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['last 7 days', 'past week'] }] },
      { multi: true },
    ).expect(400);
    expect(res.body.error).toContain('timeDimensions[0].compareDateRange[1]: "past week" is not a date range');
  });
});
