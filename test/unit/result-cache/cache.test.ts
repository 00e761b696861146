/**
 * The result cache on its own: an answer is served until its window after
 * Cube computed it and never after, the memory it holds stays under its
 * byte cap (least recently used out first), and keys tell apart everything
 * that changes an answer, relative date ranges included.
 */
import { ResultCache } from '../../../src/cube/result-cache';
import { cacheKey, refreshedAt } from '../../../src/cube/result-key';

const WINDOW_MS = 10_000;

function cacheAt(clock: { now: number }, maxBytes = 1024 * 1024) {
  return new ResultCache({ maxBytes, windowMs: WINDOW_MS, now: () => clock.now });
}

describe('expiry', () => {
  it('serves an answer until its window after Cube computed it, and not from then on', () => {
    const clock = { now: 1_000_000 };
    const cache = cacheAt(clock);
    const computedAt = clock.now - 3_000;
    cache.set('k', { n: 1 }, computedAt, 7);
    clock.now = computedAt + WINDOW_MS - 1;
    expect(cache.get('k')).toEqual({ n: 1 });
    clock.now = computedAt + WINDOW_MS;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('does not keep an answer Cube computed a whole window ago', () => {
    const clock = { now: 1_000_000 };
    const cache = cacheAt(clock);
    cache.set('k', { n: 1 }, clock.now - WINDOW_MS, 7);
    expect(cache.get('k')).toBeUndefined();
  });

  it('forgets every answer when the data changed, bytes included', () => {
    const clock = { now: 1_000_000 };
    const cache = cacheAt(clock);
    cache.set('a', 'a', clock.now, 9);
    cache.set('b', 'b', clock.now, 9);
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
    cache.set('a', 'new', clock.now, 9);
    expect(cache.get('a')).toBe('new');
  });

  it('keeps nothing when turned off', () => {
    const cache = new ResultCache({ maxBytes: 0, windowMs: WINDOW_MS });
    cache.set('k', { n: 1 }, Date.now(), 7);
    expect(cache.enabled).toBe(false);
    expect(cache.get('k')).toBeUndefined();
  });
});

describe('bounded size', () => {
  it('stays under its byte cap, evicting the least recently used first', () => {
    const clock = { now: 1_000_000 };
    // Each entry counts 2 × (key length + 99) = 200 bytes: five fit.
    const cache = cacheAt(clock, 1_000);
    for (const k of ['a', 'b', 'c', 'd', 'e']) cache.set(k, k, clock.now, 99);
    expect(cache.size).toEqual({ entries: 5, bytes: 1_000 });
    expect(cache.get('a')).toBe('a');
    cache.set('f', 'f', clock.now, 99);
    expect(cache.size.bytes).toBeLessThanOrEqual(1_000);
    expect(cache.get('b')).toBeUndefined();
    for (const k of ['a', 'c', 'd', 'e', 'f']) expect(cache.get(k)).toBe(k);
  });

  it('never holds more than the cap whatever is stored', () => {
    const clock = { now: 1_000_000 };
    const cache = cacheAt(clock, 10_000);
    for (let i = 0; i < 1_000; i += 1) {
      cache.set(`key-${i}`, i, clock.now, (i * 37) % 3_000);
      expect(cache.size.bytes).toBeLessThanOrEqual(10_000);
    }
    cache.set('huge', 'x', clock.now, 6_000);
    expect(cache.get('huge')).toBeUndefined();
  });
});

describe('keys', () => {
  const query = { measures: ['Downloads.count'], timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'today' }] };
  const account = { requestId: 'r', accountId: 'northwind-audio' };

  afterEach(() => jest.useRealTimers());

  it('differ by account, operator, route, models and query; not by renewQuery or request id', () => {
    const key = cacheKey('v1', query, account, '');
    expect(cacheKey('v1', query, { requestId: 'other', accountId: 'northwind-audio' }, '')).toBe(key);
    expect(cacheKey('v1', { ...query, renewQuery: true }, account, '')).toBe(key);
    expect(cacheKey('v1', query, { requestId: 'r', accountId: 'harbor-lane-media' }, '')).not.toBe(key);
    expect(cacheKey('v1', query, { requestId: 'r', accountId: null }, '')).not.toBe(key);
    expect(cacheKey('cubejs', query, account, '')).not.toBe(key);
    expect(cacheKey('v1', query, account, 'models-2')).not.toBe(key);
    expect(cacheKey('v1', { ...query, timezone: 'America/New_York' }, account, '')).not.toBe(key);
    expect(cacheKey('v1', [query], account, '')).not.toBe(key);
  });

  it('change when a relative date range comes to mean other dates', () => {
    const at = (iso: string, dateRange: string, timezone?: string) => {
      jest.useFakeTimers({ now: new Date(iso) });
      const q = { ...query, timeDimensions: [{ dimension: 'Downloads.ts', dateRange }], ...(timezone ? { timezone } : {}) };
      return cacheKey('v1', q, account, '');
    };
    expect(at('2026-03-01T23:59:59Z', 'today')).not.toBe(at('2026-03-02T00:00:01Z', 'today'));
    expect(at('2026-03-01T08:00:00Z', 'last 7 days')).toBe(at('2026-03-01T20:00:00Z', 'last 7 days'));
    expect(at('2026-03-01T10:59:59Z', 'this hour')).not.toBe(at('2026-03-01T11:00:00Z', 'this hour'));
    // The day turns at midnight in the query's time zone, not UTC's.
    expect(at('2026-03-02T04:00:00Z', 'today', 'America/New_York')).toBe(at('2026-03-01T23:00:00Z', 'today', 'America/New_York'));
    expect(at('2026-03-02T04:59:00Z', 'today', 'America/New_York')).not.toBe(at('2026-03-02T05:01:00Z', 'today', 'America/New_York'));
    const compare = (iso: string) => {
      jest.useFakeTimers({ now: new Date(iso) });
      return cacheKey('v1', { ...query, timeDimensions: [{ dimension: 'Downloads.ts', compareDateRange: ['today', 'yesterday'] }] }, account, '');
    };
    expect(compare('2026-03-01T23:59:59Z')).not.toBe(compare('2026-03-02T00:00:01Z'));
  });

  it('is undefined for a range Cube cannot parse, so Cube answers it', () => {
    expect(cacheKey('v1', { ...query, timeDimensions: [{ dimension: 'Downloads.ts', dateRange: 'whenever' }] }, account, '')).toBeUndefined();
  });
});

describe('when Cube computed an answer', () => {
  const NOW = Date.parse('2026-11-27T00:30:00.000Z');
  it('is its lastRefreshTime, the oldest of a multi answer’s, and none when one is missing', () => {
    expect(refreshedAt({ lastRefreshTime: '2026-11-27T00:29:55.000Z' }, NOW)).toBe(NOW - 5_000);
    expect(refreshedAt({ results: [{ lastRefreshTime: '2026-11-27T00:29:58.000Z' }, { lastRefreshTime: '2026-11-27T00:29:50.000Z' }] }, NOW)).toBe(
      NOW - 10_000,
    );
    expect(refreshedAt({ results: [{ lastRefreshTime: '2026-11-27T00:29:58.000Z' }, {}] }, NOW)).toBeUndefined();
  });

  it('is never later than now: a rollup stamped ahead of the clock is not kept longer for it', () => {
    expect(refreshedAt({ lastRefreshTime: '2026-11-27T00:30:04.000Z' }, NOW)).toBe(NOW);
  });
});
