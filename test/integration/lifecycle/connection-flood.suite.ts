import { get, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { startService, type TestService } from '../support/service';
import { createHttpServer } from '../../../src/http/server';
import { API_KEY } from '../support/constants';

/**
 * HTTP_MAX_CONNECTIONS against sockets that never finish their headers, all
 * from 127.0.0.1 like the normal client's: at the cap a newcomer takes the
 * place of the socket that has waited longest for its headers, then of the
 * longest-idle keep-alive; a socket with a request in progress is never
 * closed. Bounded: a few hundred loopback sockets for a few seconds.
 */

interface Listening {
  service: TestService;
  server: Server;
  port: number;
  lines: Record<string, any>[];
}

async function listening(env: Record<string, string>): Promise<Listening> {
  const lines: Record<string, any>[] = [];
  const service = await startService(env, { log: (line) => lines.push(JSON.parse(line)) });
  const server = createHttpServer(service.app, service.config.http, service.logger, service.metrics);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { service, server, port: (server.address() as AddressInfo).port, lines };
}

async function stop({ server, service }: Listening): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await service.close();
}

async function shed(service: TestService): Promise<Record<string, number>> {
  const { values } = await service.metrics.connectionsShed.get();
  return Object.fromEntries(values.map(({ labels, value }) => [String(labels.reason), value]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request on a connection of its own (no keep-alive), as a client without an agent makes: its status, or the error. */
function normalRequest(port: number, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-api-key': API_KEY }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', (err) => resolve(err.message));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const CAP = 100;
const FLOOD = 300;
const REQUESTS = 100;

describe(`${FLOOD} connections sending their headers byte by byte against HTTP_MAX_CONNECTIONS=${CAP}`, () => {
  let ctx: Listening;
  beforeAll(async () => {
    // Header timeouts long enough that no slot frees itself during the test.
    ctx = await listening({ HTTP_MAX_CONNECTIONS: String(CAP), HTTP_HEADERS_TIMEOUT_SECONDS: '60', HTTP_REQUEST_TIMEOUT_SECONDS: '60' });
  });
  afterAll(() => stop(ctx));

  it("answers at least 99 % of a normal client's requests from the same address, closing the oldest waiting sockets, counted and logged at most every 10 s", async () => {
    const { port, service, lines } = ctx;
    const flood: Socket[] = [];
    let closedByServer = 0;
    const trickle = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ' + 'a'.repeat(10_000);
    let stopped = false;
    const opening = (async () => {
      // About 100 new sockets a second, so that the cap is full while the normal client asks, and newcomers keep coming.
      for (let i = 0; i < FLOOD && !stopped; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.on('close', () => {
          if (!stopped) closedByServer += 1;
        });
        (socket as Socket & { sent?: number }).sent = 0;
        flood.push(socket);
        if (i % 10 === 9) await sleep(100);
      }
    })();
    const dripping = setInterval(() => {
      for (const socket of flood as (Socket & { sent: number })[]) {
        if (!socket.destroyed && socket.readyState === 'open') socket.write(trickle[socket.sent++ % trickle.length]);
      }
    }, 100);

    const answers: (number | string)[] = [];
    try {
      // Wait for the cap to be full before the normal client's first request.
      while (flood.length < CAP + 20) await sleep(20);
      for (let i = 0; i < REQUESTS; i++) {
        answers.push(await normalRequest(port, i % 4 === 0 ? '/v1/data/meta' : '/healthz'));
        await sleep(20);
      }
      await opening;
      // The last closes reach the client.
      await sleep(200);
    } finally {
      stopped = true;
      clearInterval(dripping);
      for (const socket of flood) socket.destroy();
    }

    // What the normal client met, by outcome: statuses, or error codes such as ECONNRESET.
    const outcomes: Record<string, number> = {};
    for (const status of answers) outcomes[status] = (outcomes[status] ?? 0) + 1;
    expect({ atLeast99Percent: (outcomes[200] ?? 0) / REQUESTS >= 0.99, outcomes }).toMatchObject({ atLeast99Percent: true });

    // Only waiting sockets were closed (the normal client's never idle nor refused), all of them counted.
    const counted = await shed(service);
    expect(counted.idle ?? 0).toBe(0);
    expect(counted.refused ?? 0).toBe(0);
    expect(counted.waiting_headers).toBe(closedByServer);
    expect(counted.waiting_headers).toBeGreaterThanOrEqual(FLOOD - CAP);
    const logged = lines.filter((l) => l.msg === 'connections closed: the server holds HTTP_MAX_CONNECTIONS');
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(logged.length).toBeLessThanOrEqual(2);
    expect(logged[0]).toMatchObject({ level: 'warn', maxConnections: CAP, lastFrom: '127.0.0.1' });
  }, 60_000);
});

describe('which connection makes room, at HTTP_MAX_CONNECTIONS=2', () => {
  let ctx: Listening;
  let requestsSeen = 0;
  let connectionsSeen = 0;
  beforeAll(async () => {
    ctx = await listening({ HTTP_MAX_CONNECTIONS: '2', HTTP_HEADERS_TIMEOUT_SECONDS: '60', HTTP_REQUEST_TIMEOUT_SECONDS: '60' });
    ctx.server.on('request', () => (requestsSeen += 1));
    ctx.server.on('connection', () => (connectionsSeen += 1));
  });
  afterAll(() => stop(ctx));

  interface Client {
    socket: Socket;
    received: string;
    closed: boolean;
  }

  /** A raw connection, once the server has taken it. */
  async function open(): Promise<Client> {
    const before = connectionsSeen;
    const socket = connect(ctx.port, '127.0.0.1');
    const client: Client = { socket, received: '', closed: false };
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (client.received += chunk.toString()));
    socket.on('close', () => (client.closed = true));
    while (connectionsSeen === before) await sleep(5);
    // The server acts on a newcomer in the same turn it accepts it.
    await sleep(20);
    return client;
  }

  /** A finished keep-alive request: the connection is then idle. */
  async function idle(): Promise<Client> {
    const client = await open();
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!client.received.includes('\r\n\r\n{')) await sleep(5);
    await sleep(20);
    return client;
  }

  /** A request whose headers are complete and whose body never is: in progress. */
  async function active(): Promise<Client> {
    const before = requestsSeen;
    const client = await open();
    client.socket.write(
      `POST /v1/data/load HTTP/1.1\r\nHost: x\r\nx-api-key: ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":`,
    );
    while (requestsSeen === before) await sleep(5);
    return client;
  }

  /** Headers begun and never finished. */
  async function waiting(): Promise<Client> {
    const client = await open();
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await sleep(20);
    return client;
  }

  it('the oldest waiting one first, then the longest idle; a newcomer is refused only when every other has a request in progress', async () => {
    const before = await shed(ctx.service);
    const delta = async () => {
      const now = await shed(ctx.service);
      return Object.fromEntries(['waiting_headers', 'idle', 'refused'].map((r) => [r, (now[r] ?? 0) - (before[r] ?? 0)]));
    };

    const idleOld = await idle();
    const idleNew = await idle();
    // Two idle: a newcomer takes the older one's place.
    const waitingOld = await waiting();
    expect([idleOld.closed, idleNew.closed, waitingOld.closed]).toEqual([true, false, false]);
    // One idle, one waiting: the waiting one goes, however new, before the idle one.
    const waitingNew = await waiting();
    expect([idleNew.closed, waitingOld.closed, waitingNew.closed]).toEqual([false, true, false]);
    // Waiting ones go oldest first.
    const waitingNewer = await waiting();
    expect([idleNew.closed, waitingNew.closed, waitingNewer.closed]).toEqual([false, true, false]);
    expect(await delta()).toEqual({ waiting_headers: 2, idle: 1, refused: 0 });

    // Two requests in progress: nothing else to close, so the newcomer is.
    const first = await active();
    const second = await active();
    expect([idleNew.closed, waitingNewer.closed, first.closed, second.closed]).toEqual([true, true, false, false]);
    const newcomer = await open();
    await sleep(50);
    expect([first.closed, second.closed, newcomer.closed]).toEqual([false, false, true]);
    expect(await delta()).toEqual({ waiting_headers: 3, idle: 2, refused: 1 });

    // The requests in progress finish unharmed.
    for (const client of [first, second]) client.socket.write('{}}'.padEnd(100 - '{"query":'.length, ' '));
    while (![first, second].every((c) => /^HTTP\/1.1 \d+/.test(c.received))) await sleep(5);
    expect([first.closed, second.closed]).toEqual([false, false]);
    for (const client of [first, second]) client.socket.destroy();
  });
});
