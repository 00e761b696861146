import * as cubeDates from '@cubejs-backend/api-gateway/dist/src/dateParser';
import moment from 'moment-timezone';

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
    dates = Object.freeze(withExactTimes(range, timezone, dateParser(range, timezone)));
    resolved.set(key, dates);
  }
  return dates;
}

/** Cube's "from … to …" phrase, split as its parser splits it. */
const FROM_TO = /^from (.*) to (.*)$/i;
/** A date with a time of day, optionally an offset. */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Cube's parser reads each side of "from … to …" with chrono and rounds it
 * to its day (to its hour, minute or second only when the phrase names
 * one): "from 2026-10-20T06:00:00 to 2026-10-20T20:00:00" covered all of
 * 20 October, without an error. A side written as a date and time is kept
 * to the millisecond, as the same bounds in a `dateRange` array are (an
 * offset read as that instant, see localTime), a side written as a date is
 * its whole day (wholeDay), and a relative side is counted as Cube counts
 * "last 7 days" (relativeSide), then rounded as Cube rounds it. So is a
 * whole phrase that is a date and time ("2026-10-20T10:00:00"): that
 * instant, as the array `["2026-10-20T10:00:00"]` is, where Cube's parser
 * gave its whole day.
 */
function withExactTimes(range: string, timezone: string, parsed: string[]): string[] {
  const whole = exactTime(range.trim(), timezone);
  if (whole !== undefined) return [whole, whole];
  const sides = FROM_TO.exec(range.trim());
  if (sides === null || parsed.length !== 2) return parsed;
  const rounding = ROUNDINGS.find((unit) => range.toLowerCase().includes(unit)) ?? 'day';
  return parsed.map((bound, i) => {
    const side = sides[i + 1].trim();
    const end = i === 0 ? 'start' : 'end';
    return exactTime(side, timezone) ?? wholeDay(side, end) ?? relativeSide(side, timezone, rounding, end) ?? bound;
  });
}

/** The units Cube rounds both sides of "from … to …" to when the phrase names one anywhere, finest first; else the day. */
const ROUNDINGS = ['second', 'minute', 'hour'] as const;
const RELATIVE = /^(?:now|(\d+) (second|minute|hour|day|week|month|quarter|year)s? (ago|from now))$/i;

/**
 * "now", "3 hours ago", "2 months from now" in `timezone`, by moment's
 * arithmetic as Cube's own "last 3 hours" and "last 2 months" count:
 * hours and shorter on the clock's instants, days and longer on the
 * calendar, a month's day past the end of a shorter month its last day.
 * chrono counted on the wall clock of the process's zone: a side three
 * hours back across a daylight-saving change was two or four hours back,
 * and "1 month ago" on 31 March was 3 March.
 */
function relativeSide(text: string, timezone: string, rounding: moment.unitOfTime.StartOf, end: 'start' | 'end'): string | undefined {
  const match = RELATIVE.exec(text);
  if (match === null) return undefined;
  const at = moment.tz(timezone);
  const [, count, unit, direction] = match;
  if (count !== undefined) at.add((direction.toLowerCase() === 'ago' ? -1 : 1) * Number(count), unit.toLowerCase() as moment.unitOfTime.DurationConstructor);
  return (end === 'start' ? at.startOf(rounding) : at.endOf(rounding)).format('YYYY-MM-DDTHH:mm:ss.SSS');
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A side written as a date is its whole day, whatever the phrase's other
 * side names: chrono reads a date as its noon, and Cube rounds a side to
 * the hour, minute or second when the phrase names one anywhere, so "from
 * 2026-11-01 to 2 hours ago" began at noon on 1 November.
 */
function wholeDay(text: string, end: 'start' | 'end'): string | undefined {
  if (!DATE_ONLY.test(text)) return undefined;
  return `${text}T${end === 'start' ? '00:00:00.000' : '23:59:59.999'}`;
}

/** A date and time as Cube writes a local time of `timezone` ('2026-10-20T06:00:00.000'); undefined for anything else. */
function exactTime(text: string, timezone: string): string | undefined {
  const match = DATE_TIME.exec(text);
  if (match === null) return undefined;
  const [, day, hour, minute, second = '00', fraction = '', offset] = match;
  if (offset !== undefined) return localTime(text, timezone);
  return `${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, '0').slice(0, 3)}`;
}

/** The clock time of an instant written with an offset, in a time zone, as Cube writes local times (`2026-10-20T06:00:00.000`). */
export function localTime(instant: string, zone: string): string {
  const ms = Date.parse(instant.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) return instant;
  const clock = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const part = Object.fromEntries(clock.formatToParts(ms).map(({ type, value }) => [type, value]));
  const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, '0');
  return `${part.year.padStart(4, '0')}-${part.month}-${part.day}T${part.hour}:${part.minute}:${part.second}.${millis}`;
}
