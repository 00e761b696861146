/**
 * An export streams: over a real socket, a client that stops reading does
 * not hold the engine (the engine writes on into the service's spool, other
 * statements run, and the client reads the whole answer when it comes back);
 * a client that goes away while the engine still writes frees the engine
 * within a second (the statement is cancelled, not run to its end); and an
 * open export counts against the key's concurrency limit like a load. The
 * Numbers cube (fixtures) makes 1.1 million rows in the engine.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EXPORT_BLOCK_ROWS, PARQUET_ROW_GROUP_ROWS } from '../../../src/export/formats';
import { SPOOL_MEMORY_BYTES } from '../../../src/http/routes/export';
import { API_KEY } from '../support/constants';
import { parseCsv } from '../support/csv';
import { startService, type TestService } from '../support/service';
import { load } from '../support/api';

const EXPORT_SCHEMA = path.join(__dirname, '..', 'fixtures', 'export-schema');
let service: TestService;
let server: Server;
let port: number;
beforeAll(async () => {
  service = await startService({ RATE_LIMIT_CONCURRENT: '1' }, { schemaPath: EXPORT_SCHEMA });
  server = await new Promise<Server>((resolve) => {
    const s = service.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await service.close();
});

/** A million rows (EXPORT_MAX_ROWS), about 51 MB of ndjson. */
const MILLION = { dimensions: ['Numbers.number', 'Numbers.label'], order: { 'Numbers.number': 'asc' } };

/** A million rows of about 300 bytes each: the engine writes for seconds after its first chunk. */
const PADDED = { dimensions: ['Numbers.number', 'Numbers.padded'], order: { 'Numbers.number': 'asc' } };

/** Starts an export and stops reading it after the first chunk; resolves with the request, the response and what arrived. */
function pausedExport(query: object = MILLION): Promise<{ req: http.ClientRequest; res: http.IncomingMessage; first: string; received: () => number }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const req = http.request(
      { port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=ndjson', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' } },
      (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', (chunk: Buffer) => {
          bytes += chunk.length;
          res.pause();
          res.on('data', (more: Buffer) => (bytes += more.length));
          resolve({ req, res, first: chunk.toString('utf8'), received: () => bytes });
        });
      },
    );
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end(JSON.stringify({ query }));
  });
}

/** A statement of its own through the engine's queue; resolves with how long it waited. */
function probe(): { answered: Promise<number> } {
  const started = performance.now();
  const client = service.warehouse.client();
  return {
    answered: client
      .query({ query: 'SELECT 1', format: 'JSONEachRow' })
      .then((rows) => rows.json())
      .then(() => performance.now() - started),
  };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise.then((value) => ({ value })), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))]);

/** The lines of an ndjson answer read to its end: how many, and the last. */
function linesOf(res: http.IncomingMessage, received = ''): Promise<{ lines: number; last: string }> {
  return new Promise((resolve, reject) => {
    let lines = 0;
    let tail = received;
    let last = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const parts = (tail + chunk).split('\n');
      tail = parts.pop()!;
      lines += parts.length;
      if (parts.length > 0) last = parts.at(-1)!;
    });
    res.on('end', () => resolve({ lines, last }));
    res.on('error', reject);
  });
}

/**
 * Resolves once the key's one concurrency slot is free: the last test's
 * client has its last byte a moment before the service's handler ends.
 */
async function slotFree(): Promise<void> {
  for (let tries = 0; ; tries++) {
    const counted = await load(service, { measures: ['Numbers.count'] });
    if (counted.status === 200) return;
    expect(tries).toBeLessThan(20);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How long the engine takes to write the whole export, read as fast as the client can: the first test measures it. */
let engineMs = 0;

it('read to its end: a million rows and the closing line, the row after them left out and said so', async () => {
  const started = performance.now();
  const res = await new Promise<{ lines: number; last: string }>((resolve, reject) => {
    const req = http.request(
      { port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=ndjson', headers: { 'x-api-key': API_KEY } },
      (response) => resolve(linesOf(response)),
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query: MILLION }));
  });
  engineMs = performance.now() - started;
  expect(res.lines).toBe(1_000_001);
  expect(JSON.parse(res.last)).toEqual({ truncated: true, rows: 1_000_000, cutBy: 'EXPORT_MAX_ROWS' });
});

/** A parquet export of `query` over a socket: the response and its whole body. */
async function parquetExport(query: object): Promise<{ res: http.IncomingMessage; body: Buffer }> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=parquet', headers: { 'x-api-key': API_KEY } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { res, body: Buffer.concat(chunks) };
}

/**
 * Where the rows of a parquet export of `Numbers.number` from 0 up stand in its file, read by the engine two ways: how
 * many are not on their row (number n belongs on row n; `_row_number` is a row's place in the file, whatever order the
 * reader decodes the row groups in), and, from the file's row-group statistics alone, whether each group holds the
 * numbers that follow the group before it.
 */
async function parquetOrder(body: Buffer): Promise<{ rows: number; misplaced: number; groups: { rows: number; min: number; max: number }[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'export-parquet-'));
  const file = path.join(dir, 'export.parquet');
  writeFileSync(file, body);
  try {
    const client = service.warehouse.client();
    const read = await client.query({
      query: `SELECT count() AS rows, countIf(\`Numbers.number\` != _row_number) AS misplaced FROM file('${file}', Parquet) SETTINGS output_format_json_quote_64bit_integers = 0`,
      format: 'JSONEachRow',
    });
    const [{ rows, misplaced }] = await read.json<{ rows: number; misplaced: number }>();
    const stats = await client.query({
      query: `SELECT arrayJoin(arrayMap(g -> (g.num_rows, toFloat64(g.columns[1].statistics.min), toFloat64(g.columns[1].statistics.max)), row_groups)) AS g, g.1 AS rows, g.2 AS min, g.3 AS max FROM file('${file}', ParquetMetadata) SETTINGS output_format_json_quote_64bit_integers = 0`,
      format: 'JSONEachRow',
    });
    const groups = (await stats.json<{ rows: number; min: number; max: number }>()).map(({ rows: n, min, max }) => ({ rows: n, min, max }));
    return { rows, misplaced, groups };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each row group's numbers as they would be with the rows in order: from the rows of the groups before it on. */
const groupsInOrder = (groups: { rows: number }[]) => {
  let first = 0;
  return groups.map(({ rows }) => {
    const group = { rows, min: first, max: first + rows - 1 };
    first += rows;
    return group;
  });
};

it('parquet: a million rows in their order, the file whole and readable, the cut said before the first byte', async () => {
  const { res, body } = await parquetExport(MILLION);
  expect(res.statusCode).toBe(200);
  expect(res.headers['result-truncated']).toBe('true');
  expect(Number(res.headers['content-length'])).toBe(body.length);
  const { rows, misplaced, groups } = await parquetOrder(body);
  expect({ rows, misplaced, groups }).toEqual({ rows: 1_000_000, misplaced: 0, groups: groupsInOrder(groups) });
  // The engine's writer holds a row group whole until it writes it: the groups are bounded, not the whole file in
  // one. It closes a group at the first block that reaches the size, so a group may run a block past it.
  expect(groups.length).toBeGreaterThanOrEqual(1_000_000 / (2 * PARQUET_ROW_GROUP_ROWS));
  expect(Math.max(...groups.map((g) => g.rows))).toBeLessThanOrEqual(2 * PARQUET_ROW_GROUP_ROWS);
});

it('parquet: the rows keep their order on an engine of many threads and small blocks', async () => {
  // The parquet file is written from the rows' Native file, and ClickHouse by default spreads the blocks it reads
  // from a file over max_threads streams (parallelize_output_from_storages) and hands them to the writer in whichever
  // order they come: under load a million-row file held whole blocks of rows out of place, while the Native file it
  // was written from was in order (the writer errs, not the reader). Out of place rows show only when the engine has
  // many streams and blocks to interleave, so the session here is as on a 16-core machine, with blocks of 100 rows
  // (1,000 for the writer): without the export's setting against it, thousands of rows come out of place every time.
  await slotFree();
  const client = service.warehouse.client();
  await client.command({ query: 'SET max_threads = 16, max_block_size = 100' });
  try {
    const { res, body } = await parquetExport({ ...MILLION, limit: 100_000 });
    expect(res.statusCode).toBe(200);
    const { rows, misplaced, groups } = await parquetOrder(body);
    expect({ rows, misplaced, groups }).toEqual({ rows: 100_000, misplaced: 0, groups: groupsInOrder(groups) });
  } finally {
    await client.command({ query: 'SET max_threads = DEFAULT, max_block_size = DEFAULT' });
  }
});

it('parquet: exactly a million rows, over many of the engine’s blocks, is whole and says so', async () => {
  const exact = { ...MILLION, filters: [{ member: 'Numbers.number', operator: 'lt', values: ['1000000'] }] };
  const { res } = await parquetExport(exact);
  expect(res.statusCode).toBe(200);
  expect(res.headers['result-truncated']).toBe('false');
});

/** The chunks the engine's streams hand out while `work` runs, as they pass to the export. */
async function engineChunks(work: () => Promise<void>): Promise<Uint8Array[]> {
  const seen: Uint8Array[] = [];
  const { warehouse } = service;
  const stream = warehouse.stream;
  warehouse.stream = async (statement) => {
    const chunks = await stream.call(warehouse, statement);
    return (async function* () {
      for await (const chunk of chunks) {
        seen.push(chunk);
        yield chunk;
      }
    })();
  };
  try {
    await work();
  } finally {
    warehouse.stream = stream;
  }
  return seen;
}

it("the engine's chunks fit the spool's window: 300-byte rows of ndjson come in blocks of EXPORT_BLOCK_ROWS at most", async () => {
  const query = { ...PADDED, limit: 100_000 };
  await slotFree();
  const ndjson = await engineChunks(async () => {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=ndjson', headers: { 'x-api-key': API_KEY } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify({ query }));
    });
    expect((await linesOf(res)).lines).toBe(100_001);
  });
  const rowsOf = (chunk: Uint8Array) => Buffer.from(chunk).toString('utf8').split('\n').length - 1;
  // One row more than the limit says whether rows were left out.
  expect(ndjson.map(rowsOf).reduce((a, b) => a + b, 0)).toBe(100_001);
  expect(Math.max(...ndjson.map(rowsOf))).toBeLessThanOrEqual(EXPORT_BLOCK_ROWS);
  expect(Math.max(...ndjson.map((c) => c.length))).toBeLessThanOrEqual(SPOOL_MEMORY_BYTES);
});

it('a client that stops reading does not hold the engine: other statements run, and the answer is whole when it reads on', async () => {
  await slotFree();
  const { res, first, received } = await pausedExport();
  // The engine writes the rest into the spool while the client reads nothing more; then it is free.
  expect(await within(probe().answered, engineMs + 5000)).not.toBe('late');
  const paused = received();
  expect(paused).toBeLessThan(16 * 1024 * 1024);
  const rest = linesOf(res, first);
  res.resume();
  const { lines, last } = await rest;
  expect(lines).toBe(1_000_001);
  expect(JSON.parse(last)).toEqual({ truncated: true, rows: 1_000_000, cutBy: 'EXPORT_MAX_ROWS' });
});

it('a client that leaves while the engine writes frees the engine within a second', async () => {
  await slotFree();
  // How long the engine, read as fast as a client can, writes after its first chunk: leaving must free it sooner
  // than that by far, whatever the machine's speed.
  const whole = await pausedExport(PADDED);
  const resumed = performance.now();
  whole.res.resume();
  await linesOf(whole.res, whole.first);
  const writingMs = performance.now() - resumed;
  await slotFree();
  const { req } = await pausedExport(PADDED);
  const left = performance.now();
  req.destroy();
  await probe().answered;
  expect(performance.now() - left).toBeLessThan(Math.min(1000, writingMs / 2));
});

it("an open export counts against the key's concurrency limit like a load", async () => {
  await slotFree();
  const { req } = await pausedExport();
  const refused = await load(service, { measures: ['Numbers.count'] });
  expect(refused.status).toBe(429);
  req.destroy();
  // The slot is free again once the export has stopped.
  for (let tries = 0; ; tries++) {
    const again = await load(service, { measures: ['Numbers.count'] });
    if (again.status === 200) break;
    expect(tries).toBeLessThan(20);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

/** A whole export over a real socket: its body, and csv's trailers. */
function exportOver(query: object, format: 'csv' | 'ndjson'): Promise<{ body: string; trailers: NodeJS.Dict<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: `/v1/data/export?format=${format}`,
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      },
      (res) => {
        expect(res.statusCode).toBe(200);
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ body, trailers: res.trailers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
}

describe("a cap at the edge of the engine's blocks, whose rows chDB counts", () => {
  // Number n on row n, and its multiline value as the fixture's SQL spells it.
  const MULTILINE = { dimensions: ['Numbers.number', 'Numbers.multiline'], order: { 'Numbers.number': 'asc' } };
  const multiline = (n: number) => `line ${n}\n"${n}", end`;
  const expectCsvRows = (body: string, rows: number) => {
    const [header, ...records] = parseCsv(body);
    expect(header).toEqual(['Numbers.number', 'Numbers.multiline']);
    expect(records).toHaveLength(rows);
    const misplaced = records.findIndex((record, n) => record[0] !== String(n) || record[1] !== multiline(n));
    expect(misplaced).toBe(-1);
  };
  const expectNdjsonRows = (body: string, rows: number) => {
    const lines = body.split('\n');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toHaveLength(rows + 1);
    const misplaced = parsed.slice(0, -1).findIndex((row, n) => row['Numbers.number'] !== n || row['Numbers.multiline'] !== multiline(n));
    expect(misplaced).toBe(-1);
    return parsed.at(-1);
  };

  /** Both formats cut at `limit`: exactly its rows, in order, and the cut said. */
  const expectCutAt = async (limit: number) => {
    await slotFree();
    const csv = await exportOver({ ...MULTILINE, limit }, 'csv');
    expectCsvRows(csv.body, limit);
    expect(csv.trailers['result-truncated']).toBe('true');
    await slotFree();
    const ndjson = await exportOver({ ...MULTILINE, limit }, 'ndjson');
    expect(expectNdjsonRows(ndjson.body, limit)).toEqual({ truncated: true, rows: limit, cutBy: 'limit' });
  };

  it.each([EXPORT_BLOCK_ROWS - 1, EXPORT_BLOCK_ROWS, EXPORT_BLOCK_ROWS + 1, 2 * EXPORT_BLOCK_ROWS])(
    'a limit of %i rows: csv (quoted line breaks) and ndjson hold exactly them, in order, and say rows were left out',
    (limit) => expectCutAt(limit),
  );

  it("without the engine's counts (a ClickHouse server's stream: one header, bytes cut anywhere) every chunk is scanned", async () => {
    const { warehouse } = service;
    const stream = warehouse.stream;
    // chDB's chunks as a server's HTTP stream would hand them out: no row counts, csv's header once, cut every 997
    // bytes, so inside rows and inside quoted line breaks.
    warehouse.stream = async ({ onRows: _counts, ...statement }) => {
      const chunks = await stream.call(warehouse, statement);
      const csv = statement.format === 'CSVWithNames';
      return (async function* () {
        let first = true;
        for await (const chunk of chunks) {
          const bytes = csv && !first ? chunk.subarray(chunk.indexOf(0x0a) + 1) : chunk;
          first = false;
          for (let at = 0; at < bytes.length; at += 997) yield bytes.subarray(at, at + 997);
        }
      })();
    };
    try {
      await expectCutAt(EXPORT_BLOCK_ROWS + 1);
    } finally {
      warehouse.stream = stream;
    }
  });

  it('exactly two blocks of rows and no limit: every row, the header once, nothing said left out', async () => {
    const query = { ...MULTILINE, filters: [{ member: 'Numbers.number', operator: 'lt', values: [String(2 * EXPORT_BLOCK_ROWS)] }] };
    await slotFree();
    const csv = await exportOver(query, 'csv');
    expectCsvRows(csv.body, 2 * EXPORT_BLOCK_ROWS);
    expect(csv.trailers['result-truncated']).toBe('false');
    await slotFree();
    const ndjson = await exportOver(query, 'ndjson');
    expect(expectNdjsonRows(ndjson.body, 2 * EXPORT_BLOCK_ROWS)).toEqual({ truncated: false, rows: 2 * EXPORT_BLOCK_ROWS });
  });
});
