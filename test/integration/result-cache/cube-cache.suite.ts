/**
 * Cube's own cache, beneath the result cache, is bounded: the driver drops
 * the oldest entries past its byte cap (never one written in the last 10 s,
 * whose time Cube reads back for lastRefreshTime), and the service keeps
 * answering distinct queries correctly, each with its lastRefreshTime,
 * while the cap holds.
 */
import { LocalCacheDriver } from '@cubejs-backend/query-orchestrator';
import { BoundedCacheDriver } from '../../../src/cube/engine/cache-driver';
import { DATABASE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load } from '../support/api';

/** Cube measures an entry as the bytes of its JSON: a string of n characters is n + 2. */
const value = (n: number) => 'x'.repeat(n - 2);

describe('the driver', () => {
  it('drops the oldest entries past its cap, once they are out of the grace period', async () => {
    const clock = { now: 1_000_000 };
    const sizes: number[] = [];
    const driver = new BoundedCacheDriver(
      300,
      (bytes) => sizes.push(bytes),
      () => clock.now,
    );
    for (const key of ['a', 'b', 'c']) await driver.set(key, value(100), 3600);
    expect(driver.size).toBe(300);
    await driver.set('d', value(100), 3600);
    // Everything is younger than 10 s: kept, past the cap.
    expect(driver.size).toBe(400);
    clock.now += 10_001;
    await driver.set('e', value(100), 3600);
    expect(driver.size).toBe(300);
    expect(await driver.get('a')).toBeUndefined();
    expect(await driver.get('b')).toBeUndefined();
    expect(await driver.get('c')).toBe(value(100));
    expect(await driver.get('e')).toBe(value(100));
    expect(sizes.at(-1)).toBe(300);
  });

  it('measures a result of thousands of rows as the UTF-8 bytes of its JSON, a piece at a time', async () => {
    const driver = new BoundedCacheDriver(100_000_000);
    const result = { time: 1, result: Array.from({ length: 2500 }, (_, i) => ({ 'Cells.label': `é😀 ${i}`, 'Cells.count': String(i) })) };
    // Queued before the set starts: it runs repeatedly only if the measuring gives way between pieces.
    let otherWorkRan = 0;
    const tick = () => {
      otherWorkRan += 1;
      if (otherWorkRan < 100) setImmediate(tick);
    };
    setImmediate(tick);
    expect((await driver.set('large', result, 3600)).bytes).toBe(Buffer.byteLength(JSON.stringify(result)));
    expect(driver.size).toBe(Buffer.byteLength(JSON.stringify(result)));
    // The JSON's three slices of rows (1,000 each), then the counting of its pieces.
    expect(otherWorkRan).toBeGreaterThan(4);
  });

  it('counts a rewritten key once and forgets removed and expired ones', async () => {
    const clock = { now: 1_000_000 };
    const driver = new BoundedCacheDriver(
      10_000,
      () => {},
      () => clock.now,
    );
    await driver.set('a', value(100), 3600);
    await driver.set('a', value(50), 3600);
    expect(driver.size).toBe(50);
    await driver.remove('a');
    expect(driver.size).toBe(0);
    // Expiry is the base class's, on the real clock: an entry that expires at once is gone when read.
    await driver.set('b', value(100), -1);
    expect(await driver.get('b')).toBeUndefined();
    expect(driver.size).toBe(0);
  });

  it('forgets the entries of a kind at once when the data changed, and keeps the others', async () => {
    const sizes: number[] = [];
    const driver = new BoundedCacheDriver(10_000, (bytes) => sizes.push(bytes));
    await driver.set('SQL_QUERY_RESULT_a', value(100), 3600);
    await driver.set('SQL_QUERY_RESULT_b', value(100), 3600);
    await driver.set('SQL_PRE_AGGREGATIONS_TABLES_TOUCH_t', value(40), 3600);
    driver.removeStartingWith('SQL_QUERY_RESULT_');
    expect(await driver.get('SQL_QUERY_RESULT_a')).toBeUndefined();
    expect(await driver.get('SQL_QUERY_RESULT_b')).toBeUndefined();
    expect(await driver.get('SQL_PRE_AGGREGATIONS_TABLES_TOUCH_t')).toBe(value(40));
    expect(driver.size).toBe(40);
    expect(sizes.at(-1)).toBe(40);
  });

  it('keeps no list of a rollup database’s tables, which a read under way while a build ends would have held stale, and keeps the bookkeeping of tables touched and used', async () => {
    const driver = new BoundedCacheDriver(10_000);
    await driver.set('SQL_PRE_AGGREGATIONS_TABLES_STANDALONE_defaultanalytics_rollups', [{ table_name: 't_a_b_c' }], 3600);
    await driver.set('SQL_PRE_AGGREGATIONS_TABLES_TOUCH_STANDALONE_t', value(40), 3600);
    await driver.set('SQL_PRE_AGGREGATIONS_TABLES_USED_STANDALONE_t', value(40), 3600);
    expect(await driver.get('SQL_PRE_AGGREGATIONS_TABLES_STANDALONE_defaultanalytics_rollups')).toBeUndefined();
    expect(await driver.get('SQL_PRE_AGGREGATIONS_TABLES_TOUCH_STANDALONE_t')).toBe(value(40));
    expect(await driver.get('SQL_PRE_AGGREGATIONS_TABLES_USED_STANDALONE_t')).toBe(value(40));
    expect(driver.size).toBe(80);
  });

  it("keeps a store of its own, apart from Cube's process-wide one", async () => {
    const driver = new BoundedCacheDriver(10_000);
    const cubes = new LocalCacheDriver();
    await cubes.set('shared-key', 'cube', 3600);
    expect(await driver.get('shared-key')).toBeUndefined();
    await driver.set('own-key', 'ours', 3600);
    expect(await cubes.get('own-key')).toBeUndefined();
    await cubes.remove('shared-key');
  });
});

describe('the service under distinct queries', () => {
  const CAP_BYTES = 1024 * 1024;
  let service: TestService;
  let oracle: Oracle;
  beforeAll(async () => {
    // The result cache in front is off, so every query reaches Cube's cache.
    service = await startService({ CUBE_CACHE_MB: '1', RESULT_CACHE_MB: '0' });
    oracle = openOracle();
  });
  afterAll(async () => {
    await oracle.close();
    await service.close();
  });

  const cubeCacheBytes = async () => (await service.metrics.cubeCacheBytes.get()).values[0]?.value ?? 0;

  it('answers every query right while the cache stays under CUBE_CACHE_MB', async () => {
    const events = await oracle.value(`SELECT count() FROM ${DATABASE}.web_events`);
    const rows = Math.min(2_000, events);
    // Distinct queries, each a few hundred KB of rows: together well past the cap.
    for (let i = 0; i < 8; i += 1) {
      const res = await load(service, { dimensions: ['WebEvents.eventId', 'WebEvents.pageUrl', 'WebEvents.ua'], ungrouped: true, limit: rows - i }).expect(200);
      expect(res.body.data).toHaveLength(rows - i);
      expect(res.body.lastRefreshTime).toEqual(expect.any(String));
    }
    const beforeGrace = await cubeCacheBytes();
    expect(beforeGrace).toBeGreaterThan(CAP_BYTES);

    await new Promise((resolve) => setTimeout(resolve, 10_500));
    const res = await load(service, { measures: ['WebEvents.count'] }).expect(200);
    expect(res.body.data).toEqual([{ 'WebEvents.count': String(events) }]);
    expect(res.body.lastRefreshTime).toEqual(expect.any(String));
    // The last answer (a count and its refresh key) is small and young; everything else fits the cap.
    const after = await cubeCacheBytes();
    expect(after).toBeLessThanOrEqual(CAP_BYTES + 10_000);
    expect(after).toBeGreaterThan(0);
  }, 120_000);
});
