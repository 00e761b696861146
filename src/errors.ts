/**
 * The codes a client is answered with, one per kind of failure: the error
 * envelope (src/http/errors.ts) gives each its status, and docs/reference/api.md its
 * meaning.
 */
export type ErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'invalid_query'
  | 'query_too_large'
  | 'result_too_large'
  | 'query_too_expensive'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'not_acceptable'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'warehouse_unavailable'
  | 'not_ready'
  | 'shutting_down'
  | 'query_timeout';

/**
 * The one error type a client is answered with, whichever layer finds the
 * failure: `message` is safe to show a client (an `internal` one is
 * answered with a generic sentence), `detail` goes to the log only. Query
 * admission's refusals are the subtype QueryRefusal (src/query/rules.ts),
 * which names its rule too.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}
