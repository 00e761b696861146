import { ServiceError, type ErrorCode } from '../errors';

/**
 * Every rule of query admission, in one table: the code its refusal answers
 * (a key of src/http/errors.ts STATUS_BY_CODE, which gives the status), the
 * setting that bounds it, if any, and what it asks of a query. A refusal is
 * one error type, QueryRefusal, made only through `refuse(rule, message)`,
 * so the code of every admission error is read from here. It is a
 * ServiceError (src/errors.ts), the one type the error envelope maps. docs/reference/query-language.md's
 * table of admission rules is this table (test/unit/query/rules.test.ts).
 *
 * `stage` says when the rule is checked: `request` as the route reads the
 * body or URL, `size` before anything walks the query deeper than a loop
 * (no model needed), `model` against the serving models' members, before
 * Cube sees the query.
 */
export type AdmissionCode = Extract<ErrorCode, 'invalid_json' | 'invalid_request' | 'invalid_query' | 'query_too_large'>;

export interface AdmissionRule {
  code: AdmissionCode;
  stage: 'request' | 'size' | 'model';
  /** The environment variable that sets the rule's bound (src/config.ts). */
  setting?: string;
  /** What the rule asks of a query, as docs/reference/query-language.md says it. */
  asks: string;
}

export const ADMISSION_RULES = {
  body: {
    code: 'invalid_request',
    stage: 'request',
    asks: 'POST: a JSON object with a `query` field; GET: one `query` URL parameter. `query` is an object, or with `queryType: "multi"` a non-empty array of objects (an export: one object).',
  },
  json: {
    code: 'invalid_json',
    stage: 'request',
    asks: 'The `query` URL parameter of a GET is JSON; the refusal says what was expected where (line, column, offset), as for a POST body.',
  },
  queryType: { code: 'invalid_request', stage: 'request', asks: '`queryType`, when given, is `"multi"` (or `"regular"`).' },
  exportOne: {
    code: 'invalid_query',
    stage: 'request',
    asks: "An export writes one query's rows into one file: no `compareDateRange` (export each range as a `dateRange` of its own).",
  },
  multi: {
    code: 'invalid_query',
    stage: 'request',
    asks: 'An array of queries and a `compareDateRange` answer one result per query or range: they need `queryType: "multi"`.',
  },
  queries: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_QUERIES',
    asks: 'Queries one request runs: each query of an array and each range of a `compareDateRange`.',
  },
  limit: {
    code: 'invalid_query',
    stage: 'size',
    setting: 'QUERY_MAX_LIMIT',
    asks: '`limit` is at most the maximum; page on with `offset`.',
  },
  members: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_MEMBERS',
    asks: 'Measures, dimensions, segments and time dimensions, over all queries of the request.',
  },
  order: { code: 'query_too_large', stage: 'size', setting: 'QUERY_MAX_MEMBERS', asks: 'Order entries, over all queries of the request.' },
  filters: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_FILTERS',
    asks: 'Filter conditions, every `and`/`or` node included, at any depth.',
  },
  filterValues: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_FILTER_VALUES',
    asks: "Filter values over all filters and queries (a `compareDateRange` repeats its query's once per range).",
  },
  valueLength: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_VALUE_LENGTH',
    asks: 'Characters of one filter value or date-range string.',
  },
  buckets: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_TIME_BUCKETS',
    asks: "Time buckets: each time dimension's date range divided by its granularity, over all ranges and queries.",
  },
  depth: {
    code: 'query_too_large',
    stage: 'size',
    setting: 'QUERY_MAX_DEPTH',
    asks: "How deep the query's JSON nests (objects and arrays, `and`/`or` filters included).",
  },
  paging: {
    code: 'invalid_query',
    stage: 'model',
    asks: '`limit` and `offset` written as strings hold digits only (`"2"` is read as 2); an export\'s `limit` is a whole number of at least 1.',
  },
  knownMembers: {
    code: 'invalid_query',
    stage: 'model',
    asks: "Every member the query names (lists, the `<Cube>.<time>.<granularity>` shorthand, filters at any depth, both forms of `order`) is one of `/meta`'s; the refusal of any other offers the closest names (a cube's name left out: each cube's member of that name).",
  },
  orderedMembers: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'Each member `order` names is one the query returns: a measure, a dimension, or a time dimension with a granularity.',
  },
  operators: { code: 'invalid_query', stage: 'model', asks: "A filter's `operator` is one of Cube 0.33's." },
  memberKinds: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'Each list holds its kind of member: `measures` measures, `dimensions` dimensions (a time dimension too), `segments` segments, `timeDimensions` time dimensions; filters and `order` name measures and dimensions. Date operators filter a time dimension; `measureFilter` a measure, text operators (`contains`, `startsWith`, `endsWith`, negations) a string member. The refusal says what the member is and where it goes.',
  },
  granularities: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'A granularity is one of `second`, `minute`, `hour`, `day`, `week`, `month`, `quarter`, `year`, written in `granularity` (`timeDimensions[].dimension` names the member alone) or in the `<Cube>.<time>.<granularity>` shorthand, which takes each but `quarter` (Cube 0.33 reads it so).',
  },
  numberValues: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'The values of `equals`, `notEquals`, `in`, `notIn`, `gt`, `gte`, `lt` and `lte` on a number member (a measure or a number dimension) are numbers, or strings of one (`20`, `"20.5"`, `"-1e3"`); `null` as for any member.',
  },
  nullValues: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'Comparison (`gt`, `gte`, `lt`, `lte`) and text operators take values, not `null`.',
  },
  emptyOr: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'An `or` lists at least one condition.',
  },
  oneValue: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'A comparison (`gt`, `gte`, `lt`, `lte`) takes one value.',
  },
  timezone: {
    code: 'invalid_query',
    stage: 'model',
    asks: '`timezone` is an IANA name, written with its case (`"America/New_York"`, `"UTC"`).',
  },
  timeDimensions: { code: 'invalid_query', stage: 'model', asks: '`timeDimensions` is an array of objects.' },
  compareDateRange: { code: 'invalid_query', stage: 'model', asks: '`compareDateRange` is a non-empty array of date ranges.' },
  dateFilters: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'A date filter has as many values as its operator reads (one, or one or two for ranges and `onTheDate`), each a date that exists (`YYYY-MM-DD`, optionally a local time); so are the values of `equals`, `notEquals`, `in`, `notIn` and comparisons on a time dimension.',
  },
  dateRanges: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'A `dateRange` or `compareDateRange` range is one or two existing dates, or a phrase of the grammar under [Date ranges](#date-ranges) (`"last 7 days"`, `"from 7 days ago to now"`); any other phrase is refused by name, with the forms and what it most likely meant (`"past 30 days"`: `"last 30 days"`).',
  },
  blending: {
    code: 'invalid_query',
    stage: 'model',
    asks: 'Each query of an array has a first time dimension with a granularity (arrays are blended by time).',
  },
  ungrouped: {
    code: 'invalid_query',
    stage: 'model',
    asks: '`ungrouped: true` names only cubes whose rows have a key (records).',
  },
} as const satisfies Record<string, AdmissionRule>;

export type AdmissionRuleName = keyof typeof ADMISSION_RULES;

/** A query refused by an admission rule: a client's mistake, answered with the rule's code and this message. */
export class QueryRefusal extends ServiceError {
  declare readonly code: AdmissionCode;

  constructor(
    readonly rule: AdmissionRuleName,
    message: string,
  ) {
    super(ADMISSION_RULES[rule].code, message);
    this.name = 'QueryRefusal';
  }
}

export function refuse(rule: AdmissionRuleName, message: string): never {
  throw new QueryRefusal(rule, message);
}
