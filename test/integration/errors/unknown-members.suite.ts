import { expectEnvelope } from '../limits/envelope';
import { withOwnService } from '../support/default-service';
import { loadBody, type Response } from '../support/api';

/**
 * Every member a query names must be a member of the model: names that are
 * properties of every JavaScript object (`__proto__`, `constructor`, …) and
 * `order` keys that name nothing answer 400 invalid_query naming the place,
 * never a 500, never Cube's internals, never a 200 that echoes them back.
 * The bodies are sent as JSON text, because a `__proto__` key in a JavaScript
 * object literal would set the prototype instead of making a key.
 */

const suite = withOwnService();

/** A load of a query written as JSON text. */
const loadText = (query: string, queryType?: 'multi') => loadBody(suite.service, `{"query": ${query}${queryType ? `, "queryType": "${queryType}"` : ''}}`);

function expectUnknown(res: Response, where: RegExp) {
  expectEnvelope(res, 'invalid_query', where);
  expect(res.body.error).not.toMatch(/Cannot read|Function with name|undefined|joins/);
}

const OBJECT_PROPERTIES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

describe.each(OBJECT_PROPERTIES)('Downloads.%s', (property) => {
  const name = `Downloads.${property}`;
  it('as a measure: 400', async () => {
    expectUnknown(await loadText(`{"measures": ["Downloads.count", "${name}"]}`), new RegExp(`measures\\[1\\]: "${name}" is not a member`));
  });
  it('as a dimension: 400', async () => {
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "dimensions": ["${name}"]}`), /dimensions\[0\]/);
  });
  it('as a time dimension: 400', async () => {
    expectUnknown(
      await loadText(`{"measures": ["Downloads.count"], "timeDimensions": [{"dimension": "${name}", "granularity": "day"}]}`),
      /timeDimensions\[0\]\.dimension/,
    );
  });
  it('in a filter, by member or dimension, at any depth: 400', async () => {
    expectUnknown(
      await loadText(`{"measures": ["Downloads.count"], "filters": [{"member": "${name}", "operator": "equals", "values": ["x"]}]}`),
      /filters\[0\]\.member/,
    );
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "filters": [{"dimension": "${name}", "operator": "set"}]}`), /filters\[0\]\.dimension/);
    const nested = `{"or": [{"member": "Downloads.country", "operator": "set"}, {"and": [{"member": "${name}", "operator": "equals", "values": ["x"]}]}]}`;
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "filters": [${nested}]}`), /filters\[0\]\.or\[1\]\.and\[0\]\.member/);
  });
  it('in order, as an object key and as a pair: 400', async () => {
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "order": {"${name}": "asc"}}`), /order/);
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "order": [["${name}", "desc"]]}`), /order\[0\]/);
  });
  it('as a segment: 400', async () => {
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "segments": ["${name}"]}`), /segments\[0\]: .* is not a member of the model/);
  });
  it('as a cube name: 400', async () => {
    expectUnknown(await loadText(`{"measures": ["${property}.count"]}`), /measures\[0\]/);
  });
});

describe('order on a member that does not exist', () => {
  it('400 for an object key, naming it', async () => {
    expectUnknown(await loadText('{"measures": ["Downloads.count"], "order": {"Downloads.nope": "desc"}}'), /order: "Downloads\.nope" is not a member/);
  });

  it('400 for a pair, naming it', async () => {
    expectUnknown(
      await loadText('{"measures": ["Downloads.count"], "order": [["Downloads.count", "desc"], ["Nope.count", "asc"]]}'),
      /order\[1\]: "Nope\.count"/,
    );
  });

  it('400 for a 90 KB name, with a short message', async () => {
    const res = await loadText(`{"measures": ["Downloads.count"], "order": {"Downloads.${'x'.repeat(90_000)}": "asc"}}`);
    expectUnknown(res, /order/);
    expect(res.body.error.length).toBeLessThan(300);
  });

  it('400 in any query of a multi request', async () => {
    const ok = '{"measures": ["Downloads.count"], "timeDimensions": [{"dimension": "Downloads.ts", "granularity": "day", "dateRange": "last 7 days"}]}';
    const bad =
      '{"measures": ["Downloads.count"], "timeDimensions": [{"dimension": "Downloads.ts", "granularity": "day", "dateRange": "last 7 days"}], "order": {"Downloads.nope": "asc"}}';
    expectUnknown(await loadText(`[${ok}, ${bad}]`, 'multi'), /Downloads\.nope/);
  });
});

describe('time dimension shorthand', () => {
  it('<Cube>.<time>.<granularity> still answers, per day as SQL counts', async () => {
    const res = await loadText('{"measures": ["Downloads.count"], "dimensions": ["Downloads.ts.day"], "order": {"Downloads.ts": "asc"}}').expect(200);
    const expected = await suite.oracle.rows<{ day: string; n: string }>(
      "SELECT formatDateTime(toStartOfDay(ts), '%Y-%m-%dT00:00:00.000') AS day, toString(count()) AS n FROM analytics.downloads GROUP BY day ORDER BY day",
    );
    expect(res.body.data.map((row: Record<string, string>) => [row['Downloads.ts.day'], row['Downloads.count']])).toEqual(
      expected.map((row) => [row.day, row.n]),
    );
  });

  it.each(['Downloads.__proto__.day', 'constructor.ts.day'])('%s: 400, not a member', async (name) => {
    expectUnknown(await loadText(`{"measures": ["Downloads.count"], "dimensions": ["${name}"]}`), /dimensions\[0\]: .* is not a member of the model/);
  });

  it('Downloads.country.day: 400, not a time dimension', async () => {
    expectUnknown(await loadText('{"measures": ["Downloads.count"], "dimensions": ["Downloads.country.day"]}'), /dimensions\[0\]: .* not a time dimension/);
  });
});

it('a hidden member (a primary key, not in /meta) is unknown too, without its SQL alias', async () => {
  const res = await loadText('{"dimensions": ["PodcastEvents.requestId"], "limit": 1}');
  expectUnknown(res, /dimensions\[0\]: "PodcastEvents\.requestId" is not a member/);
  expect(res.body.error).not.toMatch(/podcast_events__request_id/);
});
