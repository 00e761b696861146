import type { DemoConfig } from '../../../src/config';

export const DATABASE = 'analytics';
/** Cube's rollup tables (CUBE_ROLLUP_DATABASE's default for DATABASE). */
export const ROLLUP_DATABASE = 'analytics_rollups';
export const API_KEY = 'test-key-0123456789abcdef';
/** Small, so the suite builds it in seconds; ends today so relative ranges find rows. */
export const TEST_DEMO: DemoConfig = { enabled: true, scale: 0.02, seed: 7, days: 30 };
export const TEST_END_DATE = new Date();
/** The time zone the tier's engines run in (global-setup.ts): far from UTC, so a day starts 14 hours apart. */
export const ENGINE_TIME_ZONE = 'Pacific/Kiritimati';
