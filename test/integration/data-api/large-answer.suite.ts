import express from 'express';
import { load, send, type LoadOptions } from '../support/api';
import { withDefaultService } from '../support/default-service';

/**
 * An answer of thousands of rows, which Cube's transform and the JSON
 * serialisation handle a slice at a time (src/cube/engine/request-path.ts,
 * src/json-slices.ts), on both load routes: every row as direct SQL
 * over the same data gives it, the body as JSON.stringify writes it, and
 * the headers Express's res.json gave it (ETag, 304 when unchanged).
 */

const suite = withDefaultService();

/** Every day of the data, by city and app. */
let query: Record<string, unknown>;

type Row = Record<string, string | null>;
const key = (row: Row) => `${row['Downloads.ts.day']}|${row['Downloads.city']}|${row['Downloads.parsed_ua']}`;
const sorted = (rows: Row[]) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

let expected: Row[];
beforeAll(async () => {
  const [range] = await suite.oracle.rows<{ first: string; last: string }>(
    'SELECT toString(toDate(min(ts))) AS first, toString(toDate(max(ts))) AS last FROM analytics.downloads',
  );
  query = {
    measures: ['Downloads.count'],
    dimensions: ['Downloads.city', 'Downloads.parsed_ua'],
    timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [range.first, range.last] }],
    order: [
      ['Downloads.ts', 'asc'],
      ['Downloads.city', 'asc'],
      ['Downloads.parsed_ua', 'asc'],
    ],
    limit: 50000,
  };
  const rows = await suite.oracle.rows<{ city: string; ua: string; day: string; n: string }>(
    "SELECT city, parsed_ua AS ua, formatDateTime(toStartOfDay(ts, 'UTC'), '%Y-%m-%dT%H:%i:%S.000') AS day, toString(count()) AS n FROM analytics.downloads GROUP BY city, ua, day",
  );
  expected = rows.map((r) => ({
    'Downloads.city': r.city,
    'Downloads.parsed_ua': r.ua,
    'Downloads.ts.day': r.day,
    'Downloads.ts': r.day,
    'Downloads.count': r.n,
  }));
});

describe.each<[string, LoadOptions]>([
  ['POST /v1/data/load', { api: 'data' }],
  ['POST /cubejs-api/v1/load', { api: 'cubejs' }],
  ['GET /cubejs-api/v1/load', { api: 'cubejs', get: true }],
])('%s with an answer of thousands of rows', (_route, options) => {
  const ask = (headers: Record<string, string> = {}) => load(suite.service, query, options).set(headers);

  it('answers every row as direct SQL does, its JSON as JSON.stringify writes it, with Express’s ETag', async () => {
    // Several slices of Cube's transform and of the serialisation (1,000 rows each).
    expect(expected.length).toBeGreaterThan(2500);
    const res = await ask()
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    const bytes = res.body as Buffer;
    expect([res.status, res.status === 200 ? '' : bytes.toString('utf8')]).toEqual([200, '']);
    const body = JSON.parse(bytes.toString('utf8'));
    expect(bytes.toString('utf8')).toBe(JSON.stringify(body));
    expect(sorted(body.data)).toEqual(sorted(expected));
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(bytes.length);
    // Express's own res.send of the same text, the ETag res.json gave before.
    const bare = express().post('/', (_req, r) => r.type('application/json').send(bytes.toString('utf8')));
    expect(res.headers.etag).toBe((await send({ app: bare }, 'post', '/', { key: null })).headers.etag);
    expect(res.headers['result-truncated']).toBe('false');

    // As with res.json: a conditional GET of an unchanged answer is told 304; a POST is answered again.
    const again = await ask({ 'if-none-match': res.headers.etag });
    expect(again.status).toBe(options.get ? 304 : 200);
    expect(again.headers.etag).toBe(res.headers.etag);
  });
});
