import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import type { CubeService } from '../cube/service';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/registry';
import { identifyApiKey, requireApiKey, requireScope } from './auth';
import { errorHandler, methodNotAllowed, notFound } from './errors';
import { memoryStores, type LimitStores } from './limit-stores';
import { concurrencyLimit, requestRateLimit, unauthenticatedRateLimit } from './rate-limit';
import { loadRoute } from './routes/load';
import { metaRoute } from './routes/meta';
import { serverTiming } from './server-timing';

export interface AppDeps {
  config: Pick<Config, 'http' | 'query' | 'rateLimit'>;
  cube: CubeService;
  authenticator: Authenticator;
  logger: Logger;
  metrics: Metrics;
  /** Where rate limits count: memory unless REDIS_URL is set. */
  limitStores?: LimitStores;
}

/** What a client may send as x-request-id: Cube's clients send `<uuid>-span-<n>`. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The routes that carry Server-Timing, and are their own label in the request metrics. */
const DATA_ROUTES = ['/v1/data/meta', '/v1/data/load'];

/**
 * The HTTP surface, in the order a request meets it: request id, metrics
 * and log line, Server-Timing on the data routes, security headers, CORS
 * (off unless configured), API key (with a limit per address on requests
 * without a valid one), per-key rate limits, the two routes, the error
 * envelope. Routing is non-strict, so the
 * trailing slash is optional.
 */
export function createApp({ config, cube, authenticator, logger, metrics, limitStores = memoryStores }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Decides req.ip, which keys the limit on requests without a valid key.
  app.set('trust proxy', config.http.trustProxyHops);

  app.use((req, res, next) => {
    // A client's own id (one that cannot forge a log line) ties its logs to ours.
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', res.locals.requestId);
    const started = performance.now();
    res.locals.startedAt = started;
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
  });
  // Mounted by path, so that requests refused before routing (401, 429) count under their route too.
  for (const route of DATA_ROUTES) {
    app.use(route, (_req, res, next) => {
      res.locals.route = route;
      next();
    });
  }
  app.use(DATA_ROUTES, serverTiming(metrics.timings));

  app.use(helmet());
  // Answers hold one account's figures: no shared cache may keep them.
  app.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  if (config.http.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.http.corsOrigins.includes('*') ? '*' : config.http.corsOrigins,
        methods: ['GET', 'POST'],
        allowedHeaders: ['x-api-key', 'content-type'],
        exposedHeaders: ['x-request-id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Server-Timing'],
        maxAge: 600,
      }),
    );
  }

  const limits = { limits: config.rateLimit, stores: limitStores, metrics };
  // No request outlives the query timeout by a minute; a slot older than that belongs to a dead instance.
  const oneAtATime = concurrencyLimit(limits, config.query.timeoutMs + 60_000);
  const v1 = express.Router();
  v1.use(
    identifyApiKey(authenticator, (reason) => metrics.authFailures.inc({ reason })),
    unauthenticatedRateLimit(limits),
    requireApiKey,
    requestRateLimit(limits),
  );
  v1.route('/data/meta')
    .get(requireScope('data:meta'), oneAtATime(metaRoute(cube)))
    .all(methodNotAllowed('GET'));
  v1.route('/data/load')
    .get(requireScope('data:load'), oneAtATime(loadRoute(cube, config.query)))
    // Bodies are read as JSON whatever their Content-Type, so `curl -d` works as is.
    .post(
      requireScope('data:load'),
      express.json({ type: () => true, limit: config.http.bodyLimitBytes }),
      oneAtATime(loadRoute(cube, config.query)),
    )
    .all(methodNotAllowed('GET, POST'));
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
