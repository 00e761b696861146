import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_KEY } from '../support/constants';
import { startService, type TestService } from '../support/service';
import { amplificationRequest, LOAD_PATH } from '../../../bench/abuse/cases';
import { clean, runAbuse, send, type Exchange } from '../../../bench/abuse/harness';

/** Fixed so CI is reproducible; FUZZ_SEED replays or explores another sequence. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = 300;
const AMPLIFICATION_RUNS = 200;
const BODY_LIMIT_BYTES = 100 * 1024;

let service: TestService;
let server: Server;
let target: URL;
beforeAll(async () => {
  // Rate limits would answer 429 to the fuzzer's burst and hide what the query path does.
  service = await startService({ RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_UNAUTHENTICATED: '1000000', RATE_LIMIT_CONCURRENT: '1000' });
  server = service.app.listen(0);
  await once(server, 'listening');
  target = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await service.close();
});

describe(`${RUNS} generated hostile requests (seed ${SEED})`, () => {
  it('never answer 5xx, a stack trace or internals, always the error envelope, and a valid query still works', async () => {
    const summary = await runAbuse({ baseUrl: target.href, apiKey: API_KEY, numRuns: RUNS, seed: SEED, checkEvery: 50 });
    // The samples first: on failure they show the requests to replay.
    expect(clean(summary) ? [] : summary.samples).toEqual([]);
    expect(summary).toMatchObject({ cases: RUNS, serverErrors: 0, leaks: 0, nonEnvelope: 0, requestErrors: 0, validChecks: { failed: 0 } });
    expect(summary.validChecks.passed).toBeGreaterThanOrEqual(RUNS / 50 + 1);
    // Most cases must get past authentication and body parsing, or the run proves little about Cube and the database.
    expect(summary.byStatus['200'] ?? 0).toBeGreaterThan(RUNS / 20);
    expect(summary.byStatus['400'] ?? 0).toBeGreaterThan(RUNS / 3);
  }, 300_000);
});

describe(`${AMPLIFICATION_RUNS} amplification requests (seed ${SEED})`, () => {
  it('are answered without holding the event loop for more than 1 s, never 5xx, always the envelope', async () => {
    const summary = await runAbuse({
      baseUrl: target.href,
      apiKey: API_KEY,
      numRuns: AMPLIFICATION_RUNS,
      seed: SEED,
      checkEvery: 50,
      requests: amplificationRequest(API_KEY),
    });
    expect(clean(summary) ? [] : summary.samples).toEqual([]);
    expect(summary).toMatchObject({ cases: AMPLIFICATION_RUNS, blocked: 0, serverErrors: 0, requestErrors: 0, validChecks: { failed: 0 } });
    expect(summary.worstDelay.ms).toBeLessThanOrEqual(1000);
    // Sizes straddle the limits: most are refused, some run as queries at or under them.
    expect(summary.byStatus['400'] ?? 0).toBeGreaterThan(AMPLIFICATION_RUNS / 2);
    expect(summary.byStatus['200'] ?? 0).toBeGreaterThan(AMPLIFICATION_RUNS / 20);
  }, 300_000);
});

describe('the worst shapes', () => {
  const post = (body: string | Buffer) =>
    send(target, { method: 'POST', path: LOAD_PATH, headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body }, 30_000);

  function expectClientError(exchange: Exchange, status: number | RegExp, code?: string) {
    expect(exchange.error).toBeUndefined();
    if (typeof status === 'number') expect(exchange.status).toBe(status);
    else expect(String(exchange.status)).toMatch(status);
    const body = JSON.parse(exchange.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'requestId']);
    if (code) expect(body.code).toBe(code);
    expect(exchange.body).not.toMatch(/\bat .+\(|node_modules|\.js:\d+|\.ts:\d+|\bstack\b|SELECT |Code: \d+/i);
  }

  const depth = 10_000;

  it('answers 4xx to measures nested 10,000 arrays deep', async () => {
    expectClientError(await post(`{"query":{"measures":${'['.repeat(depth)}"Downloads.count"${']'.repeat(depth)}}}`), /^4\d\d$/);
  });

  it('answers 4xx to or-filters nested 10,000 deep', async () => {
    const leaf = '{"member":"Downloads.country","operator":"equals","values":["Germany"]}';
    const filters = '{"or":['.repeat(depth) + leaf + ']}'.repeat(depth);
    expectClientError(await post(`{"query":{"measures":["Downloads.count"],"filters":[${filters}]}}`), /^4\d\d$/);
  });

  it('answers 4xx to a query key holding objects nested 10,000 deep', async () => {
    expectClientError(await post(`{"query":{"measures":["Downloads.count"],"x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`), /^4\d\d$/);
  });

  it('answers 400 invalid_json to 50,000 unclosed brackets', async () => {
    expectClientError(await post('['.repeat(50_000)), 400, 'invalid_json');
  });

  it('answers 413 to a body one byte over the limit, and takes one at the limit', async () => {
    const head = '{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.city","operator":"notEquals","values":[';
    const tail = ']}]}}';
    // Values of at most 1,000 characters (QUERY_MAX_VALUE_LENGTH), the last one taking up the rest.
    const sized = (bytes: number) => {
      const values: string[] = [];
      let room = bytes - head.length - tail.length;
      while (room > 1004) {
        values.push(`"${'y'.repeat(1000)}"`);
        room -= 1003;
      }
      values.push(`"${'z'.repeat(room - 2)}"`);
      return head + values.join(',') + tail;
    };
    expectClientError(await post(sized(BODY_LIMIT_BYTES + 1)), 413, 'payload_too_large');
    expect((await post(sized(BODY_LIMIT_BYTES))).status).toBe(200);
  });

  /** For bad text inside a string value the contract allows a refusal or a query that matches nothing; never a failure. */
  function expectRefusedOrNoRows(exchange: Exchange) {
    if (exchange.status === 200) expect(JSON.parse(exchange.body).data).toEqual([{ 'Downloads.count': '0' }]);
    else expectClientError(exchange, /^4\d\d$/);
  }

  it.each([
    ['in a member name', Buffer.concat([Buffer.from('{"query":{"measures":["Downloads.'), Buffer.from([0xff, 0xfe]), Buffer.from('count"]}}')])],
    ['between tokens', Buffer.concat([Buffer.from('{"query":'), Buffer.from([0xf8, 0x88, 0x80]), Buffer.from('{"measures":["Downloads.count"]}}')])],
  ])('answers 4xx to invalid UTF-8 %s', async (_label, body) => {
    expectClientError(await post(body), /^4\d\d$/);
  });

  it('refuses invalid UTF-8 in a filter value, or matches no row with it', async () => {
    const head = '{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.country","operator":"equals","values":["';
    expectRefusedOrNoRows(await post(Buffer.concat([Buffer.from(head), Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from('"]}]}}')])));
  });

  it('refuses a lone surrogate escape in a filter value, or matches no row with it', async () => {
    expectRefusedOrNoRows(
      await post('{"query":{"measures":["Downloads.count"],"filters":[{"member":"Downloads.country","operator":"contains","values":["\\ud800"]}]}}'),
    );
  });
});
