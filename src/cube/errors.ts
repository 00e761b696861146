/**
 * What went wrong inside Cube or ClickHouse, said in our terms. The HTTP
 * layer turns `kind` into a status; `message` is safe to show a client;
 * `detail` is for the log only.
 */
export type CubeFailureKind = 'invalid_query' | 'query_too_large' | 'query_timeout' | 'result_too_large' | 'query_too_expensive' | 'shutting_down' | 'internal';

export class CubeFailure extends Error {
  constructor(
    readonly kind: CubeFailureKind,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'CubeFailure';
  }
}

/** The body Cube's API gateway hands its `res` callback on failure. */
export interface GatewayError {
  error: string;
  type?: string;
  stack?: string;
}

/**
 * ClickHouse error codes that mean the query's own values were wrong (a
 * filter value that is not a number or a date, say), not that our model or
 * the engine failed.
 * https://github.com/ClickHouse/ClickHouse/blob/master/src/Common/ErrorCodes.cpp
 */
const CLIENT_VALUE_ERRORS = new Set([
  6, // CANNOT_PARSE_TEXT
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  53, // TYPE_MISMATCH
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  386, // NO_COMMON_TYPE
  457, // BAD_QUERY_PARAMETER
]);

/**
 * The query limits ClickHouse enforces for us (see QueryLimits), known by
 * their wording, and by code too where there is one (chDB drops it).
 */
const LIMIT_ERRORS: { codes: number[]; wording: RegExp; failure: () => CubeFailure }[] = [
  {
    // SYNTAX_ERROR, worded "Max query size exceeded" (max_query_size): values
    // within QUERY_MAX_VALUE_LENGTH can still add up, escaped, past it.
    codes: [62],
    wording: /Max query size exceeded/i,
    failure: () => new CubeFailure('query_too_large', 'The query is too large for the database once its filter values are written out; use fewer or shorter values.'),
  },
  {
    codes: [159], // TIMEOUT_EXCEEDED (max_execution_time)
    wording: /Timeout exceeded: elapsed/i,
    failure: () => new CubeFailure('query_timeout', 'The query took longer than the database allows.'),
  },
  {
    codes: [396], // TOO_MANY_ROWS_OR_BYTES (max_result_rows)
    wording: /Limit for result exceeded/i,
    failure: () => new CubeFailure('result_too_large', 'The answer would have more rows than the service returns; add filters or a smaller limit.'),
  },
  {
    // MEMORY_LIMIT_EXCEEDED (max_memory_usage). The server-wide memory limit
    // has the same code but says "(total)": that one is ours, not the query's.
    codes: [241],
    wording: /^(?!.*\(total\)).*memory limit (\(for query\) )?exceeded/is,
    failure: () => new CubeFailure('query_too_expensive', 'The query needs more memory than the service allows one query; narrow its time range or members.'),
  },
];

/** Cube's own messages for mistakes in the query that it raises as plain errors (500). */
const CUBE_CLIENT_MESSAGES = [/^Error: The query limit has been exceeded/];

export function classifyGatewayError(status: number, body: GatewayError): CubeFailure {
  const message = String(body.error ?? 'Unknown error');
  if (status === 400 && body.type === 'UserError') {
    return new CubeFailure('invalid_query', message);
  }
  const clickhouseCode = /Code: (\d+)\./.exec(message);
  const code = clickhouseCode ? Number(clickhouseCode[1]) : undefined;
  const limit = LIMIT_ERRORS.find((known) => known.wording.test(message) && (code === undefined || known.codes.includes(code)));
  if (limit) {
    const failure = limit.failure();
    return new CubeFailure(failure.kind, failure.message, body);
  }
  if (code !== undefined) {
    if (CLIENT_VALUE_ERRORS.has(code)) {
      return new CubeFailure('invalid_query', `The database could not use a value of the query: ${clickhouseSummary(message)}`, body);
    }
    return new CubeFailure('internal', 'Internal error', body);
  }
  if (CUBE_CLIENT_MESSAGES.some((pattern) => pattern.test(message))) {
    return new CubeFailure('invalid_query', message.replace(/^Error: /, ''), body);
  }
  // A database error without a ClickHouse code (chDB words some that way):
  // Cube's gateway counts it as the query's fault; keep its first sentence,
  // never the SQL that follows it.
  const databaseError = /Query failed: (?:Error: )?(.*?)(?:[.:]? In scope|; query id|$)/s.exec(message);
  if (databaseError && status >= 400 && status < 500) {
    return new CubeFailure('invalid_query', `The database could not use a value of the query: ${databaseError[1].slice(0, 300)}`, body);
  }
  if (status >= 400 && status < 500) {
    return new CubeFailure('invalid_query', message, body);
  }
  return new CubeFailure('internal', 'Internal error', body);
}

/** The "DB::Exception: …" sentence of a ClickHouse error, without query text or stack. */
function clickhouseSummary(message: string): string {
  const match = /DB::Exception: ([^\n]*?)(?:: While processing| \(version |\. \(|$)/.exec(message);
  return (match?.[1] ?? 'invalid value').slice(0, 300);
}
