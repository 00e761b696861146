import type { RequestHandler } from 'express';

/** GET /healthz — the process runs and its event loop answers; nothing else is checked, so a busy warehouse never gets it restarted. */
export const healthzRoute: RequestHandler = (_req, res) => {
  res.json({ status: 'ok' });
};
