import { quoteIdentifier, sqlLiteral, withClause } from '../sql';
import { REQUEST_PLACES } from '../derive/downloads';
import { classifiedSql, cleanSql, uaNameSql, userAgentConstants } from '../derive/user-agents';
import type { ImportOptions } from './import';
import type { Lines } from './lines';

/**
 * What a line of an import must hold to become a request in podcast_events:
 * the canonical record's fields, how each format's line gives them
 * (accessors), and the SQL that parses and checks them (the first reason a
 * row cannot be imported), then writes the valid ones in podcast_events'
 * layout.
 */
export const IMPORT_FORMATS = ['ndjson', 'csv', 'cloudfront'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/**
 * The canonical record's fields, named like OP3's exports where a name exists. `requestId` is optional: the request's
 * own id, by which a second delivery of it is recognised (requestIdSql).
 */
export const FIELDS = ['time', 'ip', 'method', 'status', 'url', 'userAgent', 'referer', 'range', 'account', 'requestId'];

/** A file refused as a whole before any row is read (e.g. an unknown CSV column). */
export class ImportRefused extends Error {}

/**
 * CloudFront standard logs write each field's value with the bytes 0–32 and 127 and over and the characters
 * < > " # % { } | \ ^ ~ [ ] ` ' percent-encoded (RFC 1738), once: a space the client sent is `%20`, and the `%20` a
 * client sent itself (an iOS app's name in its user agent, `Pocket%20Casts/7.96`, or an encoded path) is `%2520`. Each
 * field is decoded once, which gives it back as the client sent it, as an NDJSON or CSV file holds it (decoded twice,
 * `Pocket%20Casts` came out as `Pocket Casts`: another listener). A `-` is an empty field. The URL is the one
 * requested: `https://`, the Host header, the path (cs-uri-stem) and the query (cs-uri-query, logged without its `?`).
 */
export function cloudFrontAccessors(fields: string[]): Accessors {
  const column = (name: string) => {
    const i = fields.indexOf(name);
    if (i < 0) return "''";
    return `if(cloudfront_cells[${i + 1}] = '-', '', cloudfront_cells[${i + 1}])`;
  };
  const decoded = (name: string) => `decodeURLComponent(${column(name)})`;
  const host = decoded(fields.includes('x-host-header') ? 'x-host-header' : 'cs(Host)');
  const query = column('cs-uri-query');
  const text: Record<string, string> = {
    time: `concat(${column('date')}, 'T', ${column('time')}, 'Z')`,
    ip: column('c-ip'),
    method: column('cs-method'),
    status: column('sc-status'),
    url: `concat('https://', ${host}, ${decoded('cs-uri-stem')}, if(${query} = '', '', concat('?', ${decoded('cs-uri-query')})))`,
    userAgent: decoded('cs(User-Agent)'),
    referer: decoded('cs(Referer)'),
    // CloudFront logs the range it served, not the header: bytes=<start>-<end> stands in for it.
    range: fields.includes('sc-range-start')
      ? `if(${column('sc-range-start')} = '', '', concat('bytes=', ${column('sc-range-start')}, '-', ${column('sc-range-end')}))`
      : "''",
    account: "''",
    requestId: decoded('x-edge-request-id'),
  };
  return {
    columns: `splitByChar('\t', raw) AS cloudfront_cells`,
    text: (f) => text[f],
    raw: (f) => text[f],
    has: () => 'false',
    unknown: 'CAST([] AS Array(String))',
    isRecord: `length(cloudfront_cells) = ${fields.length}`,
    line: 'raw',
  };
}

/** How the validation reads a field of a line, and the line's text for the reject file. */
export interface Accessors {
  /** Columns (`expr AS name`) the others read, computed once per line. */
  columns: string;
  text(field: string): string;
  /** The field's JSON token (a number stays unquoted), or its text for CSV. */
  raw(field: string): string;
  has(field: string): string;
  unknown: string;
  isRecord: string;
  line: string;
}

/**
 * NDJSON: each line is parsed once, into its keys and their values as JSON
 * tokens (a string quoted, a number as written); a string field's text is
 * its token unquoted.
 */
export const JSON_ACCESSORS: Accessors = {
  columns: `JSONExtractKeysAndValuesRaw(raw) AS json_fields, json_fields.1 AS json_keys, json_fields.2 AS json_values`,
  text: (f) => `if(startsWith(${JSON_ACCESSORS.raw(f)}, '"'), JSONExtractString(${JSON_ACCESSORS.raw(f)}), ${JSON_ACCESSORS.raw(f)})`,
  // The first occurrence of the key, as JSONExtractRaw takes it; '' when there is none.
  raw: (f) => `json_values[indexOf(json_keys, ${sqlLiteral(f)})]`,
  has: (f) => `has(json_keys, ${sqlLiteral(f)})`,
  unknown: `arrayFilter(k -> NOT has(${sqlLiteral(FIELDS)}, k), json_keys)`,
  // A line that is not a JSON object parses to no keys (isValidJSON would parse each line a second time).
  isRecord: `notEmpty(json_keys) OR match(raw, '^\\s*[{]\\s*[}]\\s*$')`,
  line: 'raw',
};

export function csvAccessors(header: string[]): Accessors {
  return {
    columns: 'csv_extra',
    text: (f) => quoteIdentifier(f),
    raw: (f) => quoteIdentifier(f),
    has: (f) => (header.includes(f) ? 'true' : 'false'),
    unknown: 'CAST([] AS Array(String))',
    isRecord: `csv_extra = ''`,
    line: `toJSONString(map(${FIELDS.map((f) => `${sqlLiteral(f)}, ${quoteIdentifier(f)}`).join(', ')}))`,
  };
}

/** The checked rows: their parsed columns, the first reason a row cannot be imported ('' when it can), and the line's text for rejected rows. */
export const CHECKED_COLUMNS = [
  'line UInt64',
  'raw String',
  'reason String',
  "ts DateTime('UTC')",
  'ip IPv6',
  'ip4 IPv4',
  'method String',
  'status UInt16',
  'url String',
  'token String',
  'media String',
  'raw_ua String',
  'referer String',
  'byte_range String',
  'account_id String',
  'request_key String',
];

/**
 * Blocks of at most 128k rows / 64 MB on their way into the staging table
 * (1M rows by default): a block is held, sorted and written with its
 * projection at once, and ClickHouse's default let the import's memory grow
 * by most of a gigabyte. Two threads write the views' blocks side by side.
 * A view writes each block as it comes (its blocks are the insert's, already
 * that size), rather than gathering them to that size: the user-agent view's
 * few rows per block would otherwise reach its table only at the end.
 * The file is read and checked in blocks of 8,192 lines (65,536 by
 * default): each of the check's thirty-odd columns is a block long, and at
 * 65,536 lines the check alone grew RSS by about 350 MB (about 170 MB at
 * 8,192; a million NDJSON requests, `FORMAT Null`).
 */
const INSERT_SETTINGS =
  'max_block_size = 8192, max_insert_threads = 2, min_insert_block_size_rows = 131072, min_insert_block_size_bytes = 67108864, min_insert_block_size_rows_for_materialized_views = 1, min_insert_block_size_bytes_for_materialized_views = 1';

/**
 * The times `podcast_events.ts` (DateTime) holds: ClickHouse wraps a time
 * outside them silently (epoch milliseconds read as seconds landed in 2046,
 * 1960 in 2096), so the check refuses them by name.
 */
const LAST_EPOCH_SECOND = 2 ** 32 - 1;
const FIRST_TIME = '1970-01-01T00:00:00Z';
const LAST_TIME = '2106-02-07T06:28:15Z';

/**
 * ISO 8601 with a zone, extended (`2026-01-05T23:30:00.250+05:30`, a space
 * for the T as RFC 3339 allows) or basic (`20260105T233000Z`). Each field
 * is held to its range here: ClickHouse's best-effort parser, which reads the
 * matched text, rolls `T25:00` into the next day and takes an offset of +25:00.
 */
const ISO_TIME = (() => {
  const [month, day, hour, sixty] = ['(0[1-9]|1[0-2])', '(0[1-9]|[12][0-9]|3[01])', '([01][0-9]|2[0-3])', '[0-5][0-9]'];
  const fraction = '([.][0-9]+)?';
  const zone = `(Z|[+-]${hour}(:?${sixty})?)`;
  const extended = `[0-9]{4}-${month}-${day}[T ]${hour}:${sixty}(:${sixty}${fraction})?`;
  const basic = `[0-9]{4}${month}${day}T${hour}${sixty}${sixty}${fraction}`;
  return `^(${extended}|${basic})${zone}$`;
})();

export function validateSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  return `
    SELECT line, if(reason = '', '', line_text) AS raw, reason,
      ts, ip, ip4, method, status, url, token, media, raw_ua, referer, byte_range, account_id, request_key
    FROM (${parseSql(lines, a, options)})
    SETTINGS ${lines.settings ? `${lines.settings}, ` : ''}${INSERT_SETTINGS}`;
}

/**
 * Each line's fields, checked. An IPv4 client logged IPv4-mapped
 * (`::ffff:a.b.c.d`, as dual-stack servers write it) gets that IPv4 address
 * as its `ip4`, as one logged `a.b.c.d` does: the places, the funnel and the
 * PodcastEvents → WebEvents join read ip4.
 */
function parseSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  const prefix = sqlLiteral(options.trackingPrefix);
  // A row's own account stands when it names one; with --account too it must be that one: a row routed to
  // another account than the one the operator named would be a silent move of a network's data.
  const fileAccount = sqlLiteral(options.account ?? '');
  const otherAccount = options.account ? `row_account NOT IN ('', ${fileAccount})` : 'false';
  return `
    SELECT line, ${a.line} AS line_text, ${a.columns},
      ${a.text('time')} AS time_text,
      match(time_text, '^[0-9]+([.][0-9]+)?$') AS time_epoch,
      multiIf(
        time_epoch, if(toFloat64(time_text) <= ${LAST_EPOCH_SECOND}, fromUnixTimestamp64Milli(toInt64(toFloat64(time_text) * 1000), 'UTC'), NULL),
        match(time_text, ${sqlLiteral(ISO_TIME)}), parseDateTime64BestEffortOrNull(time_text, 3, 'UTC'),
        NULL) AS time64,
      toDateTime(ifNull(time64, toDateTime64(0, 3, 'UTC')), 'UTC') AS ts,
      ${a.text('ip')} AS ip_text,
      multiIf(isIPv4String(ip_text), toIPv6(toIPv4(ip_text)), isIPv6String(ip_text), toIPv6(ip_text), toIPv6('::')) AS ip,
      multiIf(isIPv4String(ip_text), toIPv4(ip_text), isIPAddressInRange(IPv6NumToString(ip), '::ffff:0:0/96'), toIPv4(substring(IPv6NumToString(ip), 8)), toIPv4(0)) AS ip4,
      ${a.text('method')} AS method,
      ${a.raw('status')} AS status_raw,
      if(status_raw = '', 200, toUInt16OrZero(status_raw)) AS status,
      ${a.text('url')} AS url,
      extract(url, ${sqlLiteral(`^${prefixPattern(options.trackingPrefix)}([A-Za-z0-9_-]+)/(.+)$`)}) AS token,
      substring(url, length(${prefix}) + length(token) + 2) AS media,
      ${a.text('userAgent')} AS raw_ua,
      ${a.text('referer')} AS referer,
      ${a.text('range')} AS byte_range,
      if(${a.has('account')}, ${a.text('account')}, '') AS row_account,
      if(row_account != '', row_account, ${fileAccount}) AS account_id,
      ${a.raw('requestId')} AS request_key_raw,
      ${options.format === 'ndjson' ? `if(request_key_raw = 'null', '', ${a.text('requestId')})` : a.text('requestId')} AS request_key,
      ${options.ignoreUnknown ? 'CAST([] AS Array(String))' : a.unknown} AS unknown,
      multiIf(
        NOT (${a.isRecord}), ${sqlLiteral(options.format === 'cloudfront' ? 'not as many tab-separated fields as #Fields names' : options.format === 'csv' ? 'not a CSV record: more fields than the header names' : 'not a JSON object')},
        length(unknown) > 0, concat('unknown field ', unknown[1], ' (--ignore-unknown skips unknown fields)'),
        time64 IS NULL AND time_epoch, 'time is epoch seconds past ${LAST_TIME} (epoch milliseconds are not read)',
        time64 IS NULL, 'time is not an ISO 8601 time with a zone or epoch seconds',
        time64 < toDateTime64(0, 3, 'UTC') OR time64 > toDateTime64(${LAST_EPOCH_SECOND}, 3, 'UTC'), 'time is outside ${FIRST_TIME} … ${LAST_TIME}, the times the warehouse holds',
        NOT isIPv4String(ip_text) AND NOT isIPv6String(ip_text), concat('ip is not an IPv4 or IPv6 address: ', ip_text),
        method = '', 'method is missing',
        status_raw != '' AND NOT match(status_raw, '^[0-9]{1,3}$'), 'status is not an HTTP status code',
        token = '', concat('url is not under the tracking prefix ', ${prefix}, ' followed by a token and the media path'),
        account_id = '', 'no account: give the row an account field or the file --account',
        ${otherAccount}, concat('account ', row_account, ' differs from --account ', ${fileAccount}),
        ${options.format === 'ndjson' ? `request_key_raw NOT IN ('', 'null') AND NOT match(request_key_raw, '^("|-?[0-9])')` : 'false'}, 'requestId is not a string or a number',
        '') AS reason
    FROM ${lines.from}`;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The tracking prefix as a pattern whose scheme and host match in any case (RFC 3986 6.2.2.1: `HTTPS://PFX.…` is
 * the same prefix; a CloudFront URL's host is the Host header as the client wrote it), its path as written.
 */
function prefixPattern(prefix: string): string {
  const path = prefix.indexOf('/', prefix.indexOf('://') + 3);
  return `(?i:${escapeRegex(prefix.slice(0, path))})${escapeRegex(prefix.slice(path))}`;
}

/**
 * Valid rows as podcast_events holds them, with their app name from the
 * user-agent list, and their city and country from the derivation's places,
 * for a request that has none of its own (the IP database's, when loaded).
 * A view's SELECT sees one block at a time, so the app name is looked up in
 * `agents` (a Join table the agents' view fills with each block's distinct
 * agents, classified); an agent not there yet is classified in its row, the
 * same classification (only evaluated for those rows). Classifying every
 * row cost about 2 CPU s per million rows; a million rows of the benchmark
 * hold 48 distinct agents.
 */
export function eventsSql(checked: string, agents: string, id: string, options: ImportOptions): string {
  const places = options.derivation.places ?? REQUEST_PLACES;
  return `
${withClause({ ...userAgentConstants(options.derivation.userAgents), ...places.constants })}
SELECT account_id, if(request_key = '', generateUUIDv4(), ${requestIdSql('account_id', 'ts', 'request_key')}) AS request_id, ts, ip4, ip, false AS ip_blacklisted, url, concat('https://', media) AS redirect_url, raw_ua,
  if(isNull(ua_known), ${uaNameSql('ua_clean', options.derivation.userAgents)}, assumeNotNull(ua_known)) AS parsed_ua, token, byte_range, NOT match(byte_range, '^bytes=0-[01]$') AS byte_range_larger_one, place_city AS city,
  place_country AS country, referer, '' AS details_key, '' AS details_value, method, status, ${sqlLiteral(id)} AS import_id
FROM (
  SELECT *, ${places.city} AS place_city, ${places.country} AS place_country
  FROM (
    SELECT *, '' AS city, '' AS country, joinGetOrNull(${sqlLiteral(agents)}, 'parsed_ua', raw_ua) AS ua_known, ${cleanSql('raw_ua')} AS ua_clean
    FROM ${checked} WHERE reason = ''
  )
)`;
}

/**
 * The request_id of a request that carries its own id (`key`: CloudFront's x-edge-request-id, the requestId field):
 * the name-based UUID, version 5 (RFC 9562 5.5: SHA-1), in the namespace REQUEST_ID_NAMESPACE, of the name
 * `<length of the account>:<account><epoch seconds>:<key>`. The same request delivered again, by the same file or
 * another, has the same request_id, by which the import finds it already stored (import.ts, withoutDuplicates). The
 * time is part of the name, so the copies of a request lie at one time, which is all the import searches; the same
 * id at another time is another request.
 */
export function requestIdSql(account: string, ts: string, key: string): string {
  const name = `concat(toString(length(${account})), ':', ${account}, toString(toUInt32(${ts})), ':', ${key})`;
  const byte = (i: number) => `reinterpretAsUInt8(substring(d, ${i}, 1))`;
  return `arrayMap(d -> toUUID(UUIDNumToString(toFixedString(concat(substring(d, 1, 6), char(bitOr(bitAnd(${byte(7)}, 15), 80)), substring(d, 8, 1),
    char(bitOr(bitAnd(${byte(9)}, 63), 128)), substring(d, 10, 7)), 16))), [SHA1(concat(unhex(${sqlLiteral(REQUEST_ID_NAMESPACE.replace(/-/g, ''))}), ${name}))])[1]`;
}

/** Whether a request_id is one requestIdSql made (version 5); the random ones of requests without an id are version 4. */
export function carriesIdSql(requestId: string): string {
  return `bitAnd(reinterpretAsUInt8(substring(UUIDToNum(${requestId}), 7, 1)), 240) = 80`;
}

/** The namespace of requestIdSql's UUIDs, this service's own. */
export const REQUEST_ID_NAMESPACE = '0f6ef21c-45f8-4345-ba53-361229a5a02a';

/** Each block's distinct valid user agents with their app name, for eventsSql's lookup. */
export function agentsSql(checked: string, options: ImportOptions): string {
  return `
${withClause(userAgentConstants(options.derivation.userAgents))}
SELECT raw_ua, ua_name AS parsed_ua FROM (${classifiedSql(`SELECT DISTINCT raw_ua FROM ${checked} WHERE reason = ''`, 'raw_ua', options.derivation.userAgents)})`;
}
