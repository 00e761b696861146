/**
 * What went wrong inside Cube or ClickHouse, said in our terms. The HTTP
 * layer turns `kind` into a status; `message` is safe to show a client;
 * `detail` is for the log only.
 */
export type CubeFailureKind = 'invalid_query' | 'query_timeout' | 'result_too_large' | 'query_too_expensive' | 'warehouse_unavailable' | 'internal';

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

/**
 * Node's codes for a server that cannot be reached or talked to: refused,
 * reset (also "socket hang up"), timed out, no route, no DNS answer, and a
 * TLS handshake that failed (OpenSSL's certificate codes, ERR_TLS_*, ERR_SSL_*).
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
]);

/**
 * Cube's query queue hands a driver's error on as its message alone, so the
 * error code is read where it still exists (src/cube/driver.ts) and carried
 * across as this opening of the message.
 */
const UNREACHABLE_PREFIX = 'ClickHouse server unreachable';
const UNREACHABLE_MESSAGE = new RegExp(`^(?:Error: )?${UNREACHABLE_PREFIX} \\(`);

/** The network error code somewhere in `err`'s cause chain, if the warehouse could not be reached. */
function unreachableCode(err: unknown): string | undefined {
  // Duck-typed: errors from Node's sockets need not share this realm's Error.
  for (let cause = err, depth = 0; typeof cause === 'object' && cause !== null && depth < 10; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { code } = cause as { code?: unknown };
    if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || /^ERR_(TLS|SSL)_/.test(code))) return code;
  }
  return undefined;
}

/** `err`, or for a network failure an error whose message says so in a form classifyGatewayError knows. */
export function markUnreachable(err: unknown): unknown {
  const code = unreachableCode(err);
  if (code === undefined) return err;
  return new Error(`${UNREACHABLE_PREFIX} (${code}): ${String((err as { message?: unknown }).message)}`, { cause: err });
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
  if (UNREACHABLE_MESSAGE.test(message)) {
    return new CubeFailure('warehouse_unavailable', 'The database is unavailable at the moment; try again shortly.', body);
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
