import type { DemoConfig } from '../../../src/config';

export const DATABASE = 'analytics';
/** Cube's rollup tables (CUBE_ROLLUP_DATABASE's default for DATABASE). */
export const ROLLUP_DATABASE = 'analytics_rollups';
export const API_KEY = 'test-key-0123456789abcdef';
/** Small, so the suite builds it in seconds; ends today so relative ranges find rows. */
export const TEST_DEMO: DemoConfig = { enabled: true, scale: 0.02, seed: 7, days: 30 };
/**
 * The last day of the demo window (UTC): today by the clock (TEST_NOW's day when it is set, see clock.ts), read once
 * by the global setup, which exports it as TEST_END_DATE so that every worker agrees on it even when the run
 * crosses midnight.
 */
export const TEST_END_DATE = utcDay(process.env.TEST_END_DATE ?? testNow().toISOString().slice(0, 10));
/**
 * The calendar the demo rows follow (weekdays, release days): fixed, so the rows are the same whatever day the run
 * builds them, moved by whole days to end on TEST_END_DATE.
 */
export const TEST_CALENDAR_END_DATE = utcDay('2026-06-30');

function testNow(): Date {
  const now = process.env.TEST_NOW === undefined ? new Date() : new Date(process.env.TEST_NOW);
  if (Number.isNaN(now.getTime())) throw new Error(`TEST_NOW must be an ISO instant, e.g. 2028-02-29T12:00:00Z; got ${process.env.TEST_NOW}`);
  return now;
}

function utcDay(text: string): Date {
  const date = new Date(`${text}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || date.toISOString().slice(0, 10) !== text) throw new Error(`TEST_END_DATE must be a date, YYYY-MM-DD; got ${text}`);
  return date;
}
/** The time zone the tier's engines run in (global-setup.ts): far from UTC, so a day starts 14 hours apart. */
export const ENGINE_TIME_ZONE = 'Pacific/Kiritimati';
