/**
 * The date-range phrases the service accepts: the forms Cube 0.33's parser
 * reads as what they say (src/cube/engine/date-parser.ts, which counts the
 * sides of `from … to …` itself), and no other.
 * Cube hands every phrase its regular expressions do not match to chrono,
 * which reads the first date-like words it finds and drops the rest, so
 * "past 30 days", "since 2026-11-01" and "November 2026" each became one
 * day; and its regular expressions are not anchored, so "from 7 days ago to
 * today" was today and "last weekend" last week. A phrase is accepted when
 * the whole of it is one form below (any case, words one space apart);
 * anything else is refused with the forms and, where one is close, the
 * phrase or dates the client most likely meant (docs/reference/query-language.md#date-ranges).
 */

const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;

const UNIT = `(?:${UNITS.join('|')})`;
/** A count of units: 1 or more, without leading zeros (Cube's `last 0 days` ended before it began). */
const COUNT = '[1-9]\\d*';
const DATE = '\\d{4}-\\d{2}-\\d{2}';
/** A date and time as a `dateRange` bound takes it (isDatePhrase checks that it exists). */
const DATE_TIME = `${DATE}[t ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:z|[+-]\\d{2}:?\\d{2})?`;
/** One side of `from … to …`. */
const POINT = `(?:${DATE_TIME}|${DATE}|now|${COUNT} ${UNIT}s? (?:ago|from now))`;

const PHRASE = new RegExp(
  `^(?:today|yesterday|tomorrow|(?:this|last|next) ${UNIT}|(?:last|next) ${COUNT} ${UNIT}s?|from ${POINT} to ${POINT}|${DATE_TIME}|${DATE})$`,
  'i',
);

/** ISO 8601 as Cube reads it (moment's ISO parser): a date, optionally a time to the minute or finer, optionally a zone. */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Whether `value` is a date or time that exists on the calendar and the clock. */
export function isDateValue(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = ISO.exec(value);
  if (!match) return false;
  const [year, month, day, hour = '0', minute = '0', second = '0'] = match.slice(1).map((part) => part ?? undefined);
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  const date = new Date(Date.UTC(y, m - 1, d));
  return (
    date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d && Number(hour) < 24 && Number(minute) < 60 && Number(second) < 60
  );
}

/** Dates written inside a phrase ("from 2026-13-01 to now"): chrono would read them some other way rather than refuse them. */
const DATE_IN_TEXT = /\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?/gi;

/** Whether `text` is one of the accepted phrases, every date in it one that exists. */
export function isDatePhrase(text: string): boolean {
  return PHRASE.test(text) && [...text.matchAll(DATE_IN_TEXT)].every(([written]) => isDateValue(written.toUpperCase()));
}

/** The accepted forms, as a refusal lists them. */
export const DATE_PHRASE_FORMS = `today | yesterday | tomorrow | this|last|next <unit> | last|next <N> <unit>s | from <point> to <point>, a point being a date, a date and time, now, <N> <unit>s ago or <N> <unit>s from now; a unit is ${UNITS.join(', ')}`;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const pad = (n: number) => String(n).padStart(2, '0');
const lastDay = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const monthRange = (year: number, month: number) => `["${year}-${pad(month)}-01", "${year}-${pad(month)}-${pad(lastDay(year, month))}"]`;

/** A month named in full or by its first three letters ("nov", "November"), 1–12; undefined for anything else. */
function monthNamed(word: string): number | undefined {
  const index = MONTHS.findIndex((name) => word === name || (word.length >= 3 && name.startsWith(word)));
  return index < 0 ? undefined : index + 1;
}

/**
 * Cube reads a phrase naming today, yesterday or tomorrow anywhere as that
 * day, before it looks for `from … to …`: so none can be a side. The point
 * that means the same once the side is rounded to its day.
 */
const DAY_POINTS: Readonly<Record<string, string>> = { today: 'now', yesterday: '1 day ago', tomorrow: '1 day from now' };

/**
 * What a refused phrase most likely meant, written as the service reads it
 * (a phrase, or a `dateRange` of two dates): empty when nothing is close.
 */
export function datePhraseSuggestions(text: string): string[] {
  const words = text.trim().toLowerCase().split(/\s+/).join(' ');
  if (words !== text && isDatePhrase(words)) return [`"${words}"`];
  const suggestions: string[] = [];
  const add = (phrase: string, means?: string) => {
    if (phrase !== words && isDatePhrase(phrase)) suggestions.push(means === undefined ? `"${phrase}"` : `"${phrase}" (${means})`);
  };

  const past = /^(?:the )?(?:past|previous|prior|last|recent) (?:(\d+) )?([a-z]+?)s?$/.exec(words);
  if (past !== null && (UNITS as readonly string[]).includes(past[2])) {
    const [, count = '1', unit] = past;
    const current = unit === 'day' ? 'today' : `this ${unit}`;
    const rounded = unit === 'second' || unit === 'minute' || unit === 'hour' ? unit : 'day';
    const through = `the ${rounded} ${count === '1' ? `a ${unit}` : `${count} ${unit}s`} ago through ${rounded === 'day' ? 'today' : `this ${rounded}`}`;
    if (past[1] === undefined) add(`last ${unit}`, `the whole ${unit} before ${current}`);
    else add(`last ${count} ${unit}s`, `${count} whole ${unit}s, ${current} left out`);
    add(`from ${count} ${unit}${count === '1' ? '' : 's'} ago to now`, through);
  }

  const side = (point: string) => (/second|minute|hour/.test(words) ? point : (DAY_POINTS[point] ?? point));
  const since = /^(?:since|starting|from) (.+?)(?: (?:on|onwards|onward|until now|to date))?$/.exec(words);
  if (since !== null && !/ to /.test(words)) add(`from ${side(since[1])} to now`);
  const fromTo = /^(?:from|between) (.+?) (?:to|and|until|till|through|thru|-) (.+)$/.exec(words);
  if (fromTo !== null) add(`from ${side(fromTo[1])} to ${side(fromTo[2])}`);

  const month = /^([a-z]+)\.? (\d{4})$/.exec(words) ?? /^(\d{4})-(\d{2})$/.exec(words);
  if (month !== null) {
    const [year, number] = /^\d{4}$/.test(month[1]) ? [Number(month[1]), Number(month[2])] : [Number(month[2]), monthNamed(month[1])];
    if (number !== undefined && number >= 1 && number <= 12) suggestions.push(monthRange(year, number));
  }
  const year = /^(\d{4})$/.exec(words);
  if (year !== null) suggestions.push(`["${year[1]}-01-01", "${year[1]}-12-31"]`);

  return suggestions;
}
