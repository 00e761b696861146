import { BuildStamps, supersededBuilds } from '../../../src/cube/engine/build-stamps';

/** Cube 0.33's own encoding of a stamp in a rollup table's name (query-orchestrator's encodeTimeStamp). */
const secondOf = (ms: number) => Math.floor(ms / 1000).toString(32);
const NOW = Date.parse('2026-11-26T23:59:59.900Z');

describe('BuildStamps', () => {
  it('gives builds within one second stamps of different seconds, in order', () => {
    const stamps = new BuildStamps(() => NOW);
    const given = [stamps.next(), stamps.next(), stamps.next()];
    expect(given[0]).toBe(NOW);
    expect(new Set(given.map(secondOf)).size).toBe(3);
    expect([...given].sort((a, b) => a - b)).toEqual(given);
  });

  it('follows the clock once builds come slower than one a second', () => {
    let now = NOW;
    const stamps = new BuildStamps(() => now);
    stamps.next();
    stamps.next();
    now += 5_000;
    expect(stamps.next()).toBe(now);
  });

  it('stamps after a table of the same second seen in the database (an earlier process, another replica)', () => {
    const stamps = new BuildStamps(() => NOW);
    stamps.saw([`web_events_from_podcast_funnel_conversions_by_step_qq3jrvpy_zz332dkg_${secondOf(NOW)}`]);
    const next = stamps.next();
    expect(secondOf(next)).not.toBe(secondOf(NOW));
    expect(next).toBeGreaterThan(NOW);
  });

  it('reads Cube’s older names in milliseconds too', () => {
    const stamps = new BuildStamps(() => NOW);
    stamps.saw([`a_rollup_5faajh5b_hveazcfc_${NOW + 2_000}`]);
    expect(stamps.next()).toBe(NOW + 3_000);
  });

  it('skips names that are not Cube’s, and stamps far ahead of the clock', () => {
    const stamps = new BuildStamps(() => NOW);
    stamps.saw(['funnel_hourly', 'a_b', `a_rollup_x_y_${secondOf(NOW + 86_400_000)}`, 'some_other_table_vvvvvvvvvvvv']);
    expect(stamps.next()).toBe(NOW);
  });
});

describe('supersededBuilds', () => {
  const name = (structure: string, ms: number) => `rolled_downloads_by_country20260101_content_${structure}_${secondOf(ms)}`;

  it('names every build but the newest of each rollup and structure (context), whatever the order', () => {
    const tables = [name('acme', NOW), name('acme', NOW + 2000), name('other', NOW - 5000), name('acme', NOW + 1000)];
    expect(supersededBuilds(tables).sort()).toEqual([name('acme', NOW), name('acme', NOW + 1000)].sort());
    expect(supersededBuilds([...tables].reverse()).sort()).toEqual([name('acme', NOW), name('acme', NOW + 1000)].sort());
  });

  it('leaves the only build of a context, another rollup’s, and tables that are not Cube’s', () => {
    const other = `rolled_downloads_by_country20260102_content_acme_${secondOf(NOW - 9000)}`;
    expect(supersededBuilds([name('acme', NOW), other, 'funnel_hourly', 'a_b'])).toEqual([]);
  });

  it('reads Cube’s older decimal millisecond stamps too', () => {
    const older = 'rolled_downloads_by_country20260101_content_acme_1764201599000';
    expect(supersededBuilds([older, name('acme', NOW)])).toEqual([older]);
  });
});
