/**
 * What an accepted date-range phrase means (docs/reference/query-language.md, "Date ranges"),
 * worked out from the clock with Intl and calendar arithmetic alone: no
 * moment and no chrono, which the service resolves phrases with. Wall-clock
 * times of a zone are numbers of milliseconds read as UTC.
 */

const HOUR = 3_600_000;
const UNIT_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: HOUR };
const MONTHS_OF: Record<string, number> = { month: 1, quarter: 3, year: 12 };

/** The wall clock of `instant` in `zone`, as a UTC-read number. */
function wallClock(instant: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(instant)
      .map(({ type, value }) => [type, Number(value)]),
  );
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second, ((instant % 1000) + 1000) % 1000);
}

const written = (clock: number) => new Date(clock).toISOString().slice(0, 23);

/** A wall clock moved by whole calendar units, its time of day kept; a day past the month's end is its last day. */
function calendar(clock: number, n: number, unit: string): number {
  const at = new Date(clock);
  if (unit === 'day' || unit === 'week') return clock + n * (unit === 'week' ? 7 : 1) * 24 * HOUR;
  const month = at.getUTCMonth() + n * MONTHS_OF[unit];
  const lastDay = new Date(Date.UTC(at.getUTCFullYear(), month + 1, 0)).getUTCDate();
  return Date.UTC(
    at.getUTCFullYear(),
    month,
    Math.min(at.getUTCDate(), lastDay),
    at.getUTCHours(),
    at.getUTCMinutes(),
    at.getUTCSeconds(),
    at.getUTCMilliseconds(),
  );
}

/** The wall clock `n` units from now: hours and shorter by the clock's instants (a DST change counts), days and longer by the calendar. */
function shifted(now: number, zone: string, n: number, unit: string): number {
  return unit in UNIT_MS ? wallClock(now + n * UNIT_MS[unit], zone) : calendar(wallClock(now, zone), n, unit);
}

function startOf(clock: number, unit: string): number {
  if (unit in UNIT_MS) return clock - (clock % UNIT_MS[unit]);
  const at = new Date(clock);
  const [y, m, d] = [at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()];
  switch (unit) {
    case 'day':
      return Date.UTC(y, m, d);
    case 'week':
      return Date.UTC(y, m, d - ((at.getUTCDay() + 6) % 7));
    case 'month':
      return Date.UTC(y, m, 1);
    case 'quarter':
      return Date.UTC(y, m - (m % 3), 1);
    default:
      return Date.UTC(y, 0, 1);
  }
}

const endOf = (clock: number, unit: string) => (unit in UNIT_MS ? startOf(clock, unit) + UNIT_MS[unit] : calendar(startOf(clock, unit), 1, unit)) - 1;

const period = (clock: number, unit: string) => [written(startOf(clock, unit)), written(endOf(clock, unit))];

/** One side of `from … to …`: its start (`from`) or end (`to`), rounded to `unit` unless written as a date or a time. */
function side(text: string, now: number, zone: string, unit: string, end: boolean): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T${end ? '23:59:59.999' : '00:00:00.000'}`;
  if (/[t ]\d{2}:\d{2}/i.test(text)) {
    if (/(?:z|[+-]\d{2}:?\d{2})$/i.test(text)) return written(wallClock(Date.parse(text), zone));
    return written(Date.parse(`${text.replace(' ', 'T')}Z`));
  }
  const relative = /^(\d+) ([a-z]+?)s? (ago|from now)$/.exec(text);
  const clock = relative === null ? wallClock(now, zone) : shifted(now, zone, Number(relative[1]) * (relative[3] === 'ago' ? -1 : 1), relative[2]);
  return written(end ? endOf(clock, unit) : startOf(clock, unit));
}

/** What an accepted phrase means at `now` in `zone`, by docs/reference/query-language.md's table. */
export function meaning(phrase: string, now: number, zone: string): string[] {
  const text = phrase.toLowerCase();
  const day = ({ today: 0, yesterday: -1, tomorrow: 1 } as Record<string, number>)[text];
  if (day !== undefined) return period(shifted(now, zone, day, 'day'), 'day');
  let match = /^(this|last|next) ([a-z]+)$/.exec(text);
  if (match !== null) return period(shifted(now, zone, { this: 0, last: -1, next: 1 }[match[1]]!, match[2]), match[2]);
  match = /^(last|next) (\d+) ([a-z]+?)s?$/.exec(text);
  if (match !== null) {
    const [, which, n, unit] = match;
    const [first, last] = which === 'last' ? [-Number(n), -1] : [1, Number(n)];
    return [period(shifted(now, zone, first, unit), unit)[0], period(shifted(now, zone, last, unit), unit)[1]];
  }
  match = /^from (.+) to (.+)$/.exec(text);
  if (match !== null) {
    const unit = ['second', 'minute', 'hour'].find((name) => text.includes(name)) ?? 'day';
    return [side(match[1], now, zone, unit, false), side(match[2], now, zone, unit, true)];
  }
  return [side(text, now, zone, 'day', false), side(text, now, zone, 'day', true)];
}
