import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import type { CubeService } from '../cube/service';
import type { Authenticator, Principal } from '../keys/authenticator';
import type { Logger } from '../log';
import { identifyApiKey, requireApiKey, requireScope } from './auth';
import { errorHandler, methodNotAllowed, notFound } from './errors';
import { concurrencyLimit, requestRateLimit, unauthenticatedRateLimit } from './rate-limit';
import { loadRoute } from './routes/load';
import { metaRoute } from './routes/meta';
import { openApiRoute } from './routes/openapi';

export interface AppDeps {
  config: Pick<Config, 'http' | 'query' | 'rateLimit'>;
  cube: CubeService;
  authenticator: Authenticator;
  logger: Logger;
}

/**
 * The HTTP surface, in the order a request meets it: request id and log
 * line, security headers, CORS (off unless configured), API key (with a
 * limit per address on requests without a valid one), per-key rate limits,
 * the two routes, the error envelope. Routing is non-strict, so the
 * trailing slash is optional.
 */
export function createApp({ config, cube, authenticator, logger }: AppDeps): Express {
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
        allowedHeaders: ['x-api-key', 'content-type'],
        exposedHeaders: ['x-request-id', 'RateLimit', 'RateLimit-Policy', 'Retry-After'],
        maxAge: 600,
      }),
    );
  }

  const oneAtATime = concurrencyLimit(config.rateLimit.concurrent);
  const v1 = express.Router();
  v1.use(
    identifyApiKey(authenticator),
    unauthenticatedRateLimit(config.rateLimit),
    requireApiKey,
    requestRateLimit(config.rateLimit),
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
  // Public, like any API description: before the v1 router's key check and rate limits.
  app.route('/v1/openapi.json').get(openApiRoute()).all(methodNotAllowed('GET'));
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
