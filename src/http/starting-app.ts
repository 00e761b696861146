import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { Logger } from '../log';
import { ServiceError } from '../errors';
import { errorHandler } from './errors';
import { healthzRoute } from './routes/healthz';

/**
 * What the server answers while the service starts (the demo data being
 * built, the models being checked): /healthz 200, and every other request
 * 503 not_ready saying what the service waits for, so a probe or a client
 * learns why instead of meeting a refused connection.
 */
export function createStartingApp(logger: Logger, waitingFor: () => string): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.locals.requestId = randomUUID();
    res.setHeader('x-request-id', res.locals.requestId);
    next();
  });
  app.get('/healthz', healthzRoute);
  app.use(() => {
    throw new ServiceError('not_ready', `Not ready: ${waitingFor()}.`);
  });
  app.use(errorHandler(logger));
  return app;
}
