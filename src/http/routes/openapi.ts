import type { RequestHandler } from 'express';
import { openApiDocument } from '../openapi';

/**
 * GET /v1/openapi.json — the OpenAPI 3.1 contract of the data routes. Public
 * like any API description: it holds no account's data, so it needs no key
 * and is not rate limited.
 */
export function openApiRoute(): RequestHandler {
  const body = JSON.stringify(openApiDocument());
  return (_req, res) => {
    res.type('application/json').send(body);
  };
}
