import express, { type Express, type RequestHandler, type Response } from 'express';
import OpenAPIBackend, { SetMatchType, type Operation } from 'openapi-backend';
import { openApiDocument } from '../../../src/http/openapi';

/**
 * Checks every answer a test receives from a documented operation (GET
 * /v1/data/meta/, GET and POST /v1/data/load/ and /v1/data/export/) against the served OpenAPI
 * document, with openapi-backend: the status is listed for the operation,
 * the Content-Type is one it documents, the body is JSON valid against that
 * response's schema, present documented headers match their schema and the
 * required ones are there; and a request answered 2xx is one the document
 * allows. Violations wait here until contract-hooks.ts fails the test that
 * received them. Nothing is checked unless contract-hooks.ts enabled the
 * checks, so services started outside jest (bench, fuzz) are left alone.
 *
 * openapi-backend compiles schemas with Ajv's draft-07 dialect; the
 * document uses only keywords that mean the same in OpenAPI 3.1's 2020-12.
 */

let enabled = false;
let backend: Promise<OpenAPIBackend> | undefined;
const violations: string[] = [];

export function enableContractChecks(): void {
  enabled = true;
}

/** The violations seen since the last call. */
export function takeContractViolations(): string[] {
  return violations.splice(0);
}

export function contractBackend(): Promise<OpenAPIBackend> {
  // The document's paths end with a slash (spec 4); openapi-backend would
  // strip it from requests only, so requests get it added instead. Quick:
  // the document is held to strict mode once, by openapi.suite.ts, not
  // validated and dereferenced again for each test file. Quick mode would
  // also compile validators inside the first request needing them, holding
  // the service's event loop (which the abuse tests measure), so they are
  // compiled here.
  backend ??= new OpenAPIBackend({ definition: openApiDocument() as never, strict: true, quick: true, ignoreTrailingSlashes: false }).init().then((api) => {
    api.validator.preCompileRequestValidators();
    api.validator.preCompileResponseValidators();
    api.validator.preCompileResponseHeaderValidators();
    return api;
  });
  return backend;
}

/** `app` behind a middleware that checks its answers, when the checks are enabled. */
export async function withContractChecks(app: Express): Promise<Express> {
  if (!enabled) return app;
  const api = await contractBackend();
  const checked = express();
  checked.disable('x-powered-by');
  checked.use(checkAnswers(api));
  checked.use(app);
  return checked;
}

function checkAnswers(api: OpenAPIBackend): RequestHandler {
  return (req, res, next) => {
    const path = req.path.endsWith('/') ? req.path : `${req.path}/`;
    const operation = api.matchOperation({ method: req.method, path, headers: req.headers as Record<string, string> });
    if (operation === undefined) {
      next();
      return;
    }
    // Checked as the answer ends, before a byte of it can reach the test.
    beforeEnd(res, (body) => {
      const url = req.originalUrl.length > 120 ? `${req.originalUrl.slice(0, 120)}…` : req.originalUrl;
      const where = `${req.method} ${url} → ${res.statusCode} (${operation.operationId})`;
      const problems = check(api, operation, res, body);
      // A request the service answered must be one the document allows, or
      // the document describes the query language too narrowly. URL
      // parameters the operation does not know are ignored by the service,
      // so they are left out.
      if (res.statusCode < 300) {
        const known = new Set((operation.parameters ?? []).map((p) => (p as { name: string }).name));
        const query = Object.fromEntries(Object.entries(req.query as Record<string, string>).filter(([name]) => known.has(name)));
        const accepted = api.validateRequest({ method: req.method, path, headers: req.headers as Record<string, string>, query, body: req.body }, operation);
        const sent = req.method === 'POST' ? ` (body ${String(JSON.stringify(req.body)).slice(0, 300)})` : '';
        problems.push(...describe('request', accepted.errors).map((problem) => problem + sent));
      }
      violations.push(...problems.map((problem) => `${where}: ${problem}`));
    });
    next();
  };
}

/** Calls `inspect` with the body the app wrote (through res.json, res.send or res.write), just before res.end sends it. */
function beforeEnd(res: Response, inspect: (body: string) => void): void {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    try {
      inspect(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      violations.push(`the contract check itself failed: ${(err as Error).stack}`);
    }
    return end(chunk, ...rest);
  }) as Response['end'];
}

type Documented = { content?: Record<string, unknown>; headers?: Record<string, { required?: boolean }> };

function check(api: OpenAPIBackend, operation: Operation, res: Response, text: string): string[] {
  const status = res.statusCode;
  const responses = operation.responses as Record<string, Documented>;
  const documented = responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default;
  if (documented === undefined) return [`status ${status} is not documented for this operation`];

  const contentType = String(res.getHeader('content-type') ?? '');
  const mediaType = contentType.split(';')[0].trim();
  if (documented.content?.[mediaType] === undefined) {
    return [`Content-Type "${contentType}" is not documented (expected ${Object.keys(documented.content ?? {}).join(', ') || 'no body'})`];
  }
  const problems: string[] = [];
  const headerResult = api.validateResponseHeaders(res.getHeaders(), operation, { statusCode: status, setMatchType: SetMatchType.Any });
  problems.push(...describe('headers', headerResult.errors));
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    if (header.required && !res.hasHeader(name)) problems.push(`header ${name} is required but missing`);
  }
  // An export's file is the engine's; its media type and headers are what the contract says of it.
  if (mediaType !== 'application/json') return problems;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`the body is not JSON: ${text.slice(0, 200)}`];
  }

  const bodyResult = api.validateResponse(body, operation, status);
  problems.push(...describe('body', bodyResult.errors));
  return problems;
}

type ValidationErrors = ReturnType<OpenAPIBackend['validateResponse']>['errors'];

function describe(part: string, errors: ValidationErrors): string[] {
  return (errors ?? []).map((e) => {
    const detail = e.keyword === 'additionalProperties' ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : '';
    return `${part} ${e.instancePath || '/'} ${e.message}${detail}`;
  });
}
