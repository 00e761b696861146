import type { Request } from 'express';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { refuse } from './rules';

/** One query as Cube takes it: measures, dimensions, filters, time dimensions, order, limit… */
export type Query = Record<string, unknown>;

/**
 * A query as Cube's clients send it: POST carries `{ query, queryType? }` as
 * JSON; GET carries the same as URL parameters, `query` as JSON text.
 */
export interface QueryRequest {
  query: unknown;
  queryType: 'multi' | undefined;
}

export function readQueryRequest(req: Request): QueryRequest {
  return req.method === 'GET' ? fromUrl(req) : fromBody(req.body);
}

function fromBody(body: unknown): QueryRequest {
  if (!isQuery(body) || !('query' in body)) {
    refuse('body', 'The request body must be a JSON object with a "query" field.');
  }
  return { query: body.query, queryType: checkQueryType(body.queryType) };
}

function fromUrl(req: Request): QueryRequest {
  const { query, queryType } = req.query;
  if (typeof query !== 'string') {
    refuse('body', 'GET needs one "query" URL parameter holding the query as JSON.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(query);
  } catch {
    const where = whereJsonFails(query);
    refuse('json', `The "query" URL parameter is not valid JSON${where === undefined ? '' : `: ${where}`}.`);
  }
  return { query: parsed, queryType: checkQueryType(queryType) };
}

function checkQueryType(value: unknown): 'multi' | undefined {
  if (value === undefined || value === 'regular') return undefined;
  if (value === 'multi') return 'multi';
  refuse('queryType', 'The "queryType" field, when given, must be "multi".');
}

/** The query of a request answered as Cube's multi shape: an object or a non-empty array of objects. */
export function queryOrListOf(value: unknown): Query | Query[] {
  if (!isQueryOrList(value)) refuse('body', 'The "query" field must be a JSON object or a non-empty array of objects.');
  return value;
}

/** The one query object of a request; `message` says why it must be one. */
export function oneQueryOf(value: unknown, message = 'The "query" field must be a JSON object.'): Query {
  if (!isQuery(value)) refuse('body', message);
  return value;
}

export function isQuery(value: unknown): value is Query {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A query object, or a non-empty array of them: queries Cube blends into one answer. */
export function isQueryOrList(value: unknown): value is Query | Query[] {
  return isQuery(value) || (Array.isArray(value) && value.length > 0 && value.every(isQuery));
}

/**
 * Where and why `text` is not JSON, so a client can find the mistake:
 * "value expected on line 2, column 17 (offset 27)", lines and columns from
 * 1, the offset in characters from 0. V8's own message names no place for
 * a token it did not expect ("Unexpected token 'l', "{"query": lots}" is
 * not valid JSON"); jsonc-parser's scanner gives the offset of the first
 * mistake. Undefined for text it reads as JSON, and for text nested
 * too deep for it to read.
 */
export function whereJsonFails(text: string): string | undefined {
  const errors: ParseError[] = [];
  try {
    parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  } catch {
    // jsonc-parser descends one call per level: thousands of unclosed brackets overflow the stack.
    return undefined;
  }
  const [first] = errors;
  if (first === undefined) return undefined;
  const before = text.slice(0, first.offset);
  const line = before.split('\n').length;
  const column = first.offset - before.lastIndexOf('\n');
  const what = printParseErrorCode(first.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return `${what} on line ${line}, column ${column} (offset ${first.offset})`;
}
