import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Config } from '../config';
import type { CubeService } from '../cube/service';
import type { Exporter } from '../export/exporter';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/registry';
import type { Admission } from '../query/admission';
import type { Readiness } from '../readiness';
import { apiKeyHeader, apiKeyOrAuthorization, identifyApiKey, requireApiKey, requireScope, type KeyReader } from './auth';
import { errorHandler, methodNotAllowed, notFound } from './errors';
import { memoryStores, type LimitStores } from './limit-stores';
import { concurrencyLimit, requestRateLimit, unauthenticatedRateLimit } from './rate-limit';
import { cubeDryRunRoute } from './routes/cubejs/dry-run';
import { cubeLoadRoute } from './routes/cubejs/load';
import { cubeMetaRoute } from './routes/cubejs/meta';
import { cubeSqlRoute } from './routes/cubejs/sql';
import { exploreRoute } from './routes/explore';
import { exportRoute } from './routes/export';
import { loadRoute } from './routes/load';
import { healthzRoute } from './routes/healthz';
import { metaRoute } from './routes/meta';
import { openApiRoute } from './routes/openapi';
import { readyzRoute } from './routes/readyz';
import { DATA_ROUTES, LABELLED_ROUTES, routeLabeller } from './route-label';
import { securityHeaders } from './security-headers';
import { serverTiming } from './server-timing';
import type { ShutdownGate } from './shutdown-gate';

export interface AppDeps {
  config: Pick<Config, 'http' | 'query' | 'rateLimit' | 'exports' | 'explorer'>;
  cube: CubeService;
  /** Query admission (src/query/admission.ts), once per query route. */
  admission: Admission;
  exporter: Exporter;
  authenticator: Authenticator;
  logger: Logger;
  readiness: Readiness;
  gate: ShutdownGate;
  metrics: Metrics;
  /** Where rate limits count: memory unless REDIS_URL is set. */
  limitStores?: LimitStores;
}

/** What a client may send as x-request-id: Cube's clients send `<uuid>-span-<n>`. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The HTTP surface, in the order a request meets it: request id, metrics
 * and log line, Server-Timing on the data routes, security headers, CORS
 * (off unless configured), the health probes, the shutdown gate, API key
 * (with a limit per address on requests without a valid one), per-key rate
 * limits, the routes (the documented /v1 and Cube's own /cubejs-api/v1), the
 * error envelope. Routing is non-strict, so the trailing slash is optional.
 * The health probes come before keys, limits and the shutdown gate: a probe
 * needs no key, never uses up a client's budget, and is answered while the
 * service drains.
 */
export function createApp(deps: AppDeps): Express {
  const { config, readiness, gate, logger, metrics } = deps;
  const app = express();
  app.disable('x-powered-by');
  // Decides req.ip, which keys the limit on requests without a valid key.
  app.set('trust proxy', config.http.trustProxyHops);

  app.use(requestRecord(metrics, logger));
  const timing = serverTiming();
  const dataRoutes = new Set<unknown>(DATA_ROUTES);
  app.use((req, res, next) => (dataRoutes.has(res.locals.route) ? timing(req, res, next) : next()));
  app.use(securityHeaders());
  // Answers hold one account's figures: no shared cache may keep them.
  app.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  if (config.http.corsOrigins.length > 0) app.use(corsFor(config.http.corsOrigins));

  app.get('/healthz', healthzRoute);
  app.get('/readyz', readyzRoute(readiness));
  app.use(gate.middleware);

  const guards = keyGuards(deps);
  // Public, like any API description: before the v1 router's key check and rate limits.
  app.route('/v1/openapi.json').get(openApiRoute()).all(methodNotAllowed('GET'));
  app.use('/v1', v1Router(deps, guards));
  // Cube's own REST API, for Cube's clients: Cube's shapes, through the same gateway methods.
  app.use('/cubejs-api/v1', cubejsRouter(deps, guards));
  if (config.explorer) app.use('/explore', exploreRoute());

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}

/**
 * The request's ids, its route label and its start, and at its end the
 * request metric and the log line.
 */
function requestRecord(metrics: Metrics, logger: Logger): RequestHandler {
  const routeOf = routeLabeller(LABELLED_ROUTES);
  return (req, res, next) => {
    // A client's own id (one that cannot forge a log line) ties its logs to ours.
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', res.locals.requestId);
    // What the server keys this request's state by (its scope's id, which the load in flight, its timing and cache
    // lookups go by, its place in the shutdown gate): made here, so two requests sending the same x-request-id never
    // share any of it.
    res.locals.requestKey = randomUUID();
    const started = performance.now();
    res.locals.startedAt = started;
    // Labelled before routing, so that requests refused before it (401, 429) count under their route too.
    res.locals.route = routeOf(req.path);
    res.on('finish', () => {
      const ms = performance.now() - started;
      // The route pattern, never the raw path: paths are the client's to invent.
      const route = typeof res.locals.route === 'string' ? res.locals.route : 'unmatched';
      metrics.httpRequestDuration.observe({ route, method: req.method, status: String(res.statusCode) }, ms / 1000);
      logger.info('request', {
        requestId: res.locals.requestId,
        // The key's id, never the key.
        keyId: (res.locals.principal as Principal | undefined)?.keyId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        ms: Math.round(ms),
      });
    });
    next();
  };
}

function corsFor(origins: readonly string[]): RequestHandler {
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST'],
    // Cube's clients send their token in authorization and an x-request-id of their own.
    allowedHeaders: ['x-api-key', 'authorization', 'content-type', 'x-request-id'],
    exposedHeaders: ['x-request-id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Server-Timing', 'Result-Truncated', 'Content-Disposition'],
    maxAge: 600,
  });
}

/** What every data route of both APIs goes through: the key and its limits, and the JSON body. */
interface KeyGuards {
  authenticated(readKey: KeyReader): RequestHandler[];
  withinKeyConcurrency(handler: RequestHandler): RequestHandler;
  jsonBody: RequestHandler;
}

function keyGuards({ config, authenticator, metrics, limitStores = memoryStores }: AppDeps): KeyGuards {
  // One set of counters for both APIs, so a key's limits hold across them.
  const limits = { limits: config.rateLimit, stores: limitStores, metrics };
  const perAddress = unauthenticatedRateLimit(limits);
  const perKey = requestRateLimit(limits);
  const onAuthFailure = (reason: 'missing' | 'invalid') => metrics.authFailures.inc({ reason });
  return {
    authenticated: (readKey) => [identifyApiKey(authenticator, readKey, onAuthFailure), perAddress, requireApiKey, perKey],
    // At most RATE_LIMIT_CONCURRENT requests of one key in flight. No request outlives the query timeout by a
    // minute; a slot older than that belongs to a dead instance.
    withinKeyConcurrency: concurrencyLimit(limits, config.query.timeoutMs + 60_000),
    // Bodies are read as JSON whatever their Content-Type, so `curl -d` works as is.
    jsonBody: express.json({ type: () => true, limit: config.http.bodyLimitBytes }),
  };
}

/** The spec's /v1 routes. */
function v1Router({ config, cube, admission, exporter }: AppDeps, { authenticated, withinKeyConcurrency, jsonBody }: KeyGuards): Router {
  const queryRoutes = { admission, cube, timeoutMs: config.query.timeoutMs };
  const exporting = exportRoute(admission, exporter, config.query, config.exports);
  const v1 = express.Router();
  v1.use(...authenticated(apiKeyHeader));
  v1.route('/data/meta')
    .get(requireScope('data:meta'), withinKeyConcurrency(metaRoute(cube)))
    .all(methodNotAllowed('GET'));
  v1.route('/data/load')
    .get(requireScope('data:load'), withinKeyConcurrency(loadRoute(queryRoutes)))
    .post(requireScope('data:load'), jsonBody, withinKeyConcurrency(loadRoute(queryRoutes)))
    .all(methodNotAllowed('GET, POST'));
  v1.route('/data/export')
    .get(requireScope('data:load'), withinKeyConcurrency(exporting))
    .post(requireScope('data:load'), jsonBody, withinKeyConcurrency(exporting))
    .all(methodNotAllowed('GET, POST'));
  return v1;
}

/** Cube's own REST API at /cubejs-api/v1: meta, load, sql, dry-run. */
function cubejsRouter({ config, cube, admission }: AppDeps, { authenticated, withinKeyConcurrency, jsonBody }: KeyGuards): Router {
  const queryRoutes = { admission, cube, timeoutMs: config.query.timeoutMs };
  const cubejs = express.Router();
  cubejs.use(...authenticated(apiKeyOrAuthorization));
  cubejs
    .route('/meta')
    .get(requireScope('data:meta'), withinKeyConcurrency(cubeMetaRoute(cube)))
    .all(methodNotAllowed('GET'));
  for (const [path, route] of [
    ['/load', cubeLoadRoute],
    ['/sql', cubeSqlRoute],
    ['/dry-run', cubeDryRunRoute],
  ] as const) {
    cubejs
      .route(path)
      .get(requireScope('data:load'), withinKeyConcurrency(route(queryRoutes)))
      .post(requireScope('data:load'), jsonBody, withinKeyConcurrency(route(queryRoutes)))
      .all(methodNotAllowed('GET, POST'));
  }
  return cubejs;
}
