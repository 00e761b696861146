import * as fc from 'fast-check';
import { FILTER_OPERATORS } from '../../src/query/members';

/**
 * Arbitraries for hostile HTTP requests against the API: malformed bodies,
 * wrong types, huge and deeply nested values, injection strings, broken
 * encodings and odd headers. Most requests carry the valid key and a body
 * that is nearly right, so they get past the HTTP layer into Cube and the
 * database, where mistakes turn into 5xx.
 *
 * Everything produced here is sendable by node's http client: header values
 * and paths Node would refuse are cleaned or left out, so a refusal is never
 * mistaken for a server failure.
 */

export interface AbuseRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** Send the body in several writes (chunked transfer encoding) instead of with a Content-Length. */
  chunked?: boolean;
}

export const LOAD_PATH = '/v1/data/load/';
export const META_PATH = '/v1/data/meta/';

/** The server's default body limit (HTTP_BODY_LIMIT_KB=100). */
const BODY_LIMIT_BYTES = 100 * 1024;
/** Node answers a request line plus headers above 16 KiB itself, before the app sees them. */
const MAX_HEADER_BYTES = 14 * 1024;

const MEASURES = [
  'Downloads.count',
  'DownloadEvents.count',
  'ChannelRanks.count',
  'ChannelRanks.avgRank',
  'EpisodeRanks.rankSum',
  'LinksDashboard.linkViewCount',
  'LinksAdvancedAnalytics.conversionRate',
  'LinksBasicAnalytics.uniqueLinkViewCount',
  'PodcastEvents.count',
  'WebEvents.count',
  'WebEvents.se_value_sum',
  'WebEventsFromPodcastFunnel.conversions',
];
const DIMENSIONS = [
  'Downloads.country',
  'Downloads.city',
  'Downloads.continent',
  'DownloadEvents.ip4',
  'ChannelRanks.rank',
  'ChannelRanks.countryCode',
  'EpisodeRanks.episodeTitle',
  'LinksDashboard.link',
  'LinksAdvancedAnalytics.isUniqueLinkView',
  'LinksBasicAnalytics.link',
  'PodcastEvents.byteRangeLargerOne',
  'WebEvents.appId',
  'WebEvents.se_value',
  'WebEventsFromPodcastFunnel.step',
];
const TIME_DIMENSIONS = [
  'Downloads.ts',
  'DownloadEvents.ts',
  'ChannelRanks.timestamp',
  'EpisodeRanks.timestamp',
  'LinksDashboard.timestamp',
  'PodcastEvents.ts',
  'WebEvents.trackTs',
];
const CUBES = [...new Set([...MEASURES, ...DIMENSIONS, ...TIME_DIMENSIONS].map((member) => member.split('.')[0]))];

/** One cube's members, so a nearly valid query names members that join. */
interface CubeMembers {
  measures: string[];
  dimensions: string[];
  time?: string;
}
const CUBE_MEMBERS: CubeMembers[] = [
  { measures: ['Downloads.count'], dimensions: ['Downloads.country', 'Downloads.city', 'Downloads.os_name'], time: 'Downloads.ts' },
  { measures: ['DownloadEvents.count'], dimensions: ['DownloadEvents.ip4', 'DownloadEvents.token'], time: 'DownloadEvents.ts' },
  {
    measures: ['ChannelRanks.count', 'ChannelRanks.avgRank'],
    dimensions: ['ChannelRanks.rank', 'ChannelRanks.platform', 'ChannelRanks.date'],
    time: 'ChannelRanks.timestamp',
  },
  { measures: ['EpisodeRanks.count'], dimensions: ['EpisodeRanks.rank', 'EpisodeRanks.episodeTitle'], time: 'EpisodeRanks.timestamp' },
  {
    measures: ['LinksDashboard.count', 'LinksDashboard.conversionRate'],
    dimensions: ['LinksDashboard.link', 'LinksDashboard.isUniqueLinkView', 'LinksDashboard.utmSource'],
    time: 'LinksDashboard.timestamp',
  },
  {
    measures: ['PodcastEvents.count'],
    dimensions: ['PodcastEvents.byteRangeLargerOne', 'PodcastEvents.country', 'PodcastEvents.detailsKey'],
    time: 'PodcastEvents.ts',
  },
  {
    measures: ['WebEvents.count', 'WebEvents.se_value_sum'],
    dimensions: ['WebEvents.appId', 'WebEvents.se_value', 'WebEvents.pageUrl'],
    time: 'WebEvents.trackTs',
  },
  { measures: ['WebEventsFromPodcastFunnel.conversions', 'WebEventsFromPodcastFunnel.conversionsPercent'], dimensions: ['WebEventsFromPodcastFunnel.step'] },
];

const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];
const DATE_RANGES = ['today', 'yesterday', 'last 7 days', 'this month', 'last quarter', 'from 7 days ago to now', 'last 10000 years', 'next 3 days'];
const DATES = [
  '2026-11-01',
  '2026-11-01T10:00:00.000',
  '1970-01-01',
  '9999-12-31',
  '0000-00-00',
  '2026-02-30',
  '2026-13-01',
  '-271821-04-20',
  '+275760-09-13T00:00:00Z',
  '2026-11-01T25:61:61',
  '1e10',
];
const VALID_TIMEZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kathmandu', 'Etc/GMT+14', 'Australia/Lord_Howe'];
const TIMEZONES = [...VALID_TIMEZONES, 'Mars/Olympus', '', 'utc', '+05:00', 'Europe/../../etc/passwd'];

/** SQL, ClickHouse, template and path injection attempts, for values and member names alike. */
export const INJECTIONS = [
  "'; DROP TABLE downloads; --",
  '") OR 1=1 --',
  "' OR '1'='1",
  "' OR 1=1 LIMIT 1000000 --",
  "') UNION ALL SELECT name, '' FROM system.tables --",
  '`downloads`',
  '`; DROP TABLE downloads; --',
  '\\',
  "\\'",
  "\\\\'; SELECT 1; --",
  "file('/etc/passwd')",
  "' || (SELECT * FROM file('/etc/passwd', 'LineAsString')) || '",
  "url('http://127.0.0.1:1/x', CSV, 'a String')",
  "remote('127.0.0.1:9000', system.one)",
  'sleep(3)',
  '{database:String}',
  '{x:Identifier}',
  '{{7*7}}',
  '{{constructor.constructor("return process")()}}',
  '${7*7}',
  '${process.exit(1)}',
  '#{7*7}',
  '<%= 7*7 %>',
  '$1',
  '?',
  '%',
  '_',
  '%_%\\%',
  '/* */',
  '-- ',
  '#',
  ';',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  '\r\nx-injected: 1',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '9223372036854775808',
  '0x7fffffff',
  'null',
  'undefined',
  'true',
];

/** Unicode that trips up length, case folding, escaping and byte handling. */
export const UNICODE = [
  '😀',
  '👨‍👩‍👧‍👦',
  '🇩🇪',
  '\u202Eevil\u202C',
  'مرحبا بالعالم',
  'שלום',
  '\u200B',
  '\uFEFF',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  'e\u0301',
  'İstanbul',
  'ß',
  'ﬃ',
  'Ǆ',
  'ＳＥＬＥＣＴ',
  '\u2028\u2029',
  '\x7f\x1b[31m',
  'Ω≈ç√∫',
  '日本語',
];

// ---------------------------------------------------------------------------
// Values

const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...UNICODE) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...INJECTIONS), fc.constantFrom(...UNICODE)).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'x'.repeat(n)) },
);

/** Any JSON value at all: the wrong type for whatever field it lands in. */
const anyJson = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }) },
  { weight: 2, arbitrary: anyText },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, {}, [], [[]], [null], [{}]) },
);

const memberName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...MEASURES, ...DIMENSIONS, ...TIME_DIMENSIONS) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...CUBES), anyText).map(([cube, name]) => `${cube}.${name}`) },
  { weight: 2, arbitrary: anyText },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...TIME_DIMENSIONS, ...DIMENSIONS), fc.constantFrom(...GRANULARITIES, 'fortnight', '', 'day.day', ...INJECTIONS))
      .map(([member, suffix]) => `${member}.${suffix}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'Downloads.',
      '.count',
      'Downloads..count',
      '.',
      '',
      'Downloads',
      'downloads.count',
      'DOWNLOADS.COUNT',
      'Downloads.count.',
      'Downloads.count\u0000',
      ' Downloads.count',
      'Downloads.__proto__',
      '__proto__.count',
      'constructor.prototype',
    ),
  },
);

const members = fc.oneof(
  { weight: 5, arbitrary: fc.array(memberName, { maxLength: 5 }) },
  { weight: 2, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.array(anyJson, { minLength: 1, maxLength: 4 }) },
);

const filterValue = fc.oneof(
  { weight: 4, arbitrary: anyText },
  { weight: 2, arbitrary: fc.constantFrom(...DATES, '0', '-1', '1.5', '1e308', '-1e-308', '18446744073709551616', ' 1', '1 ', 'true', 'false') },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: anyJson },
);

const filterValues = fc.oneof({ weight: 5, arbitrary: fc.array(filterValue, { maxLength: 4 }) }, { weight: 1, arbitrary: anyJson });

const operator = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...FILTER_OPERATORS) }, { weight: 1, arbitrary: anyText }, { weight: 1, arbitrary: anyJson });

const leafFilter = fc.record({ member: memberName, dimension: memberName, operator, values: filterValues, extra: anyJson }, { requiredKeys: ['operator'] });

/** and/or trees of filters, a few levels deep, with wrong types at any level. */
const { filter } = fc.letrec<{ filter: unknown }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: leafFilter },
    { weight: 1, arbitrary: fc.record({ or: fc.oneof(fc.array(tie('filter'), { maxLength: 3 }), anyJson) }) },
    { weight: 1, arbitrary: fc.record({ and: fc.oneof(fc.array(tie('filter'), { maxLength: 3 }), anyJson) }) },
    { weight: 1, arbitrary: fc.record({ or: fc.array(tie('filter'), { maxLength: 2 }), and: fc.array(tie('filter'), { maxLength: 2 }) }) },
    { weight: 1, arbitrary: anyJson },
  ),
}));

const dateRange = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...DATE_RANGES) },
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.constantFrom(...DATES), anyText), { maxLength: 3 }) },
  { weight: 1, arbitrary: anyText },
  { weight: 1, arbitrary: anyJson },
);

const timeDimension = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        dimension: fc.oneof(fc.constantFrom(...TIME_DIMENSIONS), memberName),
        granularity: fc.oneof(fc.constantFrom(...GRANULARITIES), anyText, anyJson),
        dateRange,
        compareDateRange: fc.oneof(fc.array(dateRange, { maxLength: 3 }), anyJson),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: anyJson },
);

const direction = fc.oneof(fc.constantFrom('asc', 'desc', 'ASC', 'DESC; DROP TABLE downloads', ''), anyJson);
const order = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(memberName, direction, { maxKeys: 4 }) },
  { weight: 2, arbitrary: fc.array(fc.tuple(memberName, direction), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.record({ id: memberName, desc: anyJson }), { maxLength: 3 }) },
  { weight: 1, arbitrary: anyJson },
);

const rowCount = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -5, max: 100 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(0, -1, 50_000, 50_001, 2 ** 31, 2 ** 53, 1e308, 0.5, 1.5, -0, '10', '1; DROP TABLE downloads', '1e3', ' 5', '0x10'),
  },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: anyJson },
);

const timezone = fc.oneof(fc.constantFrom(...TIMEZONES), anyText, anyJson);
const flag = fc.oneof({ weight: 3, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyJson });

/** A query where any key may be missing, of the wrong type or absurd. */
const chaoticQuery = fc
  .tuple(
    fc.record(
      {
        measures: members,
        dimensions: members,
        segments: members,
        filters: fc.oneof({ weight: 4, arbitrary: fc.array(filter, { maxLength: 4 }) }, { weight: 1, arbitrary: anyJson }),
        timeDimensions: fc.oneof({ weight: 4, arbitrary: fc.array(timeDimension, { maxLength: 3 }) }, { weight: 1, arbitrary: anyJson }),
        order,
        limit: rowCount,
        offset: rowCount,
        timezone,
        total: flag,
        ungrouped: flag,
        renewQuery: flag,
      },
      { requiredKeys: [] },
    ),
    fc.option(fc.tuple(anyText, anyJson), { freq: 4 }),
  )
  .map(([query, extra]) => (extra ? { ...query, [extra[0]]: extra[1] } : query));

/**
 * A query that names members which exist and join, with hostile values where
 * the database sees them: filter values, date ranges, time zones, limits.
 * These are the queries that reach ClickHouse.
 */
const nearlyValidQuery = fc.constantFrom(...CUBE_MEMBERS).chain((cube) => {
  const condition = (names: string[]) =>
    fc.record({
      member: fc.constantFrom(...names),
      // String operators most: they carry text into the SQL.
      operator: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('equals', 'notEquals', 'contains', 'notContains', 'startsWith', 'endsWith', 'in', 'notIn') },
        { weight: 1, arbitrary: fc.constantFrom(...FILTER_OPERATORS) },
      ),
      values: fc.array(filterValue, { minLength: 1, maxLength: 3 }),
    });
  const usually = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) => fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: bad });
  return fc.record(
    {
      measures: fc.subarray(cube.measures, { minLength: 1 }),
      dimensions: fc.subarray(cube.dimensions),
      filters: fc.array(
        fc.oneof(
          { weight: 4, arbitrary: condition([...cube.dimensions, ...cube.measures]) },
          { weight: 1, arbitrary: fc.record({ or: fc.array(condition(cube.dimensions), { maxLength: 3 }) }) },
        ),
        { maxLength: 3 },
      ),
      timeDimensions: cube.time
        ? fc.array(
            fc.record(
              {
                dimension: fc.constant(cube.time),
                granularity: usually(fc.constantFrom(...GRANULARITIES), anyText),
                dateRange: usually(fc.constantFrom(...DATE_RANGES), dateRange),
              },
              { requiredKeys: ['dimension'] },
            ),
            { maxLength: 1 },
          )
        : fc.constant([]),
      order: fc.oneof(fc.dictionary(fc.constantFrom(...cube.measures, ...cube.dimensions), fc.constantFrom('asc', 'desc')), fc.constant({})),
      limit: usually(fc.integer({ min: 1, max: 50 }), rowCount),
      offset: fc.integer({ min: 0, max: 10 }),
      timezone: usually(fc.constantFrom(...VALID_TIMEZONES), timezone),
      total: fc.boolean(),
      ungrouped: usually(fc.constant(false), fc.constant(true)),
    },
    { requiredKeys: ['measures'] },
  );
});

const query = fc.oneof({ weight: 3, arbitrary: nearlyValidQuery }, { weight: 2, arbitrary: chaoticQuery });

// ---------------------------------------------------------------------------
// Bodies

/** Hand-written JSON text that JSON.stringify never produces. */
const RAW_BODIES = [
  '',
  ' ',
  '\n',
  'null',
  'true',
  '0',
  '-0',
  '1e999999',
  '"query"',
  '[]',
  '{}',
  '{',
  '}',
  '{"query":',
  '{"query":{"measures":["Downloads.count"]}',
  '{"query":{"measures":["Downloads.count"]}}}',
  '{"query":{"measures":["Downloads.count"]}} trailing',
  "{'query':{'measures':['Downloads.count']}}",
  '{query:{measures:["Downloads.count"]}}',
  '{"query":{"measures":["Downloads.count",]}}',
  '{"query":{"measures":["Downloads.count"]} // comment\n}',
  '{"query":{"measures":[NaN]}}',
  '{"query":{"limit":Infinity,"measures":["Downloads.count"]}}',
  '{"query":{"limit":1e999,"measures":["Downloads.count"]}}',
  '{"query":{"limit":-1e-999,"measures":["Downloads.count"]}}',
  '{"query":{"limit":123456789012345678901234567890,"measures":["Downloads.count"]}}',
  '{"query":{"measures":["Downloads.count"]},"query":null}',
  '{"query":null,"query":{"measures":["Downloads.count"]}}',
  '{"query":{"measures":["Downloads.count"],"measures":"x"}}',
  '{"query":{"measures":["\\ud800"]}}',
  '{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.country","operator":"equals","values":["\\udfff\\ud800"]}]}}',
  '{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.country","operator":"equals","values":["\\u0000"]}]}}',
  '{"query":{"measures":["\\u0044ownloads.count"]}}',
  '{"query":{"measures":["Downloads.count"]},"__proto__":{"isAdmin":true}}',
  '{"__proto__":{"query":{"measures":["Downloads.count"]}}}',
  '{"query":{"__proto__":{"limit":1},"measures":["Downloads.count"]}}',
  '{"query":{"measures":["Downloads.count"],"constructor":{"prototype":{"limit":1}}}}',
  '{"query":{"measures":["Downloads.count"],"filters":[{"__proto__":{"operator":"set"},"member":"Downloads.country"}]}}',
  '{"constructor":{"prototype":{"query":{}}}}',
  '{"query":{"measures":["Downloads.count"]},"queryType":"multi","queryType":["multi"]}',
  '\uFEFF{"query":{"measures":["Downloads.count"]}}',
  '\u0000{"query":{"measures":["Downloads.count"]}}',
  'query=%7B%22measures%22%3A%5B%22Downloads.count%22%5D%7D',
  '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{}\r\n--x--',
  '<?xml version="1.0"?><query/>',
];

const wrongShape = fc.oneof(
  anyJson,
  fc.record({ query: anyJson }),
  fc.array(fc.record({ query: query }), { maxLength: 3 }),
  fc.record({ queries: query }),
  fc.record({ query: fc.constant(undefined), measures: fc.constant(['Downloads.count']) }),
  fc.record({ query, queryType: fc.oneof(fc.constantFrom('multi', 'regular', 'MULTI', 'blend', ''), anyJson) }, { requiredKeys: ['query', 'queryType'] }),
  fc.record({ query: fc.array(query, { maxLength: 3 }), queryType: fc.constant('multi') }),
  fc.record({ query, extra: anyJson }),
);

const wellFormedBody = fc
  .oneof({ weight: 6, arbitrary: query.map((q) => ({ query: q })) }, { weight: 2, arbitrary: wrongShape })
  .map((value) => JSON.stringify(value));

/** Valid JSON cut short, or with garbage spliced in. */
const brokenBody = fc.oneof(
  fc.constantFrom(...RAW_BODIES),
  fc.tuple(wellFormedBody, fc.nat()).map(([text, cut]) => text.slice(0, cut % Math.max(text.length, 1))),
  fc.tuple(wellFormedBody, fc.nat(), anyText).map(([text, at, junk]) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + junk + text.slice(i);
  }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** Valid JSON text with invalid UTF-8 bytes where a string, key or the structure expects text. */
const INVALID_UTF8: number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0x80],
  [0xc3],
  [0x80],
  [0xbf, 0xbf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf0, 0x9f, 0x98],
];
const invalidUtf8Body = fc
  .tuple(wellFormedBody, fc.nat(), fc.array(fc.constantFrom(...INVALID_UTF8), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([text, at, sequences, insideString]) => {
    const bad = Buffer.from(sequences.flat());
    // Inside a string literal the bytes survive JSON parsing and reach Cube and the database.
    const quote = insideString ? text.indexOf('"', at % (text.length + 1)) : -1;
    const i = quote >= 0 ? quote + 1 : at % (text.length + 1);
    return Buffer.concat([Buffer.from(text.slice(0, i)), bad, Buffer.from(text.slice(i))]);
  });

/** The right text in the wrong encoding. */
const wrongEncodingBody = fc
  .tuple(wellFormedBody, fc.constantFrom<BufferEncoding>('utf16le', 'latin1', 'ucs2', 'base64'))
  .map(([text, encoding]) => (encoding === 'base64' ? Buffer.from(Buffer.from(text).toString('base64')) : Buffer.from(text, encoding)));

function nestedFilter(depth: number, leaf: unknown, join: (d: number) => 'and' | 'or'): unknown {
  let node = leaf;
  for (let d = 0; d < depth; d += 1) node = { [join(d)]: [node] };
  return node;
}

/** and/or filters nested hundreds deep, and JSON arrays or objects nested thousands deep. */
const deepBody = fc.oneof(
  fc.tuple(fc.integer({ min: 20, max: 2_000 }), fc.constantFrom('and', 'or', 'mixed')).map(([depth, kind]) =>
    JSON.stringify({
      query: {
        measures: ['Downloads.count'],
        filters: [
          nestedFilter(depth, { member: 'Downloads.country', operator: 'equals', values: ['Germany'] }, (d) =>
            kind === 'mixed' ? (d % 2 ? 'and' : 'or') : kind,
          ),
        ],
      },
    }),
  ),
  fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom('measures', 'filters', 'values', 'order', 'query')).map(([depth, field]) => {
    const nested = '['.repeat(depth) + '"Downloads.count"' + ']'.repeat(depth);
    if (field === 'query') return `{"query":${nested}}`;
    if (field === 'values')
      return `{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.country","operator":"equals","values":${nested}}]}}`;
    return `{"query":{"measures":["Downloads.count"],"${field}":${nested}}}`;
  }),
  fc.integer({ min: 100, max: 12_000 }).map((depth) => `{"query":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`),
  fc.integer({ min: 100, max: 50_000 }).map((depth) => '['.repeat(depth)),
);

/** Thousands of members or filter values, below the body limit or above it. */
const hugeBody = fc.oneof(
  fc
    .tuple(fc.integer({ min: 100, max: 5_000 }), fc.constantFrom(...MEASURES, 'Downloads.nope'))
    .map(([n, member]) => JSON.stringify({ query: { measures: Array.from({ length: n }, () => member) } })),
  fc
    .integer({ min: 100, max: 5_000 })
    .map((n) =>
      JSON.stringify({ query: { measures: ['Downloads.count'], dimensions: Array.from({ length: n }, (_, i) => DIMENSIONS[i % DIMENSIONS.length]) } }),
    ),
  fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom('equals', 'notIn', 'contains', 'gt')).map(([n, op]) =>
    JSON.stringify({
      query: {
        measures: ['Downloads.count'],
        filters: [{ member: 'Downloads.country', operator: op, values: Array.from({ length: n }, (_, i) => String(i)) }],
      },
    }),
  ),
  fc.integer({ min: 100, max: 2_000 }).map((n) =>
    JSON.stringify({
      query: {
        measures: ['Downloads.count'],
        filters: Array.from({ length: n }, (_, i) => ({ member: 'Downloads.city', operator: 'notEquals', values: [`c${i}`] })),
      },
    }),
  ),
  fc
    .integer({ min: 100, max: 3_000 })
    .map((n) => JSON.stringify({ query: { measures: ['Downloads.count'], order: Array.from({ length: n }, () => ['Downloads.count', 'desc']) } })),
  fc.integer({ min: 1, max: 3 }).map((n) =>
    JSON.stringify({
      query: { measures: ['Downloads.count'], filters: [{ member: 'Downloads.country', operator: 'contains', values: ['x'.repeat(BODY_LIMIT_BYTES * n)] }] },
    }),
  ),
  fc.integer({ min: BODY_LIMIT_BYTES - 64, max: BODY_LIMIT_BYTES * 3 }).map((size) => {
    const head = '{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.city","operator":"equals","values":["';
    const tail = '"]}]}}';
    return head + 'y'.repeat(Math.max(0, size - head.length - tail.length)) + tail;
  }),
);

/**
 * Requests whose cost inside Cube grows with a size the client picks (issue 8):
 * compareDateRange ranges, queries in an array, filter values, value length,
 * time buckets (granularity over a date range), order entries. Sizes fall on
 * both sides of the service's default limits, so some run as real queries at
 * the limit and most are refused; none may hold the event loop for long.
 */
const DAY_MS = 86_400_000;
const isoDay = (i: number) => new Date(Date.UTC(2020, 0, 1) + i * DAY_MS).toISOString().slice(0, 10);
/** Mostly over `limit`, sometimes at or under it. */
const size = (limit: number, max: number) =>
  fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 1, max: limit }) }, { weight: 3, arbitrary: fc.integer({ min: limit + 1, max }) });
const TEXT_DIMENSIONS = [
  'Downloads.city',
  'Downloads.country',
  'PodcastEvents.url',
  'WebEvents.pageUrl',
  'LinksDashboard.link',
  'WebEventsFromPodcastFunnel.step',
];
const measureOf = (member: string) =>
  member.startsWith('WebEventsFromPodcastFunnel.') ? 'WebEventsFromPodcastFunnel.conversions' : `${member.split('.')[0]}.count`;
/** Characters the SQL escapes (and so lengthens) or that take several bytes. */
const VALUE_CHARS = ['x', '%', '_', '\\', "'", 'é', '😀'];

const amplificationQuery = fc.oneof(
  fc
    .tuple(size(20, 3_000), fc.constantFrom<string | undefined>(undefined, 'day', 'hour', 'second'), fc.constantFrom(...TIME_DIMENSIONS), fc.boolean())
    .map(([n, granularity, dimension, multi]) => ({
      queryType: multi ? 'multi' : undefined,
      query: {
        measures: [measureOf(dimension)],
        timeDimensions: [{ dimension, granularity, compareDateRange: Array.from({ length: n }, (_, i) => [isoDay(i), isoDay(i + 1)]) }],
      },
    })),
  fc.integer({ min: 1, max: 600 }).map((n) => ({
    queryType: 'multi',
    query: Array.from({ length: n }, (_, i) => ({
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [isoDay(i), isoDay(i + 7)] }],
    })),
  })),
  fc
    .tuple(size(1_000, 20_000), fc.constantFrom('equals', 'notEquals', 'in', 'contains', 'notStartsWith'), fc.constantFrom(...TEXT_DIMENSIONS))
    .map(([n, operator, member]) => ({
      query: { measures: [measureOf(member)], filters: [{ member, operator, values: Array.from({ length: n }, (_, i) => `v${i}`) }] },
    })),
  fc
    .tuple(
      size(1_000, 95_000),
      fc.constantFrom(...VALUE_CHARS),
      fc.constantFrom('contains', 'equals', 'startsWith', 'notEndsWith'),
      fc.constantFrom(...TEXT_DIMENSIONS),
    )
    .map(([n, char, operator, member]) => ({
      query: { measures: [measureOf(member)], filters: [{ member, operator, values: [char.repeat(n)] }] },
    })),
  fc
    .tuple(
      fc.constantFrom('second', 'minute', 'hour', 'day'),
      fc.integer({ min: 1, max: 20_000 }),
      fc.constantFrom('days', 'years', 'abs'),
      fc.constantFrom(...TIME_DIMENSIONS),
    )
    .map(([granularity, n, unit, dimension]) => ({
      query: {
        measures: [measureOf(dimension)],
        timeDimensions: [{ dimension, granularity, dateRange: unit === 'abs' ? [isoDay(0), isoDay(n)] : `last ${unit === 'years' ? n % 200 : n} ${unit}` }],
      },
    })),
  size(50, 3_000).map((n) => ({
    query: {
      measures: ['Downloads.count'],
      order: Array.from({ length: n }, (_, i) => [i % 2 ? 'Downloads.count' : 'Downloads.country', i % 3 ? 'asc' : 'desc']),
    },
  })),
  fc.tuple(size(1_000, 90_000), fc.constantFrom('last 7 days ', 'from 7 days ago to now ', 'x')).map(([n, phrase]) => ({
    query: {
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: phrase.repeat(Math.ceil(n / phrase.length)).slice(0, n) }],
    },
  })),
  fc.tuple(size(20, 200), size(50, 2_000)).map(([ranges, values]) => ({
    queryType: 'multi',
    query: {
      measures: ['Downloads.count'],
      filters: [{ member: 'Downloads.city', operator: 'notEquals', values: Array.from({ length: values }, (_, i) => `c${i}`) }],
      timeDimensions: [
        { dimension: 'Downloads.ts', granularity: 'day', compareDateRange: Array.from({ length: ranges }, (_, i) => [isoDay(i), isoDay(i + 1)]) },
      ],
    },
  })),
);

const amplificationBody = amplificationQuery.map((value) => JSON.stringify(value));

const body = fc.oneof(
  { weight: 12, arbitrary: wellFormedBody },
  { weight: 3, arbitrary: brokenBody },
  { weight: 2, arbitrary: invalidUtf8Body },
  { weight: 1, arbitrary: wrongEncodingBody },
  { weight: 2, arbitrary: deepBody },
  { weight: 2, arbitrary: hugeBody },
  { weight: 2, arbitrary: amplificationBody },
);

// ---------------------------------------------------------------------------
// Headers

/** Node's http client refuses header values outside tab, visible ASCII and Latin-1. */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');

const apiKey = (validKey: string) =>
  fc.oneof(
    { weight: 40, arbitrary: fc.constant<string | undefined>(validKey) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        `${validKey} `,
        `\t${validKey}`,
        `${validKey}x`,
        validKey.slice(0, -1),
        validKey.toUpperCase(),
        `${validKey},${validKey}`,
        'null',
        'undefined',
      ),
    },
    { weight: 1, arbitrary: anyText.map(headerSafe) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 8_000 }).map((n) => validKey.repeat(Math.ceil(n / validKey.length)).slice(0, n)) },
    { weight: 1, arbitrary: fc.constantFrom('clé-é', 'ÿÿÿÿ', `${validKey}é`, '\x80\x81\xfe\xff') },
  );

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>(undefined) },
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json; charset="utf-8"',
      'application/json; charset=latin1',
      'application/json; charset=iso-8859-1',
      'application/json; charset=utf-16',
      'application/json; charset=utf-16le',
      'application/json; charset=garbage',
      'application/json; charset=',
      'application/json;;;',
      'application/json; boundary=x; charset=utf-8; charset=latin1',
      'text/plain',
      'text/html; charset=utf-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'application/xml',
      '*/*',
      '',
      ';',
      'application/',
      '/json',
    ),
  },
  { weight: 1, arbitrary: anyText.map(headerSafe) },
);

const contentEncoding = fc.oneof(
  { weight: 20, arbitrary: fc.constant<string | undefined>(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-gzip', 'compress', 'zstd', 'gzip, gzip', 'GZIP', 'garbage', '') },
  { weight: 1, arbitrary: anyText.map(headerSafe) },
);

const EXTRA_HEADER_NAMES = [
  'accept',
  'accept-encoding',
  'accept-charset',
  'origin',
  'referer',
  'user-agent',
  'x-request-id',
  'x-forwarded-for',
  'cookie',
  'authorization',
  'if-none-match',
  'range',
  'x-http-method-override',
];
const extraHeaders = fc.dictionary(
  fc.oneof(fc.constantFrom(...EXTRA_HEADER_NAMES), fc.stringMatching(/^x-[a-z0-9-]{1,20}$/)),
  fc.oneof(anyText, fc.constantFrom('text/html', '*/*', 'gzip, br', 'bytes=0-10', 'DELETE', 'http://evil.example', '127.0.0.1')).map(headerSafe),
  { maxKeys: 3 },
);

function headers(validKey: string, withBody: boolean) {
  return fc
    .tuple(apiKey(validKey), withBody ? contentType : fc.constant(undefined), withBody ? contentEncoding : fc.constant(undefined), extraHeaders)
    .map(([key, type, encoding, extra]) => {
      const all: Record<string, string> = { ...extra };
      if (key !== undefined) all['x-api-key'] = key;
      if (type !== undefined) all['content-type'] = type;
      if (encoding !== undefined) all['content-encoding'] = encoding;
      return all;
    });
}

// ---------------------------------------------------------------------------
// Requests

/** Percent-encodes the UTF-8 bytes of every character `keep` does not match; lone surrogates become U+FFFD. */
function percentEncode(text: string, keep: RegExp): string {
  return Array.from(text, (c) => (keep.test(c) ? c : [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''))).join('');
}

/** Leaves `%`, `?`, `&` and the rest of visible ASCII raw (malformed escapes included); encodes what Node would refuse. */
const pathSafe = (text: string) => percentEncode(text, /^[\x21-\x7e]$/);
const uriComponent = (text: string) => percentEncode(text, /^[A-Za-z0-9\-_.!~*'()]$/);

const LOAD_PATHS = [
  '/v1/data/load/',
  '/v1/data/load',
  '/V1/DATA/LOAD/',
  '/v1/data/load/?queryType=multi',
  '/v1/data/load?queryType=blend',
  '/v1/data/load/?query=%7B%7D',
];

const getQueryText = fc.oneof(
  { weight: 4, arbitrary: query.map((q) => JSON.stringify(q)) },
  { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: brokenBody },
  { weight: 1, arbitrary: deepBody },
);

const getLoadPath = fc
  .tuple(
    getQueryText,
    fc.constantFrom('', '&queryType=multi', '&queryType=regular', '&queryType=%00', '&query=%7B%7D', '&query[measures]=Downloads.count', '&queryType[]=multi'),
    fc.boolean(),
  )
  .map(([text, suffix, encode]) => `/v1/data/load?query=${encode ? uriComponent(text) : pathSafe(text)}${suffix}`);

const ODD_PATHS = [
  '/',
  '/v1',
  '/v1/',
  '/v1/data',
  '/v1/data/',
  '/v1/data/nothing',
  '/v1/data/load/extra',
  '/v1/data/load//',
  '//v1/data/load',
  '/v1/data/./load',
  '/v1/data/load/../meta',
  '/v1/data/%2e%2e/meta',
  '/v1/data/load%2F',
  '/v1/data/%00',
  '/v1/data/%E0%A4%A',
  '/v1/data/%',
  '/v1/data/meta%00',
  '/v1/data/meta;x=1',
  '/v1/data/meta/?x=%24%7B7*7%7D',
  '/v1/data/meta?query=%7B%7D',
  '/v2/data/load',
  '/cubejs-api/v1/load',
  '/cubejs-api/v1/meta',
  '/.env',
  '/../../etc/passwd',
  '/v1/data/load?query=%ZZ',
  '*',
];

const EXTRA_METHODS = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'GET', 'POST', 'get', 'Post'];

/** One hostile request: mostly POST /v1/data/load/, then GET load, meta, and wrong methods or paths. */
export function abuseRequest(validKey: string): fc.Arbitrary<AbuseRequest> {
  const postLoad = fc.record({
    method: fc.constant('POST'),
    path: fc.oneof({ weight: 8, arbitrary: fc.constant(LOAD_PATH) }, { weight: 1, arbitrary: fc.constantFrom(...LOAD_PATHS) }),
    headers: headers(validKey, true),
    body,
    chunked: fc.boolean(),
  });
  const getLoad = fc.record({ method: fc.constant('GET'), path: getLoadPath, headers: headers(validKey, false) });
  const getMeta = fc.record({
    method: fc.constant('GET'),
    path: fc.oneof(
      { weight: 4, arbitrary: fc.constant(META_PATH) },
      { weight: 1, arbitrary: fc.constantFrom('/v1/data/meta', '/v1/data/meta/?extended=true', '/V1/Data/Meta') },
    ),
    headers: headers(validKey, false),
  });
  const wrong = fc.record(
    {
      method: fc.constantFrom(...EXTRA_METHODS),
      path: fc.oneof(
        fc.constantFrom(...ODD_PATHS, LOAD_PATH, META_PATH),
        anyText.map((text) => `/v1/data/${pathSafe(text)}`),
      ),
      headers: headers(validKey, true),
      body: fc.option(wellFormedBody, { nil: undefined }),
    },
    { requiredKeys: ['method', 'path', 'headers'] },
  );
  return fc
    .oneof({ weight: 70, arbitrary: postLoad }, { weight: 15, arbitrary: getLoad }, { weight: 7, arbitrary: getMeta }, { weight: 8, arbitrary: wrong })
    .filter((request) => headerBytes(request) <= MAX_HEADER_BYTES);
}

function headerBytes(request: AbuseRequest): number {
  return Object.entries(request.headers).reduce((sum, [name, value]) => sum + name.length + value.length + 4, request.path.length + 32);
}

/** POST /v1/data/load/ with an amplification body and the valid key: the CI's few hundred and part of every fuzz run. */
export function amplificationRequest(validKey: string): fc.Arbitrary<AbuseRequest> {
  return amplificationBody.map((text) => ({
    method: 'POST',
    path: LOAD_PATH,
    headers: { 'x-api-key': validKey, 'content-type': 'application/json' },
    body: text,
  }));
}
