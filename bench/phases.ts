import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
// Before chdb: the allocator's options are read when the library loads.
import '../src/warehouse/allocator';
import { Session } from 'chdb';
import { parseConfig } from '../src/config';
import { DEMO_ACCOUNTS } from '../src/warehouse/reference-data';
import { statementTicket } from '../src/warehouse/statement-queue';
import { prepareDataset } from './dataset';
import { directSql } from './direct-sql';
import { send } from './http-load';
import { log, table } from './report';
import { GROUPED_100, queryOf, SIMPLE_COUNT } from './scenarios';
import { API_KEY, startBenchService } from './service';

/**
 * Where an uncached load's time goes beyond the engine's own:
 * `npm run bench:phases -- --data-dir DIR [--scale 1] [--requests 200]
 * [--shape count|group-by] [--key account|operator]`. Serves the service in
 * this process as `npm run bench` does, sends uncached loads one at a time,
 * alternating in blocks of 25 with the same SQL on the engine
 * (direct-sql.ts), and stamps each request at fixed points of its way:
 * the server's request event, Cube's gateway (load, normalization, the
 * statement's request), our driver's call, chDB's call and its settling,
 * the way back through Cube, `res.end`, the client's last byte. The parts
 * are differences of the stamps' medians, so they add up to the API's
 * median less the same SQL's. The stamps wrap Cube's methods on their
 * prototypes: a measuring tool, never the service's code.
 */

/** Each request's stamps, ms since its client sent it. */
type Stamps = Record<string, number>;

let current: (Stamps & { t0: number }) | undefined;

const stamp = (name: string) => {
  if (current && !(name in current)) current[name] = performance.now() - current.t0;
};

function around<T extends object>(target: T, method: string, name: string): void {
  const holder = target as Record<string, (...args: unknown[]) => unknown>;
  const original = holder[method];
  holder[method] = function (this: unknown, ...args: unknown[]) {
    stamp(`${name}>`);
    const result = original.apply(this, args);
    if (result instanceof Promise)
      void result.then(
        () => stamp(`${name}<`),
        () => undefined,
      );
    else stamp(`${name}<`);
    return result;
  };
}

function installStamps(): void {
  // The gateway class of the copy Cube's server core loads.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ApiGateway } = require(
    require.resolve('@cubejs-backend/api-gateway/dist/src/gateway', {
      paths: [path.dirname(require.resolve('@cubejs-backend/server-core'))],
    }),
  ) as { ApiGateway: { prototype: object } };
  around(ApiGateway.prototype, 'load', 'gateway');
  around(ApiGateway.prototype, 'getNormalizedQueries', 'normalize');
  around(ApiGateway.prototype, 'getSqlResponseInternal', 'statement request');
  const run = statementTicket.run.bind(statementTicket);
  statementTicket.run = ((ticket: never, work: () => unknown) => {
    stamp('driver>');
    const result = run(ticket, work);
    if (result instanceof Promise) void result.finally(() => stamp('driver<')).catch(() => undefined);
    return result;
  }) as typeof statementTicket.run;
  around(Session.prototype, 'queryAsync', 'chdb');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      scale: { type: 'string', default: '1' },
      requests: { type: 'string', default: '200' },
      shape: { type: 'string', default: 'count' },
      key: { type: 'string', default: 'account' },
    },
    strict: true,
  });
  if (!values['data-dir']) throw new Error('--data-dir DIR is required (demo data is built there, or reused)');
  const requests = Number(values.requests);
  const shape = values.shape === 'group-by' ? GROUPED_100 : SIMPLE_COUNT;
  if (values.key !== 'account' && values.key !== 'operator') throw new Error('--key takes account or operator');
  const dataDir = path.resolve(values['data-dir']);
  await prepareDataset(dataDir, parseConfig({ DEMO_SCALE: values.scale, DEMO_DAYS: '90' }).demo);
  installStamps();

  const [account] = DEMO_ACCOUNTS;
  const service = await startBenchService(
    dataDir,
    { RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_UNAUTHENTICATED: '1000000', RATE_LIMIT_CONCURRENT: '1000', QUERY_TIMEOUT_SECONDS: '120' },
    [account],
  );
  const server = http.createServer((req, res) => {
    stamp('arrive');
    const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.end = ((...args: unknown[]) => {
      stamp('res.end');
      return end(...args);
    }) as typeof res.end;
    service.app(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const key = values.key === 'account' ? service.accountKeys[account] : API_KEY;
  const scenario = { shape, key: values.key, cache: 'uncached' } as const;
  const direct = await directSql(scenario, { baseUrl, agent, key }, service.warehouse.queryClient(service.config.query));
  let sent = 0;
  const api = async () => {
    const answer = await send(baseUrl, agent, { method: 'POST', path: '/v1/data/load/', key, body: { query: queryOf(scenario, sent++) } });
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
  };
  const sql = async () => {
    const outcome = await direct.run(sent++);
    if (!outcome.ok) throw new Error(outcome.error);
  };
  const timed = async (into: Stamps[], run: () => Promise<void>) => {
    current = { t0: performance.now() };
    await run();
    current.client = performance.now() - current.t0;
    into.push(current);
    current = undefined;
  };
  // Untimed: Cube's first compile of the shape and its plan, and the engine's caches.
  for (let i = 0; i < 50; i++) {
    await api();
    await sql();
  }
  const apiStamps: Stamps[] = [];
  const sqlStamps: Stamps[] = [];
  for (let done = 0; done < requests; done += 25) {
    for (let i = 0; i < 25; i++) await timed(apiStamps, api);
    for (let i = 0; i < 25; i++) await timed(sqlStamps, sql);
  }
  agent.destroy();
  server.close();
  await service.close();

  const a = (name: string) => median(apiStamps.map((s) => s[name]));
  const d = (name: string) => median(sqlStamps.map((s) => s[name]));
  const parts: [string, number][] = [
    ['the request reaching the server (loopback)', a('arrive')],
    ["Express's layers and our route, to Cube's gateway", a('gateway>') - a('arrive')],
    [
      `Cube's gateway to the statement's request (normalization ${(a('normalize<') - a('normalize>')).toFixed(2)} of it)`,
      a('statement request>') - a('gateway>'),
    ],
    ["Cube's orchestrator and queue, to our driver", a('driver>') - a('statement request>')],
    ["our driver and statement queue to chDB's call, beyond the same SQL's", a('chdb>') - a('driver>') - d('chdb>')],
    ['the statement in chDB, beyond the same SQL', a('chdb<') - a('chdb>') - (d('chdb<') - d('chdb>'))],
    ['the rows read by the driver, beyond the same SQL', a('driver<') - a('chdb<') - (d('client') - d('chdb<'))],
    ["Cube's way back and its result transform", a('gateway<') - a('driver<')],
    ['our response, to res.end', a('res.end') - a('gateway<')],
    ['the answer written and read by the client', a('client') - a('res.end')],
  ];
  log(
    `\n${requests} uncached "${shape.name}" loads [${values.key} key] one at a time, alternating in blocks of 25 with the same SQL on the engine: ` +
      `API p50 ${a('client').toFixed(2)} ms, SQL p50 ${d('client').toFixed(2)} ms, difference ${(a('client') - d('client')).toFixed(2)} ms.\n`,
  );
  log(
    table(
      ['Part (differences of the stamps’ medians)', 'ms / request'],
      ['l', 'r'],
      [...parts.map(([name, ms]) => [name, ms.toFixed(2)]), ['sum: API p50 − SQL p50', parts.reduce((sum, [, ms]) => sum + ms, 0).toFixed(2)]],
    ),
  );
}

function median(values: number[]): number {
  const sorted = values.filter((v) => v !== undefined).sort((x, y) => x - y);
  return sorted.length === 0 ? NaN : sorted[sorted.length >> 1];
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
