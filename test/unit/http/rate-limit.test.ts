import crypto from 'node:crypto';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import request from 'supertest';
import { ServiceError } from '../../../src/errors';
import { memoryStores } from '../../../src/http/limit-stores';
import { requestRateLimit, unauthenticatedRateLimit } from '../../../src/http/rate-limit';
import { createMetrics } from '../../../src/metrics/registry';

/**
 * The per-key limiter against the oracle it replaced: express-rate-limit
 * itself, configured as the service configured it before (draft-8 headers,
 * keyed by the key id, refusing through the error envelope).
 */
function libraryLimiter(limit: number, windowMs: number): RequestHandler {
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new MemoryStore(),
    keyGenerator: (_req, res) => (res.locals.principal as { keyId: string }).keyId,
    handler: (_req, _res, next) => next(new ServiceError('rate_limited', 'limited')),
  });
}

function appWith(limiter: RequestHandler) {
  const app = express();
  app.use((req, res, next) => {
    const keyId = req.get('x-key');
    if (keyId !== undefined) res.locals.principal = { keyId, accountId: null, scopes: [] };
    next();
  });
  app.use(limiter);
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  app.use(((err, _req, res, _next) => {
    res.status(err instanceof ServiceError && err.code === 'rate_limited' ? 429 : 500).send(String(err));
  }) as ErrorRequestHandler);
  return app;
}

/** What a client sees of a limiter. */
async function seen(app: express.Express, keyId: string) {
  const res = await request(app).get('/').set('x-key', keyId);
  return { status: res.status, limit: res.headers.ratelimit, policy: res.headers['ratelimit-policy'], retryAfter: res.headers['retry-after'] };
}

const T0 = Date.parse('2026-11-26T12:00:00.250Z');

describe('requestRateLimit', () => {
  beforeEach(() => {
    // Only Date: both limiters read the same clock, and the HTTP requests still run on real timers.
    jest.useFakeTimers({
      now: T0,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it.each([
    [1, 1_000],
    [3, 30_000],
    [3, 60_000],
    [2, 90_000],
    [5, 3_600_000],
    [4, 7_200_000],
    [2, 86_400_000],
    [3, 172_800_000],
  ])('answers as express-rate-limit does, request for request: limit %i per %i ms', async (limit, windowMs) => {
    const ours = appWith(
      requestRateLimit({ limits: { requests: limit, windowMs, unauthenticated: 1, concurrent: 1 }, stores: memoryStores, metrics: createMetrics() }),
    );
    const theirs = appWith(libraryLimiter(limit, windowMs));
    // Two keys interleaved, past the limit, then the clock moved within the window and past its end.
    const steps: [string, number][] = [];
    for (let i = 0; i < limit + 2; i += 1) steps.push(['key-a', 0], ['operator-1', 0]);
    steps.push(['key-a', windowMs / 3], ['key-a', windowMs / 2 + 7], ['operator-1', 1], ['key-a', windowMs], ['operator-1', 0], ['key-a', 0]);
    let statuses = '';
    for (const [keyId, advanceMs] of steps) {
      jest.setSystemTime(Date.now() + advanceMs);
      const mine = await seen(ours, keyId);
      expect(mine).toEqual(await seen(theirs, keyId));
      statuses += `${mine.status} `;
    }
    // Both outcomes were compared, not only one of them.
    expect(statuses).toContain('200');
    expect(statuses).toContain('429');
  });

  it("makes a key id's partition key once, not on every request", async () => {
    const app = appWith(
      requestRateLimit({ limits: { requests: 1000, windowMs: 60_000, unauthenticated: 1, concurrent: 1 }, stores: memoryStores, metrics: createMetrics() }),
    );
    const hashes = jest.spyOn(crypto, 'createHash');
    const first = await seen(app, 'key-a');
    for (let i = 0; i < 20; i += 1) expect((await seen(app, 'key-a')).policy).toBe(first.policy);
    await seen(app, 'key-b');
    // Express's ETags are sha1.
    expect(hashes.mock.calls.filter(([algorithm]) => algorithm === 'sha256')).toHaveLength(2);
  });
});

describe('unauthenticatedRateLimit', () => {
  const limiter = unauthenticatedRateLimit({
    limits: { requests: 1, windowMs: 60_000, unauthenticated: 1, concurrent: 1 },
    stores: memoryStores,
    metrics: createMetrics(),
  });

  it('passes a request with a valid key on at once, before the limiter does any work of its own', () => {
    const next = jest.fn();
    const res = { locals: { principal: { keyId: 'key-a', accountId: null, scopes: [] } } };
    limiter({} as express.Request, res as unknown as express.Response, next);
    expect(next).toHaveBeenCalledWith();
  });

  it('still counts and refuses requests without one', async () => {
    const app = appWith(limiter);
    expect((await request(app).get('/')).status).toBe(200);
    const refused = await request(app).get('/');
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toMatch(/^"unauthenticated"; q=1; w=60; pk=:/);
  });
});
