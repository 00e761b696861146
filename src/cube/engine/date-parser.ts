import * as cubeDates from '@cubejs-backend/api-gateway/dist/src/dateParser';

/**
 * Cube's own parser of date ranges and phrases ("last 7 days"), which its
 * gateway does not export: reached by its dist path, here only, so an
 * upgrade that moves it breaks one import (test/unit/cube/cube-internals.test.ts).
 * Taken when this module loads: normalize-once.ts lends Cube's module
 * resolveDateRange in its place during a normalization.
 */
export const dateParser = cubeDates.dateParser;

let resolvedSecond = -1;
const resolved = new Map<string, readonly string[]>();

/**
 * What `range` means now in `timezone`, by Cube's parser; throws as it does.
 * A request reads its phrases three times (admission's check of the dates,
 * the size check, the result cache's key), and a parse costs more than the
 * rest of a cached request: 6–7 % of the service's CPU in a cached run at
 * 64 connections (docs/benchmarks.md). Cube's parser rounds every relative
 * range to a second or coarser, so its answer for a phrase and time zone
 * cannot change within one second of the clock: answers are kept for the
 * current second only, which also bounds how many are kept.
 */
export function resolveDateRange(range: string, timezone: string): readonly string[] {
  const second = Math.floor(Date.now() / 1000);
  if (second !== resolvedSecond) {
    resolved.clear();
    resolvedSecond = second;
  }
  const key = `${timezone}\n${range}`;
  let dates = resolved.get(key);
  if (dates === undefined) {
    dates = Object.freeze(dateParser(range, timezone));
    resolved.set(key, dates);
  }
  return dates;
}
