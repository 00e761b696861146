import type { Request } from 'express';
import type { Query } from '../cube/types';
import { refuse } from './rules';

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
    refuse('json', 'The "query" URL parameter is not valid JSON.');
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
