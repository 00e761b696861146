import { csvHeader } from './lines';
import type { Accessors, Format } from './source';
import { quoteIdentifier, sqlLiteral } from '../sql';

/**
 * The formats sources share, each for a source's canonical fields: one JSON
 * object a line, CSV under a header of the field names, Parquet with columns
 * of the field names, and tab-separated fields in a fixed order without a
 * header. A source lists the ones it reads (sources/), beside formats of its
 * own (CloudFront's logs).
 */

/**
 * NDJSON: each line is parsed once, into its keys and their values as JSON
 * tokens (a string quoted, a number as written); a string field's text is
 * its token unquoted. `known` tells keys that are no field but no error
 * either (SQL over `k`).
 */
export function ndjsonFormat(fields: readonly string[], known = 'false'): Format {
  const raw = (f: string) => `json_values[indexOf(json_keys, ${sqlLiteral(f)})]`;
  const accessors: Accessors = {
    columns: `JSONExtractKeysAndValuesRaw(raw) AS json_fields, json_fields.1 AS json_keys, json_fields.2 AS json_values`,
    text: (f) => `if(startsWith(${raw(f)}, '"'), JSONExtractString(${raw(f)}), ${raw(f)})`,
    // The first occurrence of the key, as JSONExtractRaw takes it; '' when there is none.
    raw,
    has: (f) => `has(json_keys, ${sqlLiteral(f)})`,
    json: true,
    unknown: `arrayFilter(k -> NOT has(${sqlLiteral([...fields])}, k) AND NOT (${known}), json_keys)`,
    // A line that is not a JSON object parses to no keys (isValidJSON would parse each line a second time).
    isRecord: `notEmpty(json_keys) OR match(raw, '^\\s*[{]\\s*[}]\\s*$')`,
    notARecord: 'not a JSON object',
    line: 'raw',
  };
  return { reader: 'lines', accessors: () => accessors };
}

/**
 * CSV: a header line of field names, then a record a line; the reader gives
 * each field as a column of its name ('' when the header lacks it) and
 * `csv_extra`, which holds what a record has beyond the header's fields.
 */
export function csvFormat(fields: readonly string[]): Format {
  return {
    reader: 'csv',
    header: (source) => csvHeader(source),
    accessors: (header) => ({
      columns: '',
      text: (f) => quoteIdentifier(f),
      raw: (f) => quoteIdentifier(f),
      has: (f) => (header.includes(f) ? 'true' : 'false'),
      json: false,
      unknown: 'CAST([] AS Array(String))',
      isRecord: `csv_extra = ''`,
      notARecord: 'not a CSV record: more fields than the header names',
      line: textOfFields(fields, quoteIdentifier),
    }),
  };
}

/**
 * Parquet: the columns named as the fields, each read as text by ClickHouse's
 * Parquet reader (a number as written, a timestamp as
 * `YYYY-MM-DD hh:mm:ss[.fff…]` in UTC); a field the file lacks, or a null, is
 * absent. Columns of other names are not read.
 */
export function parquetFormat(fields: readonly string[]): Format {
  const column = (f: string) => `ifNull(${quoteIdentifier(f)}, '')`;
  const accessors: Accessors = {
    columns: '',
    text: column,
    raw: column,
    has: (f) => `isNotNull(${quoteIdentifier(f)})`,
    json: false,
    unknown: 'CAST([] AS Array(String))',
    isRecord: 'true',
    notARecord: '',
    line: textOfFields(fields, column),
  };
  return { reader: 'parquet', accessors: () => accessors };
}

/**
 * Tab-separated fields in `order`, no header, no escaping (a field holds no
 * tab or newline): a line of another number of fields is no record.
 */
export function positionalFormat(order: readonly string[], description: string): Format {
  const cell = (f: string) => {
    const i = order.indexOf(f);
    return i < 0 ? "''" : `tsv_cells[${i + 1}]`;
  };
  const accessors: Accessors = {
    columns: `splitByChar('\t', raw) AS tsv_cells`,
    text: cell,
    raw: cell,
    has: (f) => `${cell(f)} != ''`,
    json: false,
    unknown: 'CAST([] AS Array(String))',
    isRecord: `length(tsv_cells) = ${order.length}`,
    notARecord: `not ${order.length} tab-separated fields (${description})`,
    line: 'raw',
  };
  return { reader: 'lines', accessors: () => accessors };
}

/** A row's fields as one JSON object, for the reject file of a format whose reader gives columns. */
function textOfFields(fields: readonly string[], value: (f: string) => string): string {
  return `toJSONString(map(${fields.map((f) => `${sqlLiteral(f)}, ${value(f)}`).join(', ')}))`;
}

/**
 * The times the warehouse's DateTime columns hold: ClickHouse wraps a time
 * outside them silently (epoch milliseconds read as seconds landed in 2046,
 * 1960 in 2096), so a check refuses them by name.
 */
export const LAST_EPOCH_SECOND = 2 ** 32 - 1;
export const FIRST_TIME = '1970-01-01T00:00:00Z';
export const LAST_TIME = '2106-02-07T06:28:15Z';

/**
 * ISO 8601, extended (`2026-01-05T23:30:00.250+05:30`, a space for the T as
 * RFC 3339 allows) or basic (`20260105T233000Z`), with a zone, or (`zone:
 * 'optional'`) without one. Each field is held to its range here:
 * ClickHouse's best-effort parser, which reads the matched text, rolls
 * `T25:00` into the next day and takes an offset of +25:00.
 */
export function isoTimePattern(zone: 'required' | 'optional'): string {
  const [month, day, hour, sixty] = ['(0[1-9]|1[0-2])', '(0[1-9]|[12][0-9]|3[01])', '([01][0-9]|2[0-3])', '[0-5][0-9]'];
  const fraction = '([.][0-9]+)?';
  const offset = `(Z|[+-]${hour}(:?${sixty})?)`;
  const extended = `[0-9]{4}-${month}-${day}[T ]${hour}:${sixty}(:${sixty}${fraction})?`;
  const basic = `[0-9]{4}${month}${day}T${hour}${sixty}${sixty}${fraction}`;
  return `^(${extended}|${basic})${offset}${zone === 'optional' ? '?' : ''}$`;
}

/**
 * A time field's text as DateTime64(3, 'UTC'), or NULL when it is no time of
 * the pattern (isoTimePattern; one without a zone is UTC). Whether it lies
 * within the times the warehouse holds is the check's (FIRST_TIME … LAST_TIME).
 */
export function timeSql(text: string, zone: 'required' | 'optional'): string {
  return `if(match(${text}, ${sqlLiteral(isoTimePattern(zone))}), parseDateTime64BestEffortOrNull(${text}, 3, 'UTC'), NULL)`;
}

/** Whether a DateTime64 lies outside the times the warehouse holds (FIRST_TIME … LAST_TIME). */
export function outsideTimesSql(time: string): string {
  return `(${time} < toDateTime64(0, 3, 'UTC') OR ${time} > toDateTime64(${LAST_EPOCH_SECOND}, 3, 'UTC'))`;
}

/**
 * An address field's text (`ip_text`) as `ip` (IPv6: an IPv4 address as
 * `::ffff:a.b.c.d`; `::` when it is no address) and `ip4` (the IPv4 address,
 * also of one written IPv4-mapped, as dual-stack servers write it; 0.0.0.0
 * for an IPv6 address or none): the places, the listeners and the joins read
 * them so.
 */
export function addressSql(text: string): string {
  return `${text} AS ip_text,
      multiIf(isIPv4String(ip_text), toIPv6(toIPv4(ip_text)), isIPv6String(ip_text), toIPv6(ip_text), toIPv6('::')) AS ip,
      multiIf(isIPv4String(ip_text), toIPv4(ip_text), isIPAddressInRange(IPv6NumToString(ip), '::ffff:0:0/96'), toIPv4(substring(IPv6NumToString(ip), 8)), toIPv4(0)) AS ip4`;
}
