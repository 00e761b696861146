/**
 * POST|GET /v1/data/export against the real service: every cube's export
 * holds what its load answers, row for row and in order, in each format
 * (parquet decoded by the engine itself, from the file the test received);
 * the row and byte caps are never silent; formats are negotiated; a key's
 * export reads its own account only (counted by direct SQL).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ServiceError } from '../../../src/errors';
import { createExporter, type Exporter } from '../../../src/export/exporter';
import { formatNamed } from '../../../src/export/formats';
import type { StreamStatement } from '../../../src/warehouse/connection';
import { API_KEY, DATABASE } from '../support/constants';
import { parseCsv } from '../support/csv';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { exportFile, load, meta } from '../support/api';

type Row = Record<string, unknown>;
type Query = Record<string, unknown>;

const ACCOUNT = 'northwind-audio';
const MAX_ROWS = 10;
const MAX_BYTES = 1024;
/** Below the limits the tests ask for: an export's limit is held to EXPORT_MAX_ROWS, not to QUERY_MAX_LIMIT. */
const LOAD_MAX_LIMIT = 100;
let service: TestService;
let capped: TestService;
let tight: TestService;
let oracle: Oracle;
let server: Server;
beforeAll(async () => {
  service = await startService({ QUERY_DEFAULT_LIMIT: '50000', QUERY_MAX_LIMIT: '50000' }, { accounts: [ACCOUNT] });
  capped = await startService({ EXPORT_MAX_ROWS: String(MAX_ROWS), QUERY_MAX_LIMIT: String(LOAD_MAX_LIMIT), QUERY_DEFAULT_LIMIT: String(LOAD_MAX_LIMIT) });
  tight = await startService({ EXPORT_MAX_BYTES: String(MAX_BYTES) });
  oracle = openOracle();
  server = await new Promise<Server>((resolve) => {
    const s = tight.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  // Three services on a busy machine.
}, 240_000);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await oracle.close();
  await capped.close();
  await tight.close();
  await service.close();
});

interface Exported {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function exportOf(
  query: Query,
  format: string | undefined,
  options: { key?: string; app?: TestService; accept?: string; get?: boolean } = {},
): Promise<Exported> {
  let req = exportFile(options.app ?? service, query, { format, get: options.get, key: options.key });
  if (options.accept) req = req.set('accept', options.accept);
  const res = await req.buffer(true).parse((stream, done) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => done(null, Buffer.concat(chunks)));
  });
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.body as Buffer };
}

async function loaded(query: Query, key = API_KEY): Promise<{ rows: Row[]; truncated: string }> {
  const res = await load(service, query, { key });
  expect(res.status).toBe(200);
  return { rows: res.body.data, truncated: res.headers['result-truncated'] };
}

/** The ndjson rows, and its closing line. */
function parseNdjson(body: Buffer): { rows: Row[]; trailer: Row } {
  const lines = body.toString('utf8').split('\n');
  expect(lines.pop()).toBe('');
  const parsed = lines.map((line) => JSON.parse(line) as Row);
  return { rows: parsed.slice(0, -1), trailer: parsed.at(-1)! };
}

async function parquetRows(body: Buffer): Promise<Row[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'export-test-'));
  const file = path.join(dir, 'answer.parquet');
  writeFileSync(file, body);
  try {
    return await oracle.rows(`SELECT * FROM file('${file}', Parquet) SETTINGS output_format_json_quote_64bit_integers = 0`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One value as comparable across the load answer (numbers as text, times as Cube writes them) and the files. */
function comparable(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'boolean') return String(value);
  const text = String(value);
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return Number(Number(text).toPrecision(12));
  const time = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?$/.exec(text);
  return time ? `${time[1]}T${time[2]}` : text;
}
const asRows = (columns: string[], rows: Row[]) => rows.map((row) => columns.map((c) => comparable(row[c])));

interface Meta {
  name: string;
  measures: { name: string }[];
  dimensions: { name: string; type: string }[];
}

/** A query for each cube: its measures and dimensions, a day granularity when it has a time, every grouping column ordered. */
async function cubeQueries(): Promise<[string, Query][]> {
  const res = await meta(service);
  return (res.body.schemas as Meta[]).map((cube) => {
    const time = cube.dimensions.find((d) => d.type === 'time');
    const dimensions = cube.dimensions
      .filter((d) => d.type !== 'time')
      .slice(0, 3)
      .map((d) => d.name);
    const query: Query = {
      measures: cube.measures.slice(0, 3).map((m) => m.name),
      dimensions,
      ...(time ? { timeDimensions: [{ dimension: time.name, granularity: 'day' }] } : {}),
      order: [...(time ? [[time.name, 'asc']] : []), ...dimensions.map((d) => [d, 'asc'])],
    };
    return [cube.name, query];
  });
}

describe('an export holds what the load answers, in its order', () => {
  let queries: [string, Query][];
  beforeAll(async () => {
    queries = await cubeQueries();
    expect(queries.length).toBeGreaterThanOrEqual(9);
  });

  it.each([undefined, 5])('every cube, limit %s: ndjson, csv and parquet equal the load answer', async (limit) => {
    for (const [cube, base] of queries) {
      const query = limit === undefined ? base : { ...base, limit };
      const load = await loaded(query);
      const ndjson = await exportOf(query, 'ndjson');
      expect([cube, ndjson.status]).toEqual([cube, 200]);
      const { rows, trailer } = parseNdjson(ndjson.body);
      const columns = Object.keys(rows[0] ?? {});
      if (load.rows.length > 0)
        expect([...columns].sort()).toEqual(
          Object.keys(load.rows[0])
            .filter((k) => columns.includes(k))
            .sort(),
        );
      const expected = asRows(columns, load.rows);
      expect([cube, asRows(columns, rows)]).toEqual([cube, expected]);
      expect([cube, trailer]).toEqual([
        cube,
        { truncated: load.truncated === 'true', rows: load.rows.length, ...(load.truncated === 'true' ? { cutBy: 'limit' } : {}) },
      ]);

      const csv = await exportOf(query, 'csv');
      const [header, ...records] = parseCsv(csv.body.toString('utf8'));
      expect([cube, header]).toEqual([cube, columns.length ? columns : header]);
      expect([cube, records.map((r) => r.map(comparable))]).toEqual([cube, expected]);
      expect([cube, csv.headers['result-truncated']]).toEqual([cube, load.truncated]);

      const parquet = await exportOf(query, 'parquet');
      expect([cube, asRows(columns, await parquetRows(parquet.body))]).toEqual([cube, expected]);
      expect([cube, parquet.headers['result-truncated']]).toEqual([cube, load.truncated]);
    }
  });

  it('numbers are bare in csv and JSON numbers in ndjson; the file is an attachment named after its cube', async () => {
    const query = { measures: ['Downloads.count'], dimensions: ['Downloads.country'], order: { 'Downloads.country': 'asc' }, limit: 3 };
    const csv = await exportOf(query, 'csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="downloads-\d{8}-\d{6}\.csv"$/);
    const lines = csv.body.toString('utf8').split('\r\n');
    expect(lines[0]).toBe('"Downloads.country","Downloads.count"');
    expect(lines[1]).toMatch(/^"[^"]+",\d+$/);
    const { rows } = parseNdjson((await exportOf(query, 'ndjson')).body);
    expect(typeof rows[0]['Downloads.count']).toBe('number');
  });
});

describe('caps and limits are never silent', () => {
  const byCountry = {
    measures: ['Downloads.count'],
    dimensions: ['Downloads.country', 'Downloads.city'],
    order: [
      ['Downloads.country', 'asc'],
      ['Downloads.city', 'asc'],
    ],
  };
  const wide = { dimensions: ['Downloads.city', 'Downloads.referer', 'Downloads.parsed_ua'] };
  let matched: number;
  beforeAll(async () => {
    matched = await oracle.value(`SELECT count() FROM (SELECT DISTINCT country, city FROM ${DATABASE}.downloads)`);
    expect(matched).toBeGreaterThan(MAX_ROWS);
  });

  it('EXPORT_MAX_ROWS cuts a query without a limit, and every format says so', async () => {
    const { rows, trailer } = parseNdjson((await exportOf({ ...byCountry, limit: undefined }, 'ndjson', { app: capped })).body);
    expect(rows).toHaveLength(MAX_ROWS);
    expect(trailer).toEqual({ truncated: true, rows: MAX_ROWS, cutBy: 'EXPORT_MAX_ROWS' });
    const csv = await exportOf(byCountry, 'csv', { app: capped });
    expect(csv.headers['result-truncated']).toBe('true');
    expect(parseCsv(csv.body.toString('utf8'))).toHaveLength(MAX_ROWS + 1);
    const parquet = await exportOf(byCountry, 'parquet', { app: capped });
    expect(parquet.headers['result-truncated']).toBe('true');
    expect(await parquetRows(parquet.body)).toHaveLength(MAX_ROWS);
  });

  it("a limit above EXPORT_MAX_ROWS (and above QUERY_MAX_LIMIT, a load's) is cut at the cap; one at exactly the rows matched is complete", async () => {
    expect(parseNdjson((await exportOf({ ...byCountry, limit: LOAD_MAX_LIMIT * 10 }, 'ndjson', { app: capped })).body).trailer).toEqual({
      truncated: true,
      rows: MAX_ROWS,
      cutBy: 'EXPORT_MAX_ROWS',
    });
    const exact = await exportOf({ ...byCountry, limit: matched }, 'ndjson');
    expect(parseNdjson(exact.body).trailer).toEqual({ truncated: false, rows: matched });
    const csv = await exportOf({ ...byCountry, limit: matched }, 'csv');
    expect(csv.headers['result-truncated']).toBe('false');
  });

  it('EXPORT_MAX_BYTES: ndjson stops after the last whole row under the cap and says so', async () => {
    const res = await exportOf(wide, 'ndjson', { app: tight });
    const { rows, trailer } = parseNdjson(res.body);
    expect(trailer).toEqual({ truncated: true, rows: rows.length, cutBy: 'EXPORT_MAX_BYTES' });
    const bytes = res.body.length - (JSON.stringify(trailer).length + 1);
    expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(bytes).toBeGreaterThan(MAX_BYTES - 400);
  });

  it('EXPORT_MAX_BYTES: csv stops after the last whole record and says so in its trailer', async () => {
    const port = (server.address() as AddressInfo).port;
    const body = JSON.stringify({ query: wide });
    const { text, trailers } = await new Promise<{ text: string; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
      const req = http.request(
        { port, host: '127.0.0.1', method: 'POST', path: '/v1/data/export?format=csv', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' } },
        (res) => {
          let received = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (received += chunk));
          res.on('end', () => resolve({ text: received, trailers: res.trailers }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(trailers['result-truncated']).toBe('true');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_BYTES);
    expect(text.endsWith('\r\n')).toBe(true);
    const records = parseCsv(text);
    expect(records.every((record) => record.length === 3)).toBe(true);
  });

  it('EXPORT_MAX_BYTES: a parquet file over the cap is refused before its first byte, one under it is whole', async () => {
    const over = await exportOf(wide, 'parquet', { app: tight });
    expect(over.status).toBe(400);
    const envelope = JSON.parse(over.body.toString('utf8'));
    expect(envelope.code).toBe('result_too_large');
    expect(envelope.error).toMatch(/EXPORT_MAX_BYTES \(1024 bytes\).*limit.*csv or ndjson/);
    const under = await exportOf({ measures: ['Downloads.count'] }, 'parquet', { app: tight });
    expect(under.status).toBe(200);
    expect(Number(under.headers['content-length'])).toBe(under.body.length);
    expect(under.body.length).toBeLessThanOrEqual(MAX_BYTES);
    expect(under.headers['result-truncated']).toBe('false');
    expect(await parquetRows(under.body)).toEqual([{ 'Downloads.count': await oracle.value(`SELECT count() FROM ${DATABASE}.downloads`) }]);
  });
});

/**
 * No ClickHouse server runs here, so the exporter's branch for one
 * (Warehouse.readsLocalFiles false: a statement of its own counts the rows,
 * a second streams the file in the engine's Parquet, with LIMIT, cut at
 * EXPORT_MAX_BYTES) runs on chDB's stream, the warehouse otherwise the
 * service's own. chDB's stream hands out each block of rows as a parquet
 * file of its own, where a server's is one file; so answers here stay
 * within one block (65,536 rows), and a server's stream of a longer file is
 * not tested.
 */
describe('parquet on the path for a ClickHouse server (readsLocalFiles false), run on chDB', () => {
  const parquet = formatNamed('parquet')!;
  const context = { requestId: 'export-server-path', accountId: null, lane: 'export-server-path' };
  const formatsStreamed: string[] = [];
  const serverPath = (caps: { maxRows: number; maxBytes: number }): Exporter =>
    createExporter({
      cube: service.cube,
      warehouse: {
        readsLocalFiles: false,
        stream: (statement: StreamStatement) => {
          formatsStreamed.push(statement.format);
          return service.warehouse.stream(statement);
        },
        client: () => {
          throw new Error('the path for a server writes no file through the engine');
        },
      },
      limits: service.config.query,
      caps,
    });
  const exported = async (exporter: Exporter, query: Query) => {
    const opened = await exporter.open(query, parquet, context, new AbortController().signal);
    try {
      return {
        rows: await oracle.rows(`SELECT * FROM file('${opened.file!.path}', Parquet) SETTINGS output_format_json_quote_64bit_integers = 0`),
        truncated: opened.file!.truncated,
      };
    } finally {
      await opened.file!.dispose();
    }
  };

  it('every cube, limit 5: the file equals the load answer, its cut said; a count, then the file', async () => {
    const exporter = serverPath(service.config.exports);
    for (const [cube, base] of await cubeQueries()) {
      const query = { ...base, limit: 5 };
      const load = await loaded(query);
      formatsStreamed.length = 0;
      const { rows, truncated } = await exported(exporter, query);
      expect([cube, formatsStreamed]).toEqual([cube, ['TabSeparated', 'Parquet']]);
      const columns = Object.keys(rows[0] ?? {});
      expect([cube, asRows(columns, rows)]).toEqual([cube, asRows(columns, load.rows)]);
      expect([cube, String(truncated)]).toEqual([cube, load.truncated]);
    }
  });

  it('EXPORT_MAX_ROWS cuts a query without a limit and says so; EXPORT_MAX_BYTES refuses a file over it', async () => {
    const byCity = {
      measures: ['Downloads.count'],
      dimensions: ['Downloads.country', 'Downloads.city'],
      order: [
        ['Downloads.country', 'asc'],
        ['Downloads.city', 'asc'],
      ],
    };
    const capped = await exported(serverPath({ ...service.config.exports, maxRows: MAX_ROWS }), byCity);
    expect(capped.truncated).toBe(true);
    const expected = await oracle.rows(
      `SELECT country, city, count() AS n FROM ${DATABASE}.downloads GROUP BY country, city ORDER BY country, city LIMIT ${MAX_ROWS}`,
    );
    expect(asRows(['Downloads.country', 'Downloads.city', 'Downloads.count'], capped.rows)).toEqual(asRows(['country', 'city', 'n'], expected));

    const tooLarge = serverPath({ ...service.config.exports, maxBytes: MAX_BYTES });
    const refused = await tooLarge
      .open({ dimensions: ['Downloads.city', 'Downloads.referer', 'Downloads.parsed_ua'], limit: 1000 }, parquet, context, new AbortController().signal)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).code).toBe('result_too_large');
  });
});

describe('the request', () => {
  const query = { measures: ['Downloads.count'], dimensions: ['Downloads.country'] };

  it.each([
    ['text/csv', 'text/csv'],
    ['application/x-ndjson', 'application/x-ndjson'],
    ['application/vnd.apache.parquet', 'application/vnd.apache.parquet'],
    ['*/*', 'text/csv'],
  ])('Accept: %s answers %s', async (accept, type) => {
    const res = await exportOf(query, undefined, { accept });
    expect(res.status).toBe(200);
    expect(res.headers['content-type'].split(';')[0]).toBe(type);
  });

  it.each([
    ['?format=xlsx', 'xlsx', undefined],
    ['Accept: application/xml', undefined, 'application/xml'],
  ])('%s: 406 listing the formats', async (_name, format, accept) => {
    const res = await exportOf(query, format, { accept });
    expect(res.status).toBe(406);
    const envelope = JSON.parse(res.body.toString('utf8'));
    expect(envelope.code).toBe('not_acceptable');
    expect(envelope.error).toMatch(/csv.*ndjson.*parquet/);
  });

  it('GET with ?query= answers like POST', async () => {
    const get = await exportOf({ ...query, order: { 'Downloads.country': 'asc' } }, 'ndjson', { get: true });
    const post = await exportOf({ ...query, order: { 'Downloads.country': 'asc' } }, 'ndjson');
    expect(get.status).toBe(200);
    expect(get.body.toString()).toBe(post.body.toString());
  });

  it('an account key exports its account only', async () => {
    const { rows } = parseNdjson((await exportOf({ measures: ['Downloads.count'] }, 'ndjson', { key: service.accountKeys[ACCOUNT] })).body);
    expect(rows).toEqual([{ 'Downloads.count': await oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE account_id = '${ACCOUNT}'`) }]);
  });

  it.each([
    ['no key', undefined, 401],
    ['an unknown member', { measures: ['Downloads.nope'] }, 400],
    ['an array of queries', [query, query], 400],
    ['a limit of 0', { ...query, limit: 0 }, 400],
  ])('%s: the error envelope', async (_name, sent, status) => {
    const res = await exportFile(service, sent ?? query, { format: 'csv', key: sent === undefined ? null : API_KEY });
    expect(res.status).toBe(status);
    expect(res.body.code).toEqual(expect.any(String));
  });

  it('a compareDateRange is refused by admission, naming the field and what to export instead', async () => {
    const compared = {
      measures: ['Downloads.count'],
      timeDimensions: [
        {
          dimension: 'Downloads.ts',
          compareDateRange: [
            ['2026-11-01', '2026-11-03'],
            ['2026-11-04', '2026-11-06'],
          ],
        },
      ],
    };
    const res = await exportFile(service, compared, { format: 'csv' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_query', error: expect.stringMatching(/timeDimensions\[0\]\.compareDateRange.*"dateRange"/) });
  });
});
