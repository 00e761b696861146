import { dateParser, resolveDateRange } from '../../../src/cube/engine/date-parser';

// resolveDateRange keeps Cube's answers for the current second; the clock is set by hand so a second can turn.
describe('resolveDateRange', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  const phrases = ['today', 'yesterday', 'last 7 days', 'this hour', 'last week', 'from 7 days ago to now', 'this month'];
  const zones = ['UTC', 'America/Los_Angeles', 'Asia/Kolkata'];

  it.each(zones)('answers as Cube’s own parser does, in %s', (zone) => {
    jest.setSystemTime(new Date('2026-03-08T09:59:59.250Z'));
    for (const phrase of phrases) expect(resolveDateRange(phrase, zone)).toEqual(dateParser(phrase, zone));
  });

  it('follows the clock once the second turns', () => {
    jest.setSystemTime(new Date('2026-11-26T23:59:59.900Z'));
    expect(resolveDateRange('today', 'UTC')).toEqual(['2026-11-26T00:00:00.000', '2026-11-26T23:59:59.999']);
    expect(resolveDateRange('this hour', 'UTC')).toEqual(['2026-11-26T23:00:00.000', '2026-11-26T23:59:59.999']);
    jest.setSystemTime(new Date('2026-11-27T00:00:00.050Z'));
    expect(resolveDateRange('today', 'UTC')).toEqual(['2026-11-27T00:00:00.000', '2026-11-27T23:59:59.999']);
    expect(resolveDateRange('this hour', 'UTC')).toEqual(['2026-11-27T00:00:00.000', '2026-11-27T00:59:59.999']);
  });

  it('keeps time zones apart within one second', () => {
    jest.setSystemTime(new Date('2026-11-26T20:00:00.000Z'));
    expect(resolveDateRange('today', 'UTC')).toEqual(['2026-11-26T00:00:00.000', '2026-11-26T23:59:59.999']);
    expect(resolveDateRange('today', 'Asia/Tokyo')).toEqual(['2026-11-27T00:00:00.000', '2026-11-27T23:59:59.999']);
  });

  it('refuses what Cube refuses, every time it is asked', () => {
    jest.setSystemTime(new Date('2026-11-26T20:00:00.000Z'));
    const cube = (() => {
      try {
        dateParser('next blue moon', 'UTC');
      } catch (err) {
        return err;
      }
      throw new Error('Cube read the phrase');
    })();
    expect(() => resolveDateRange('next blue moon', 'UTC')).toThrow((cube as Error).message);
    expect(() => resolveDateRange('next blue moon', 'UTC')).toThrow((cube as Error).message);
  });

  // Cube's parser rounded each side to its day: all of 20 October for the first phrase below.
  it.each([
    ['from 2026-10-20T06:00:00 to 2026-10-20T20:00:00', 'America/New_York', ['2026-10-20T06:00:00.000', '2026-10-20T20:00:00.000']],
    ['from 2026-10-20 06:30 to 2026-10-21T01:02:03.456789', 'UTC', ['2026-10-20T06:30:00.000', '2026-10-21T01:02:03.456']],
    ['from 2026-10-20T10:00:00Z to 2026-10-21', 'America/New_York', ['2026-10-20T06:00:00.000', '2026-10-21T23:59:59.999']],
    ['From 2026-10-20 to 2026-10-21T00:00:00+05:30', 'Asia/Kolkata', ['2026-10-20T00:00:00.000', '2026-10-21T00:00:00.000']],
    ['2026-10-20T10:00:00Z', 'America/New_York', ['2026-10-20T06:00:00.000', '2026-10-20T06:00:00.000']],
    [' 2026-10-20 10:00:00.5 ', 'UTC', ['2026-10-20T10:00:00.500', '2026-10-20T10:00:00.500']],
  ])('keeps the times of "%s" in %s to the millisecond', (phrase, zone, bounds) => {
    jest.setSystemTime(new Date('2026-11-26T20:00:00.000Z'));
    expect(resolveDateRange(phrase, zone)).toEqual(bounds);
  });

  it('keeps Cube’s reading of dates and relative sides of "from … to …"', () => {
    jest.setSystemTime(new Date('2026-11-26T20:00:00.000Z'));
    for (const phrase of ['from 2026-10-20 to 2026-10-21', 'from 7 days ago to now']) {
      expect(resolveDateRange(phrase, 'America/New_York')).toEqual(dateParser(phrase, 'America/New_York'));
    }
    expect(resolveDateRange('from 2026-10-20T06:00:00 to now', 'UTC')).toEqual(['2026-10-20T06:00:00.000', '2026-11-26T23:59:59.999']);
  });

  it('answers what callers cannot change', () => {
    jest.setSystemTime(new Date('2026-11-26T20:00:00.000Z'));
    expect(Object.isFrozen(resolveDateRange('last 7 days', 'UTC'))).toBe(true);
  });
});
