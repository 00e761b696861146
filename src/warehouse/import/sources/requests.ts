import { REQUEST_PLACES } from '../../derive/downloads';
import { rederive } from '../../derive/rederive';
import { sqlLiteral, withClause } from '../../sql';
import { classifiedSql, cleanSql, compileUserAgentPatterns, uaNameSql, userAgentConstants } from '../../derive/user-agents';
import { addressSql, csvFormat, FIRST_TIME, isoTimePattern, LAST_EPOCH_SECOND, LAST_TIME, ndjsonFormat, outsideTimesSql, parquetFormat } from '../formats';
import { openSource } from '../lines';
import { ImportRefused, type Accessors, type Format, type ImportOptions, type Lines, type Source } from '../source';

/**
 * Request logs of the tracking prefix into podcast_events, and the downloads
 * derived from them: the canonical record's fields, how each format's line
 * gives them (accessors), the SQL that parses and checks them (the first
 * reason a row cannot be imported), then writes the valid ones in
 * podcast_events' layout.
 */

/**
 * The canonical record's fields, named like OP3's exports where a name exists. `requestId` is optional: the request's
 * own id, by which a second delivery of it is recognised (requestIdSql).
 */
export const FIELDS = ['time', 'ip', 'method', 'status', 'url', 'userAgent', 'referer', 'range', 'account', 'requestId'];

/**
 * CloudFront standard logs write each field's value with the bytes 0–32 and 127 and over and the characters
 * < > " # % { } | \ ^ ~ [ ] ` ' percent-encoded (RFC 1738), once: a space the client sent is `%20`, and the `%20` a
 * client sent itself (an iOS app's name in its user agent, `Pocket%20Casts/7.96`, or an encoded path) is `%2520`. Each
 * field is decoded once, which gives it back as the client sent it, as an NDJSON or CSV file holds it (decoded twice,
 * `Pocket%20Casts` came out as `Pocket Casts`: another listener). A `-` is an empty field. The URL is the one
 * requested: `https://`, the Host header, the path (cs-uri-stem) and the query (cs-uri-query, logged without its `?`).
 */
function cloudFrontAccessors(fields: string[]): Accessors {
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
    json: false,
    unknown: 'CAST([] AS Array(String))',
    isRecord: `length(cloudfront_cells) = ${fields.length}`,
    notARecord: 'not as many tab-separated fields as #Fields names',
    line: 'raw',
  };
}

/**
 * CloudFront standard access logs: tab-separated, the columns named by the
 * `#Fields:` header line. They log the byte range served (sc-range-start,
 * sc-range-end) rather than the Range header, and URL-encode every field
 * (cloudFrontAccessors).
 */
const CLOUDFRONT: Format = {
  reader: 'lines',
  comment: '#',
  header: cloudFrontFields,
  accessors: cloudFrontAccessors,
};

async function cloudFrontFields(source: string, name: string): Promise<string[]> {
  let text = '';
  for await (const chunk of openSource(source)) {
    text += (chunk as Buffer).toString('utf8');
    const fields = /^#Fields:(.*)$/m.exec(text);
    if (fields && text.indexOf('\n', fields.index) >= 0) return fields[1].trim().split(/\s+/);
    if (text.length > 65_536) break;
  }
  throw new ImportRefused(`${name}: no #Fields: header line, which CloudFront standard logs start with`);
}

/** The checked rows' parsed columns. */
const CHECKED = [
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

/** Each line's fields, checked (the address: addressSql). */
function checkSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  const prefix = sqlLiteral(options.trackingPrefix);
  // A row's own account stands when it names one; with --account too it must be that one: a row routed to
  // another account than the one the operator named would be a silent move of a network's data.
  const fileAccount = sqlLiteral(options.account ?? '');
  const otherAccount = options.account ? `row_account NOT IN ('', ${fileAccount})` : 'false';
  return `
    SELECT line, ${a.line} AS line_text, ${a.columns ? `${a.columns},` : ''}
      ${a.text('time')} AS time_text,
      match(time_text, '^[0-9]+([.][0-9]+)?$') AS time_epoch,
      multiIf(
        time_epoch, if(toFloat64(time_text) <= ${LAST_EPOCH_SECOND}, fromUnixTimestamp64Milli(toInt64(toFloat64(time_text) * 1000), 'UTC'), NULL),
        match(time_text, ${sqlLiteral(isoTimePattern('required'))}), parseDateTime64BestEffortOrNull(time_text, 3, 'UTC'),
        NULL) AS time64,
      toDateTime(ifNull(time64, toDateTime64(0, 3, 'UTC')), 'UTC') AS ts,
      ${addressSql(a.text('ip'))},
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
      ${a.json ? `if(request_key_raw = 'null', '', ${a.text('requestId')})` : a.text('requestId')} AS request_key,
      ${options.ignoreUnknown ? 'CAST([] AS Array(String))' : a.unknown} AS unknown,
      multiIf(
        NOT (${a.isRecord}), ${sqlLiteral(a.notARecord)},
        length(unknown) > 0, concat('unknown field ', unknown[1], ' (--ignore-unknown skips unknown fields)'),
        time64 IS NULL AND time_epoch, 'time is epoch seconds past ${LAST_TIME} (epoch milliseconds are not read)',
        time64 IS NULL, 'time is not an ISO 8601 time with a zone or epoch seconds',
        ${outsideTimesSql('time64')}, 'time is outside ${FIRST_TIME} … ${LAST_TIME}, the times the warehouse holds',
        NOT isIPv4String(ip_text) AND NOT isIPv6String(ip_text), concat('ip is not an IPv4 or IPv6 address: ', ip_text),
        method = '', 'method is missing',
        status_raw != '' AND NOT match(status_raw, '^[0-9]{1,3}$'), 'status is not an HTTP status code',
        token = '', concat('url is not under the tracking prefix ', ${prefix}, ' followed by a token and the media path'),
        account_id = '', 'no account: give the row an account field or the file --account',
        ${otherAccount}, concat('account ', row_account, ' differs from --account ', ${fileAccount}),
        ${a.json ? `request_key_raw NOT IN ('', 'null') AND NOT match(request_key_raw, '^("|-?[0-9])')` : 'false'}, 'requestId is not a string or a number',
        '') AS reason, '' AS skip
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
function eventsSql(checked: string, agents: string, id: string, options: ImportOptions): string {
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
 * another, has the same request_id, by which the import finds it already stored (duplicates.ts). The
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
function agentsSql(checked: string, options: ImportOptions): string {
  return `
${withClause(userAgentConstants(options.derivation.userAgents))}
SELECT raw_ua, ua_name AS parsed_ua FROM (${classifiedSql(`SELECT DISTINCT raw_ua FROM ${checked} WHERE reason = ''`, 'raw_ua', options.derivation.userAgents)})`;
}

export const REQUESTS: Source = {
  name: 'requests',
  row: { one: 'request', many: 'requests' },
  formats: { ndjson: ndjsonFormat(FIELDS), csv: csvFormat(FIELDS), cloudfront: CLOUDFRONT, parquet: parquetFormat(FIELDS) },
  fields: FIELDS,
  rowAccounts: true,
  target: 'podcast_events',
  time: 'ts',
  checked: CHECKED,
  check: checkSql,
  async stage({ client, options, id, checked, table, joinName }) {
    // The validation's views classify user agents, and making a view already compiles the pattern sets it scans: they are compiled
    // first, each in a statement of its own.
    await compileUserAgentPatterns(client, options.derivation.userAgents);
    return {
      tables: { agents: '(raw_ua String, parsed_ua String) ENGINE = Join(ANY, LEFT, raw_ua) SETTINGS persistent = 0' },
      rows: eventsSql(checked, joinName('agents'), id, options),
      // Made after the rows' view: chDB ran each block through the view made last first, so a block's agents are known when its
      // rows are written (made before, the first block's rows were classified in their rows); the answer is the same either way.
      views: [{ kind: 'to_agents', to: table('agents'), select: agentsSql(checked, options) }],
    };
  },
  duplicates: {
    id: 'request_id',
    identified: carriesIdSql('request_id'),
    within: 'id',
    fields: 'cityHash64(ts, ip, method, status, url, raw_ua, referer, byte_range)',
  },
  counts: ['downloads'],
  async derive({ client, options, from, to, accounts, progress }) {
    progress('deriving downloads');
    return { downloads: await rederive(client, options.database, options.derivation, from, to, accounts, options.statementRows) };
  },
  async undo({ client, options, from, to, accounts }) {
    await rederive(client, options.database, options.derivation, from, to, accounts, options.statementRows);
  },
};
