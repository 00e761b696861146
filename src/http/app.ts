import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { Config } from '../config';
import type { CubeService } from '../cube/service';
import type { Logger } from '../log';
import { requireApiKey } from './auth';
import { errorHandler, methodNotAllowed, notFound } from './errors';
import { loadRoute } from './routes/load';
import { metaRoute } from './routes/meta';

export interface AppDeps {
  config: Pick<Config, 'apiKeys' | 'http'>;
  cube: CubeService;
  logger: Logger;
}

/**
 * The HTTP surface: request ids, authentication, the two routes and the
 * error envelope. Routing is non-strict, so the trailing slash is optional.
 */
export function createApp({ config, cube, logger }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');

  app.use((req, res, next) => {
    res.locals.requestId = randomUUID();
    res.setHeader('x-request-id', res.locals.requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
      });
    });
    next();
  });

  const v1 = express.Router();
  v1.use(requireApiKey(config.apiKeys));
  v1.route('/data/meta').get(metaRoute(cube)).all(methodNotAllowed('GET'));
  v1.route('/data/load')
    .get(loadRoute(cube))
    // Bodies are read as JSON whatever their Content-Type, so `curl -d` works as is.
    .post(express.json({ type: () => true, limit: config.http.bodyLimitBytes }), loadRoute(cube))
    .all(methodNotAllowed('GET, POST'));
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
