import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ServiceError, type ErrorCode } from '../errors';
import type { Logger } from '../log';
import { whereJsonFails } from '../query/request';

export type { ErrorCode } from '../errors';

/**
 * One error envelope for every failure: `{ error, code, requestId }`.
 * `error` is a readable sentence (a string, as Cube's own clients expect),
 * `code` a stable identifier to branch on, `requestId` the key of the log
 * lines about this request. 500s carry a generic sentence; the detail goes to
 * the log only.
 */
export const STATUS_BY_CODE = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_query: 400,
  /** Over a QUERY_MAX_* size limit (members, filters, queries, values, time buckets), or SQL longer than the database accepts. */
  query_too_large: 400,
  /** The answer would exceed QUERY_MAX_RESULT_ROWS, or an export's parquet file EXPORT_MAX_BYTES. */
  result_too_large: 400,
  /** The query needs more memory than QUERY_MAX_MEMORY_MB. */
  query_too_expensive: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  /** An export in a format the service does not write (?format= or Accept); the message lists the formats. */
  not_acceptable: 406,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  /** The ClickHouse server cannot be reached (refused, reset, timed out, DNS, TLS). */
  warehouse_unavailable: 503,
  /** /readyz: the service cannot answer queries now; the envelope's error lists why. */
  not_ready: 503,
  /** The service is shutting down and took no new work: retry (another instance), see Retry-After. */
  shutting_down: 503,
  query_timeout: 504,
} as const satisfies Record<ErrorCode, number>;

/**
 * Seconds a client should wait before asking again, for failures that pass
 * on their own: long enough for a restarting ClickHouse server, or for a load
 * balancer to have moved on from an instance that is shutting down, short
 * enough for a dashboard to recover by itself.
 */
const RETRY_AFTER_SECONDS: Partial<Record<ErrorCode, number>> = { warehouse_unavailable: 5, shutting_down: 5 };

export const notFound: RequestHandler = (req) => {
  throw new ServiceError('not_found', `No route for ${req.method} ${req.path}.`);
};

export function methodNotAllowed(allowed: string): RequestHandler {
  return (req, res) => {
    res.setHeader('Allow', allowed);
    // req.path is relative to the router's mount point (/v1, /cubejs-api/v1); the client sent the whole path.
    throw new ServiceError('method_not_allowed', `${req.method} is not allowed on ${req.baseUrl}${req.path}; use ${allowed}.`);
  };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const requestId = String(res.locals.requestId ?? '');
    const { code, message } = envelopeOf(err);
    const path = req.originalUrl.split('?')[0];
    // A probe's 503 is an answer, not a failure; the request line records it.
    // A request refused while draining is what a drain is for, not a failure either.
    if (code === 'shutting_down') {
      logger.info('request refused: shutting down', { requestId, method: req.method, path });
    } else if (STATUS_BY_CODE[code] >= 500 && code !== 'not_ready') {
      logger.error('request failed', { requestId, method: req.method, path, code, error: describe(err) });
    }
    const retryAfter = RETRY_AFTER_SECONDS[code];
    if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
    // An instance shutting down closes the connection, so the retry reaches another one.
    if (code === 'shutting_down') res.setHeader('Connection', 'close');
    res.status(STATUS_BY_CODE[code]).json({ error: message, code, requestId });
  };
}

function envelopeOf(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof ServiceError) return err.code === 'internal' ? { code: 'internal', message: 'Internal server error.' } : err;
  // body-parser marks its own errors with `type` and an HTTP status, and a body it could not parse with the body.
  const parserError = err as { type?: string; status?: number; body?: unknown };
  switch (parserError.type) {
    case 'entity.parse.failed': {
      const body = typeof parserError.body === 'string' ? parserError.body : '';
      // JSON that is not an object or array (a string, a number): body-parser's strict mode refuses it.
      if (!/^\s*[[{]/.test(body)) return { code: 'invalid_json', message: 'The request body must be a JSON object, {"query": …}.' };
      const where = whereJsonFails(body);
      return { code: 'invalid_json', message: `The request body is not valid JSON${where === undefined ? '' : `: ${where}`}.` };
    }
    case 'entity.too.large':
      return { code: 'payload_too_large', message: 'The request body is too large.' };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { code: 'unsupported_media_type', message: 'The request body must be UTF-8 encoded JSON.' };
    default:
      if (typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500) {
        return { code: 'invalid_request', message: 'The request could not be read.' };
      }
      return { code: 'internal', message: 'Internal server error.' };
  }
}

function describe(err: unknown): unknown {
  if (err instanceof ServiceError) return { message: err.message, detail: err.detail };
  if (err instanceof Error) return { message: err.message, stack: err.stack };
  return err;
}
