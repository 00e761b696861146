import { STATUS_BY_CODE, type ErrorCode } from '../../../src/http/errors';

/**
 * The one error envelope (`{ error, code, requestId }`) with the status the
 * code stands for, and nothing of the internals (stack, SQL, ClickHouse codes).
 */
export function expectEnvelope(res: { status: number; body: unknown; headers: Record<string, string> }, code: ErrorCode, message?: RegExp): void {
  expect({ status: res.status, code: (res.body as { code?: unknown }).code }).toEqual({ status: STATUS_BY_CODE[code], code });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'requestId']);
  expect(typeof body.error).toBe('string');
  expect(body.requestId).toBe(res.headers['x-request-id']);
  if (message) expect(body.error).toMatch(message);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\(|node_modules|\.js:\d+|\.ts:\d+|SELECT |Code: \d+|SyntaxError/);
}
