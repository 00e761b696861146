import { resolveDateRange } from '../../../src/cube/engine/date-parser';
import { dateRangeSpanMs, GRANULARITY_MS } from '../../../src/query/date-range';

const DAY = 86_400_000;

describe('dateRangeSpanMs', () => {
  it('reads two dates as from the start of the first day to the end of the last', () => {
    expect(dateRangeSpanMs(['2026-11-01', '2026-11-07'], 'UTC', resolveDateRange)).toBe(7 * DAY);
  });

  it('reads one date as that whole day', () => {
    expect(dateRangeSpanMs(['2026-11-01'], 'UTC', resolveDateRange)).toBe(DAY);
    // As a phrase, Cube's parser ends the day at its last millisecond.
    expect(dateRangeSpanMs('2026-11-01', 'UTC', resolveDateRange)).toBe(DAY - 1);
  });

  it('reads timestamps as they are', () => {
    expect(dateRangeSpanMs(['2026-11-01T10:00:00.000', '2026-11-01T11:30:00.000'], 'UTC', resolveDateRange)).toBe(90 * 60_000);
  });

  it("reads phrases with Cube's own parser, in the query's time zone", () => {
    // "last 7 days" ends at the end of yesterday: seven whole days, less Cube's last millisecond.
    expect(dateRangeSpanMs('last 7 days', 'America/New_York', resolveDateRange)).toBe(7 * DAY - 1);
    expect(dateRangeSpanMs('last 3 years', 'UTC', resolveDateRange)).toBeGreaterThanOrEqual(3 * 365 * DAY - 1);
  });

  it('is undefined for what Cube would refuse itself', () => {
    expect(dateRangeSpanMs('from never to now', 'UTC', resolveDateRange)).toBeUndefined();
    expect(dateRangeSpanMs(['2026-11-07', '2026-11-01'], 'UTC', resolveDateRange)).toBeUndefined();
    expect(dateRangeSpanMs([1, 2], 'UTC', resolveDateRange)).toBeUndefined();
    expect(dateRangeSpanMs(['a', 'b', 'c'], 'UTC', resolveDateRange)).toBeUndefined();
  });

  it('reads an unknown time zone as UTC instead of failing', () => {
    expect(dateRangeSpanMs('last 7 days', 'Mars/Olympus', resolveDateRange)).toBe(7 * DAY - 1);
  });
});

describe('GRANULARITY_MS', () => {
  it('never counts fewer buckets than Cube makes: each length is the shortest of its granularity', () => {
    // February (28 days) and a quarter of Jan–Mar in a common year (90 days) bound month and quarter from below.
    expect(GRANULARITY_MS.month).toBeLessThanOrEqual(28 * DAY);
    expect(GRANULARITY_MS.quarter).toBeLessThanOrEqual(90 * DAY);
    expect(GRANULARITY_MS.year).toBeLessThanOrEqual(365 * DAY);
  });
});
