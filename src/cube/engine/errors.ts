import { ServiceError } from '../../errors';

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
 * Cube's query queue hands a driver's error on as its message alone, so what
 * the error object says is read where it still exists (src/cube/engine/driver.ts)
 * and carried across in the message: a network failure as this opening, a
 * ClickHouse error code (which the client and chDB keep apart from the
 * message) as ClickHouse's own "Code: N." opening.
 */
const UNREACHABLE_PREFIX = 'ClickHouse server unreachable';
const UNREACHABLE_MESSAGE = new RegExp(`^(?:Error: )?${UNREACHABLE_PREFIX} \\(`);

/** The network error code somewhere in `err`'s cause chain, if the warehouse could not be reached. */
function unreachableCode(err: unknown): string | undefined {
  return causes(err)
    .map((cause) => cause.code)
    .find((code): code is string => typeof code === 'string' && (UNREACHABLE_CODES.has(code) || /^ERR_(TLS|SSL)_/.test(code)));
}

/** The ClickHouse error code (a number, with its name in `type`) somewhere in `err`'s cause chain. */
function clickhouseErrorCode(err: unknown): number | undefined {
  const found = causes(err).find((cause) => typeof cause.type === 'string' && /^\d+$/.test(String(cause.code)));
  return found ? Number(found.code) : undefined;
}

// Duck-typed: errors from Node's sockets need not share this realm's Error.
function causes(err: unknown): { code?: unknown; type?: unknown }[] {
  const chain: { code?: unknown; type?: unknown; cause?: unknown }[] = [];
  for (let cause = err; typeof cause === 'object' && cause !== null && chain.length < 10; cause = (cause as { cause?: unknown }).cause) {
    chain.push(cause as { code?: unknown; type?: unknown; cause?: unknown });
  }
  return chain;
}

/** `err` with what its cause chain knows (network failure, ClickHouse code) written into its message, for classifyGatewayError. */
export function markDriverError(err: unknown): unknown {
  const message = String((err as { message?: unknown } | null)?.message ?? err);
  const unreachable = unreachableCode(err);
  if (unreachable !== undefined) return new Error(`${UNREACHABLE_PREFIX} (${unreachable}): ${message}`, { cause: err });
  const code = clickhouseErrorCode(err);
  if (code !== undefined && !/Code: \d+\./.test(message)) return new Error(`Code: ${code}. ${message}`, { cause: err });
  return err;
}

/** The body Cube's API gateway hands its `res` callback on failure. */
export interface GatewayError {
  error: string;
  type?: string;
  stack?: string;
}

/**
 * ClickHouse error codes that mean the query's own values were wrong (a
 * filter value that is not a number or a date, a text operator such as
 * `contains` on a number or a boolean), not that our model or the engine
 * failed.
 * https://github.com/ClickHouse/ClickHouse/blob/master/src/Common/ErrorCodes.cpp
 */
const CLIENT_VALUE_ERRORS = new Set([
  6, // CANNOT_PARSE_TEXT
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  43, // ILLEGAL_TYPE_OF_ARGUMENT
  53, // TYPE_MISMATCH
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  386, // NO_COMMON_TYPE
  457, // BAD_QUERY_PARAMETER
  467, // CANNOT_PARSE_BOOL
]);

/**
 * The query limits ClickHouse enforces for us (see QueryLimits), known by
 * their wording and their code.
 */
const LIMIT_ERRORS: { codes: number[]; wording: RegExp; failure: () => ServiceError }[] = [
  {
    // SYNTAX_ERROR is otherwise ours (Cube wrote bad SQL); this one is the
    // length of the SQL (max_query_size), which filter values within
    // QUERY_MAX_VALUE_LENGTH can still reach once escaped.
    codes: [62],
    wording: /Max query size exceeded/i,
    failure: () =>
      new ServiceError('query_too_large', 'The query is too large for the database once its filter values are written out; use fewer or shorter values.'),
  },
  {
    codes: [159], // TIMEOUT_EXCEEDED (max_execution_time)
    wording: /Timeout exceeded: elapsed/i,
    failure: () => new ServiceError('query_timeout', 'The query took longer than the database allows.'),
  },
  {
    codes: [396], // TOO_MANY_ROWS_OR_BYTES (max_result_rows)
    wording: /Limit for result exceeded/i,
    failure: () => new ServiceError('result_too_large', 'The answer would have more rows than the service returns; add filters or a smaller limit.'),
  },
  {
    // MEMORY_LIMIT_EXCEEDED (max_memory_usage). The server-wide memory limit
    // has the same code but says "(total)": that one is ours, not the query's.
    codes: [241],
    wording: /^(?!.*\(total\)).*memory limit (\(for query\) )?exceeded/is,
    failure: () => new ServiceError('query_too_expensive', 'The query needs more memory than the service allows one query; narrow its time range or members.'),
  },
];

/** Cube's own messages for mistakes in the query that it raises as plain errors (500). */
const CUBE_CLIENT_MESSAGES = [/^Error: The query limit has been exceeded/];

export function classifyGatewayError(status: number, body: GatewayError): ServiceError {
  const message = String(body.error ?? 'Unknown error');
  // Cube's own verdicts on the query (UserError): the gateway answers them
  // 400 with their stack, or with their type; errors of its query queue (the
  // database's, the driver's) come 400 too, with neither.
  if (status >= 400 && status < 500 && (body.type === 'UserError' || body.stack !== undefined)) {
    return new ServiceError('invalid_query', message);
  }
  if (UNREACHABLE_MESSAGE.test(message)) {
    return new ServiceError('warehouse_unavailable', 'The database is unavailable at the moment; try again shortly.', body);
  }
  const clickhouseCode = /Code: (\d+)\./.exec(message);
  const code = clickhouseCode ? Number(clickhouseCode[1]) : undefined;
  const limit = LIMIT_ERRORS.find((known) => known.wording.test(message) && (code === undefined || known.codes.includes(code)));
  if (limit) {
    const failure = limit.failure();
    return new ServiceError(failure.code, failure.message, body);
  }
  if (code !== undefined) {
    if (CLIENT_VALUE_ERRORS.has(code)) {
      return new ServiceError('invalid_query', `The database could not use a value of the query: ${clickhouseSummary(message)}`, body);
    }
    return new ServiceError('internal', 'Internal error', body);
  }
  if (CUBE_CLIENT_MESSAGES.some((pattern) => pattern.test(message))) {
    return new ServiceError('invalid_query', message.replace(/^Error: /, ''), body);
  }
  // Anything else of the query queue, and every 500, is the service's failure.
  return new ServiceError('internal', 'Internal error', body);
}

/**
 * The first sentence of a ClickHouse error (as a server words it after
 * "DB::Exception:", or as the client and chDB hand it on), without our
 * markers, the query text or the stack.
 */
function clickhouseSummary(message: string): string {
  const text = message
    .replace(/^(?:Error: )?Code: \d+\. /, '')
    .replace(/^(?:Error: )?Query failed: (?:Error: )?/, '')
    .replace(/^[^\n]*?DB::Exception: /, '');
  const [sentence] = text.split(/[.:]? In scope |: [Ww]hile (?:processing|executing)|; query id: |\. Note: | \(version |\. \(|\n/);
  return sentence.trim().slice(0, 300) || 'invalid value';
}
