import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import type { CubeService } from '../cube/service';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Logger } from '../log';
import type { Readiness } from '../readiness';
import { apiKeyHeader, apiKeyOrAuthorization, identifyApiKey, requireApiKey, requireScope, type KeyReader } from './auth';
import { errorHandler, methodNotAllowed, notFound } from './errors';
import { concurrencyLimit, requestRateLimit, unauthenticatedRateLimit } from './rate-limit';
import { cubeDryRunRoute } from './routes/cubejs/dry-run';
import { cubeLoadRoute } from './routes/cubejs/load';
import { cubeMetaRoute } from './routes/cubejs/meta';
import { cubeSqlRoute } from './routes/cubejs/sql';
import { loadRoute } from './routes/load';
import { healthzRoute } from './routes/healthz';
import { metaRoute } from './routes/meta';
import { readyzRoute } from './routes/readyz';
import type { ShutdownGate } from './shutdown-gate';

export interface AppDeps {
  config: Pick<Config, 'http' | 'query' | 'rateLimit'>;
  cube: CubeService;
  authenticator: Authenticator;
  logger: Logger;
  readiness: Readiness;
  gate: ShutdownGate;
}

/**
 * The HTTP surface, in the order a request meets it: request id and log
 * line, security headers, CORS (off unless configured), API key (with a
 * limit per address on requests without a valid one), per-key rate limits,
 * the routes (the documented /v1 and Cube's own /cubejs-api/v1), the error
 * envelope. Routing is non-strict, so the trailing slash is optional. The
 * health probes come before keys, limits and the shutdown gate: a probe needs
 * no key, never uses up a client's budget, and is answered while the service
 * drains.
 */
export function createApp({ config, cube, authenticator, logger, readiness, gate }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Decides req.ip, which keys the limit on requests without a valid key.
  app.set('trust proxy', config.http.trustProxyHops);

  app.use((req, res, next) => {
    res.locals.requestId = randomUUID();
    res.setHeader('x-request-id', res.locals.requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info('request', {
        requestId: res.locals.requestId,
        // The key's id, never the key.
        keyId: (res.locals.principal as Principal | undefined)?.keyId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
      });
    });
    next();
  });

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
        // Cube's clients send their token in authorization and an x-request-id of their own.
        allowedHeaders: ['x-api-key', 'authorization', 'content-type', 'x-request-id'],
        exposedHeaders: ['x-request-id', 'RateLimit', 'RateLimit-Policy', 'Retry-After'],
        maxAge: 600,
      }),
    );
  }

  app.get('/healthz', healthzRoute);
  app.get('/readyz', readyzRoute(readiness));
  app.use(gate.middleware);

  // One set of counters for both APIs, so a key's limits hold across them.
  const oneAtATime = concurrencyLimit(config.rateLimit.concurrent);
  const perAddress = unauthenticatedRateLimit(config.rateLimit);
  const perKey = requestRateLimit(config.rateLimit);
  const authenticated = (readKey: KeyReader) => [identifyApiKey(authenticator, readKey), perAddress, requireApiKey, perKey];
  // Bodies are read as JSON whatever their Content-Type, so `curl -d` works as is.
  const jsonBody = express.json({ type: () => true, limit: config.http.bodyLimitBytes });

  const v1 = express.Router();
  v1.use(...authenticated(apiKeyHeader));
  v1.route('/data/meta')
    .get(requireScope('data:meta'), oneAtATime(metaRoute(cube)))
    .all(methodNotAllowed('GET'));
  v1.route('/data/load')
    .get(requireScope('data:load'), oneAtATime(loadRoute(cube, config.query)))
    .post(requireScope('data:load'), jsonBody, oneAtATime(loadRoute(cube, config.query)))
    .all(methodNotAllowed('GET, POST'));
  app.use('/v1', v1);

  // Cube's own REST API, for Cube's clients: Cube's shapes, through the same gateway methods.
  const cubejs = express.Router();
  cubejs.use(...authenticated(apiKeyOrAuthorization));
  cubejs.route('/meta').get(requireScope('data:meta'), oneAtATime(cubeMetaRoute(cube))).all(methodNotAllowed('GET'));
  for (const [path, route] of [
    ['/load', cubeLoadRoute],
    ['/sql', cubeSqlRoute],
    ['/dry-run', cubeDryRunRoute],
  ] as const) {
    cubejs
      .route(path)
      .get(requireScope('data:load'), oneAtATime(route(cube, config.query)))
      .post(requireScope('data:load'), jsonBody, oneAtATime(route(cube, config.query)))
      .all(methodNotAllowed('GET, POST'));
  }
  app.use('/cubejs-api/v1', cubejs);

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
