import type { Express } from 'express';
import request, { type Response, type Test } from 'supertest';
import { API_KEY } from './constants';

export type { Response, Test };

/**
 * Requests to a service, the one way tests send them: each helper returns
 * supertest's request, to be awaited for the answer or given more headers
 * (`.set('origin', …)`) and expectations (`.expect(200)`) first. Every one
 * carries a key in `x-api-key` (both APIs read it): the operator's, API_KEY,
 * unless `key` names another, or none when `key` is null.
 */
export interface Keyed {
  key?: string | null;
}

/** The documented API under /v1/data, or Cube's under /cubejs-api/v1 (its routes' names are the same). */
export type Api = 'data' | 'cubejs';

export interface Routed extends Keyed {
  api?: Api;
}

export interface LoadOptions extends Routed {
  /** `queryType: 'multi'`, as Cube's client asks: the answer as `{ queryType, results: [answer] }`. */
  multi?: boolean;
  /** GET with the query in the URL, as Cube's client sends it, instead of POST with a JSON body. */
  get?: boolean;
}

/** A service's app (supertest serves it for the request), or the URL of a service listening on a socket. */
type Service = { readonly app: Express } | string;
type Method = 'get' | 'post' | 'put' | 'delete' | 'options';

const BASE: Record<Api, string> = { data: '/v1/data', cubejs: '/cubejs-api/v1' };

/** Any method on any path: for what the helpers below do not send (other methods and paths, bodies that are not JSON). */
export function send(service: Service, method: Method, path: string, { key }: Keyed = {}): Test {
  const sent = request(typeof service === 'string' ? service : service.app)[method](path);
  return key === null ? sent : sent.set('x-api-key', key ?? API_KEY);
}

/** A query of the load route. */
export function load(service: Service, query: unknown, { api = 'data', multi, get, key }: LoadOptions = {}): Test {
  const queryType = multi ? { queryType: 'multi' } : {};
  const path = `${BASE[api]}/load`;
  if (get) return send(service, 'get', path, { key }).query({ query: JSON.stringify(query), ...queryType });
  return send(service, 'post', path, { key }).send({ query, ...queryType });
}

/** The load route with a body as given (JSON text, or a value sent as JSON): for bodies `load` would not send. */
export const loadBody = (service: Service, body: string | object, { api = 'data', key }: Routed = {}): Test =>
  send(service, 'post', `${BASE[api]}/load`, { key }).type('json').send(body);

/** The meta route: the cubes and members the key may query. */
export const meta = (service: Service, { api = 'data', key }: Routed = {}): Test => send(service, 'get', `${BASE[api]}/meta`, { key });

/** Cube's `/cubejs-api/v1/sql`: the SQL a query would run, and its parameters. */
export const cubeSql = (service: Service, query: unknown, options: Keyed = {}): Test => send(service, 'post', `${BASE.cubejs}/sql`, options).send({ query });

/** Cube's `/cubejs-api/v1/dry-run`: the query as Cube normalised it. */
export const dryRun = (service: Service, query: unknown, options: Keyed = {}): Test => send(service, 'post', `${BASE.cubejs}/dry-run`, options).send({ query });

/** The export route: the answer as a file, in `format` (else as `Accept` asks). */
export function exportFile(service: Service, query: unknown, { format, get, key }: Keyed & { format?: string; get?: boolean } = {}): Test {
  const params = format === undefined ? {} : { format };
  const path = `${BASE.data}/export`;
  if (get) return send(service, 'get', path, { key }).query({ ...params, query: JSON.stringify(query) });
  return send(service, 'post', path, { key }).query(params).send({ query });
}

/** A health probe, `/healthz` (the process is up) or `/readyz` (it serves), without a key as an orchestrator sends it. */
export const probe = (service: Service, which: 'healthz' | 'readyz'): Test => send(service, 'get', `/${which}`, { key: null });

/** The rows (`data`) of a load's answer; fails naming the status and the body when it is not 200. */
export async function dataOf<Row = Record<string, unknown>>(sent: Test): Promise<Row[]> {
  const res = await sent;
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Row[];
}
