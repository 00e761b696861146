import path from 'node:path';
import { createClient } from 'redis';
import { API_KEY } from '../support/constants';
import { freePort, parseScrape } from '../support/prometheus';
import { redisServerInstalled, startRedis, type RedisServer } from '../support/redis';
import { startService, type TestService } from '../support/service';
import { expectEnvelope } from './envelope';
import { load, meta } from '../support/api';

/** One tiny cube (compiles in a blink); each of its queries takes about 4 s. */
const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
/** A second operator key (operator-2), so each test spends a budget of its own. */
const SECOND_KEY = 'second-operator-key-for-redis-tests';

// CI installs redis-server (.ci/run); there a missing one fails the suite rather than skipping it.
const installed = redisServerInstalled();
if (!installed && process.env.CI === 'true') {
  throw new Error('redis-server is not installed: .ci/run installs it (apt-get install -y redis-server)');
}
if (!installed) process.stderr.write('skipped: the Redis tests: redis-server is not installed (apt-get install -y redis-server)\n');
const describeWithRedis = installed ? describe : describe.skip;

type LogLine = Record<string, unknown> & { level: string; msg: string };

interface Instance {
  service: TestService;
  logs: LogLine[];
}

async function startInstance(redisUrl: string, env: Record<string, string>, { connected = true } = {}): Promise<Instance> {
  const logs: LogLine[] = [];
  const service = await startService(
    { REDIS_URL: redisUrl, API_KEYS: `${API_KEY},${SECOND_KEY}`, ...env },
    { schemaPath: SLOW_SCHEMA, log: (line) => logs.push(JSON.parse(line)) },
  );
  if (connected) await waitFor(async () => (await redisUp(service)) === 1);
  return { service, logs };
}

async function redisUp(service: TestService): Promise<number> {
  return parseScrape(await service.metrics.registry.metrics()).value('analytics_rate_limit_redis_up');
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describeWithRedis('REDIS_URL: two instances share one Redis', () => {
  const LIMIT = 10;
  let redis: RedisServer;
  let oracle: ReturnType<typeof createClient>;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    redis = await startRedis();
    oracle = createClient({ url: redis.url }).on('error', () => undefined);
    await oracle.connect();
    const env = { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_UNAUTHENTICATED: '3', RATE_LIMIT_CONCURRENT: '1' };
    a = await startInstance(redis.url, env);
    b = await startInstance(redis.url, env);
  });
  afterAll(async () => {
    await a?.service.close();
    await b?.service.close();
    oracle?.destroy();
    await redis?.kill();
  });

  it('spends one budget per key across both: 6 on A and 4 on B, then the 11th is refused on either', async () => {
    for (let i = 1; i <= 6; i++) {
      const res = await meta(a.service);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`; r=${LIMIT - i}; `));
    }
    for (let i = 7; i <= LIMIT; i++) {
      const res = await meta(b.service);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`; r=${LIMIT - i}; `));
    }
    expectEnvelope(await meta(b.service), 'rate_limited');
    expectEnvelope(await meta(a.service), 'rate_limited');
    // Counted where the limiter says: Redis holds the key's count of requests, refused ones included.
    expect(await oracle.get('analytics:rate:key:operator-1')).toBe(String(LIMIT + 2));
    // Another key still has its own budget.
    expect((await meta(b.service, { key: SECOND_KEY })).status).toBe(200);
  });

  it('shares the limit on requests without a valid key from one address', async () => {
    expectEnvelope(await meta(a.service, { key: 'wrong-key' }), 'unauthorized');
    expectEnvelope(await meta(b.service, { key: 'wrong-key' }), 'unauthorized');
    expectEnvelope(await meta(a.service, { key: null }), 'unauthorized');
    expectEnvelope(await meta(b.service, { key: 'other-wrong-key' }), 'rate_limited');
  });

  it("shares the concurrency limit: while A runs a key's query, B refuses that key, then frees it", async () => {
    const slots = 'analytics:concurrent:key:operator-2';
    // supertest sends on then().
    const settled = load(a.service, { measures: ['Slow.count'] }, { key: SECOND_KEY }).then((res) => res);
    await waitFor(async () => (await oracle.zCard(slots)) === 1);
    const refused = await meta(b.service, { key: SECOND_KEY });
    expectEnvelope(refused, 'rate_limited', /concurrent/);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await settled).status).toBe(200);
    expect(await oracle.zCard(slots)).toBe(0);
    expect((await meta(b.service, { key: SECOND_KEY })).status).toBe(200);
  });

  it('answers from memory, never 5xx, when Redis is slower than a rate-limit check may wait', async () => {
    const pauser = createClient({ url: redis.url }).on('error', () => undefined);
    await pauser.connect();
    try {
      // Connected, but holding every write (the counters' scripts) for 3 s.
      await pauser.sendCommand(['CLIENT', 'PAUSE', '3000', 'WRITE']);
      const started = Date.now();
      const answers = await Promise.all([meta(a.service, { key: SECOND_KEY }), meta(b.service, { key: SECOND_KEY })]);
      const statuses = answers.map((res) => res.status);
      expect(statuses).toEqual([200, 200]);
      expect(Date.now() - started).toBeLessThan(3000);
      for (const instance of [a, b])
        expect(instance.logs).toContainEqual(expect.objectContaining({ level: 'error', msg: expect.stringMatching(/^redis unavailable/) }));
    } finally {
      await pauser.sendCommand(['CLIENT', 'UNPAUSE']);
      pauser.destroy();
    }
  });

  it('drops a slot left by an instance that died holding it, once older than any request may run', async () => {
    const slots = 'analytics:concurrent:key:operator-2';
    // Score 0: taken in 1970 by an instance long gone.
    await oracle.zAdd(slots, { score: 0, value: 'slot-of-a-dead-instance' });
    expect((await meta(a.service, { key: SECOND_KEY })).status).toBe(200);
    expect(await oracle.zCard(slots)).toBe(0);
  });
});

describeWithRedis('REDIS_URL: Redis goes down mid-run', () => {
  const LIMIT = 10;
  let redis: RedisServer;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    redis = await startRedis();
    const env = { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_CONCURRENT: '16' };
    a = await startInstance(redis.url, env);
    b = await startInstance(redis.url, env);
  });
  afterAll(async () => {
    await a?.service.close();
    await b?.service.close();
    await redis?.kill();
  });

  const outageLines = (instance: Instance) => instance.logs.filter((line) => line.msg.startsWith('redis unavailable'));

  it('answers every request, never 5xx, while Redis is killed under it; each instance then counts in its own memory, logged once', async () => {
    // Requests whose rate-limit commands are inside Redis when it dies: the
    // server holds every client's commands (CLIENT PAUSE) until it is killed.
    const pauser = createClient({ url: redis.url }).on('error', () => undefined);
    await pauser.connect();
    await pauser.sendCommand(['CLIENT', 'PAUSE', '10000', 'ALL']);
    // supertest sends on then(), so each request is on its way before the kill.
    const inFlight = Array.from({ length: 16 }, (_, i) => meta((i % 2 === 0 ? a : b).service).then((res) => res));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await redis.kill();
    pauser.destroy();
    const statuses = (await Promise.all(inFlight)).map((res) => res.status);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);

    // A fresh key: its whole budget on each instance, counted in memory there, then 429, and never 5xx.
    for (const instance of [a, b]) {
      for (let i = 1; i <= LIMIT; i++) {
        const res = await meta(instance.service, { key: SECOND_KEY });
        expect(res.status).toBe(200);
        expect(res.headers.ratelimit).toMatch(new RegExp(`; r=${LIMIT - i}; `));
      }
      expectEnvelope(await meta(instance.service, { key: SECOND_KEY }), 'rate_limited');
      expect(await redisUp(instance.service)).toBe(0);
    }
    // One error line per instance for the whole outage, not one per request.
    for (const instance of [a, b]) {
      expect(outageLines(instance)).toEqual([expect.objectContaining({ level: 'error', redis: redis.url })]);
    }
  });

  it('counts in Redis again once it is back', async () => {
    redis = await startRedis(redis.port);
    const oracle = createClient({ url: redis.url }).on('error', () => undefined);
    await oracle.connect();
    try {
      await waitFor(async () => (await redisUp(a.service)) === 1 && (await redisUp(b.service)) === 1);
      expect((await meta(a.service, { key: SECOND_KEY })).status).toBe(200);
      expect((await meta(b.service, { key: SECOND_KEY })).status).toBe(200);
      // The new server started empty: both requests were counted there, by both instances.
      expect(await oracle.get('analytics:rate:key:operator-2')).toBe('2');
      for (const instance of [a, b]) {
        expect(instance.logs.filter((line) => line.msg.startsWith('redis available again'))).toHaveLength(1);
        expect(outageLines(instance)).toHaveLength(1);
      }
    } finally {
      oracle.destroy();
    }
  });
});

describeWithRedis('REDIS_URL: Redis is down when the instance starts', () => {
  it('starts, answers from memory, and counts in Redis once Redis is up', async () => {
    const port = await freePort();
    const instance = await startInstance(`redis://127.0.0.1:${port}`, { RATE_LIMIT_REQUESTS: '10' }, { connected: false });
    let redis: RedisServer | undefined;
    const oracle = createClient({ url: `redis://127.0.0.1:${port}` }).on('error', () => undefined);
    try {
      for (let i = 1; i <= 3; i++) expect((await meta(instance.service)).headers.ratelimit).toMatch(new RegExp(`; r=${10 - i}; `));
      expect(instance.logs).toContainEqual(expect.objectContaining({ level: 'error', msg: expect.stringMatching(/^redis unavailable/) }));
      redis = await startRedis(port);
      await oracle.connect();
      await waitFor(async () => (await redisUp(instance.service)) === 1);
      // Redis starts from zero: its first count for the key, loaded with the scripts the instance could not load at start.
      expect((await meta(instance.service)).headers.ratelimit).toMatch(/; r=9; /);
      expect(await oracle.get('analytics:rate:key:operator-1')).toBe('1');
    } finally {
      oracle.destroy();
      await instance.service.close();
      await redis?.kill();
    }
  });
});
