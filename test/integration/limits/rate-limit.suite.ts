import path from 'node:path';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { load, meta } from '../support/api';

/** One tiny cube (compiles in a blink); each of its queries takes about 4 s. */
const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
const ACCOUNT = 'northwind-audio';

function expectRetryAfter(header: string | undefined, atMostSeconds: number) {
  expect(header).toMatch(/^\d+$/);
  expect(Number(header)).toBeGreaterThan(0);
  expect(Number(header)).toBeLessThanOrEqual(atMostSeconds);
}

describe('RATE_LIMIT_REQUESTS=3 per RATE_LIMIT_WINDOW_SECONDS=60', () => {
  const LIMIT = 3;
  const WINDOW_SECONDS = 60;
  let service: TestService;
  beforeAll(async () => {
    service = await startService(
      { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) },
      { schemaPath: SLOW_SCHEMA, accounts: [ACCOUNT] },
    );
  });
  afterAll(() => service.close());

  async function spendBudget(key: string) {
    for (let i = 1; i <= LIMIT; i++) {
      const res = await meta(service, { key });
      expect(res.status).toBe(200);
      // IETF draft 8: RateLimit: "<policy>"; r=<remaining>; t=<seconds to reset>[; pk=<partition key>]
      const limit = /^"([^"]+)"; r=(\d+); t=(\d+)(; pk=:[A-Za-z0-9+/=]+:)?$/.exec(res.headers.ratelimit ?? '');
      expect(limit).not.toBeNull();
      expect(Number(limit![2])).toBe(LIMIT - i);
      expect(Number(limit![3])).toBeGreaterThan(0);
      expect(Number(limit![3])).toBeLessThanOrEqual(WINDOW_SECONDS);
      expect(res.headers['ratelimit-policy']).toMatch(new RegExp(`^"${limit![1]}"; q=${LIMIT}; w=${WINDOW_SECONDS}(; pk=:[A-Za-z0-9+/=]+:)?$`));
      // The partition key, if sent, is a digest: never the API key itself.
      expect(`${res.headers.ratelimit} ${res.headers['ratelimit-policy']}`).not.toContain(key);
      expect(res.headers['retry-after']).toBeUndefined();
    }
  }

  it('lets 3 requests through with RateLimit headers counting down, and answers the 4th 429 with Retry-After', async () => {
    await spendBudget(API_KEY);
    const res = await meta(service);
    expectEnvelope(res, 'rate_limited', /3/);
    expectRetryAfter(res.headers['retry-after'], WINDOW_SECONDS);
  });

  it('counts per key, not per route: the spent key is refused on /data/load too, before any query runs', async () => {
    const res = await load(service, { measures: ['Slow.count'] });
    expectEnvelope(res, 'rate_limited');
    expectRetryAfter(res.headers['retry-after'], WINDOW_SECONDS);
  });

  it('gives another key (an account key) a budget of its own', async () => {
    await spendBudget(service.accountKeys[ACCOUNT]);
    expectEnvelope(await meta(service, { key: service.accountKeys[ACCOUNT] }), 'rate_limited');
  });

  it('answers a request without a valid key 401, not 429: the limit is per key, after authentication', async () => {
    const res = await meta(service, { key: 'not-a-key' });
    expectEnvelope(res, 'unauthorized');
  });
});

describe('RATE_LIMIT_CONCURRENT=1', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ RATE_LIMIT_CONCURRENT: '1' }, { schemaPath: SLOW_SCHEMA, accounts: [ACCOUNT] });
  });
  afterAll(() => service.close());

  it("refuses a second request of the same key while its first runs, not another key's, and frees the slot after", async () => {
    let slowDone = false;
    const slow = load(service, { measures: ['Slow.count'], filters: [{ member: 'Slow.number', operator: 'lt', values: ['100'] }] }).then((res) => {
      slowDone = true;
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));

    const second = await meta(service);
    const secondLoad = await load(service, { measures: ['Slow.count'] });
    const otherKey = await meta(service, { key: service.accountKeys[ACCOUNT] });
    expect(slowDone).toBe(false); // the answers above came while the first request still ran

    expectEnvelope(second, 'rate_limited', /concurrent/);
    expectRetryAfter(second.headers['retry-after'], 60);
    expectEnvelope(secondLoad, 'rate_limited', /concurrent/);
    expect(otherKey.status).toBe(200);

    const first = await slow;
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([{ 'Slow.count': '8' }]);
    expect((await meta(service)).status).toBe(200);
  });

  it('frees the slot when the request fails, too', async () => {
    const failed = await load(service, { measures: ['Slow.nope'] });
    expectEnvelope(failed, 'invalid_query');
    expect((await meta(service)).status).toBe(200);
  });
});

describe('RATE_LIMIT_UNAUTHENTICATED=3: requests without a valid key, per client address', () => {
  const LIMIT = 3;
  const services: TestService[] = [];
  async function start(env: Record<string, string> = {}) {
    const service = await startService({ RATE_LIMIT_UNAUTHENTICATED: String(LIMIT), ...env }, { schemaPath: SLOW_SCHEMA, accounts: [] });
    services.push(service);
    return service;
  }
  afterAll(() => Promise.all(services.map((service) => service.close())));

  /** The meta route with the key (none if not given), from the address forwardedFor names. */
  const metaFrom = (service: TestService, key?: string, forwardedFor?: string) => {
    const req = meta(service, { key: key ?? null });
    return forwardedFor === undefined ? req : req.set('x-forwarded-for', forwardedFor);
  };

  it('answers 401 three times, then 429 with Retry-After, counting missing and wrong keys alike', async () => {
    const service = await start();
    const answers = [await metaFrom(service), await metaFrom(service, 'wrong-key'), await metaFrom(service, `${API_KEY}x`)];
    for (const [i, res] of answers.entries()) {
      expectEnvelope(res, 'unauthorized');
      expect(res.headers.ratelimit).toBe(`"unauthenticated"; r=${LIMIT - 1 - i}; t=60`);
    }
    const refused = await metaFrom(service, 'wrong-key');
    expectEnvelope(refused, 'rate_limited', /without a valid API key/);
    expectRetryAfter(refused.headers['retry-after'], 60);
    expect((await load(service, {}, { key: null })).status).toBe(429);
  });

  it('never counts or refuses a valid key from the same address', async () => {
    const service = await start();
    for (let i = 0; i < LIMIT; i++) expect((await metaFrom(service, API_KEY)).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await metaFrom(service, 'wrong-key')).status).toBe(401);
    expect((await metaFrom(service, 'wrong-key')).status).toBe(429);
    const valid = await metaFrom(service, API_KEY);
    expect(valid.status).toBe(200);
    // Only the key's own budget shows: the limit on bad keys never applied to this request.
    expect(valid.headers['ratelimit-policy']).not.toContain('unauthenticated');
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY_HOPS trusts a proxy', async () => {
    const service = await start();
    for (let i = 0; i < LIMIT; i++) expect((await metaFrom(service, 'wrong-key', `198.51.100.${i}`)).status).toBe(401);
    expect((await metaFrom(service, 'wrong-key', '198.51.100.99')).status).toBe(429);
  });

  it('with TRUST_PROXY_HOPS=1, counts each client address the proxy names on its own', async () => {
    const service = await start({ TRUST_PROXY_HOPS: '1' });
    for (let i = 0; i < LIMIT; i++) expect((await metaFrom(service, 'wrong-key', '198.51.100.7')).status).toBe(401);
    expect((await metaFrom(service, 'wrong-key', '198.51.100.7')).status).toBe(429);
    expect((await metaFrom(service, 'wrong-key', '203.0.113.8')).status).toBe(401);
    // A client cannot pick its address: the proxy appends the one it saw, and only that hop is trusted.
    expect((await metaFrom(service, 'wrong-key', '203.0.113.8, 198.51.100.7')).status).toBe(429);
  });
});
