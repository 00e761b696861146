import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import path from 'node:path';
import type { Server } from 'node:http';
import request from 'supertest';
import { startService, type TestService } from '../support/service';
import { createHttpServer } from '../../../src/http/server';
import { refusedConnections } from '../../../src/http/refused-connections';

const SLOW_SCHEMA = path.join(__dirname, '..', 'fixtures', 'slow-schema');
const CAP = 20;
const FLOOD = 50;

describe(`a flood of ${FLOOD} slow-header connections against HTTP_MAX_CONNECTIONS=${CAP}`, () => {
  let service: TestService;
  let server: Server;
  const lines: Record<string, any>[] = [];
  beforeAll(async () => {
    service = await startService(
      { HTTP_MAX_CONNECTIONS: String(CAP), HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '1' },
      { schemaPath: SLOW_SCHEMA, log: (line) => lines.push(JSON.parse(line)) },
    );
    server = createHttpServer(service.app, service.config.http, service.logger);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.close();
  });

  it('refuses the sockets over the cap, logs it once, counts them, and answers a normal client once the header timeout frees the rest', async () => {
    const port = (server.address() as AddressInfo).port;
    const refusedBefore = refusedConnections();
    const sockets: Socket[] = [];
    const closed: Promise<void>[] = [];
    let timedOut = 0;
    for (let i = 0; i < FLOOD; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      // Reading lets 'close' come after the server's FIN (a 408 or a refusal).
      socket.on('data', (chunk: Buffer) => {
        if (chunk.toString().startsWith('HTTP/1.1 408')) timedOut += 1;
      });
      // Headers that never end.
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
      sockets.push(socket);
    }
    // Refused sockets close at once; the others when their header timeout passes.
    await Promise.all(closed);

    // Every socket was either refused or held until its header timeout (a
    // slot freed by a timeout may take a late socket of the flood).
    const refused = refusedConnections() - refusedBefore;
    expect(refused + timedOut).toBe(FLOOD);
    expect(refused).toBeGreaterThan(0);
    const refusals = lines.filter((l) => l.msg === 'connections refused: the server holds HTTP_MAX_CONNECTIONS');
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThan(refused);
    expect(refusals[0]).toMatchObject({ level: 'warn', maxConnections: CAP });

    const res = await request(`http://127.0.0.1:${port}`).get('/healthz');
    expect(res.status).toBe(200);
  });
});
