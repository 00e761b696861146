import type { DownloadRuleSettings } from '../../../src/warehouse/derive/rules';
import { openOracle, type Oracle } from '../support/service';
import { derive, dropDeriveDatabase, vectors, type Request } from './support';

/**
 * The published vectors in ../shared/conformance (OP3's download and Range
 * cases, IPv6 truncation, the IAB guideline's window and filter examples),
 * read as data and replayed through podcast_events and the warehouse's
 * derivation; the expected answers are the files' own.
 */
let oracle: Oracle;
beforeAll(() => {
  oracle = openOracle();
});
afterAll(async () => {
  await dropDeriveDatabase(oracle);
  await oracle.close();
});

const IAB: DownloadRuleSettings = { rules: 'iab', window: 'calendar' };
const OP3: DownloadRuleSettings = { rules: 'op3', window: 'calendar' };
const T0 = '2023-01-06T00:00:00.000Z';

interface Op3Request {
  seq?: number;
  time?: string;
  method: string;
  url: string;
  userAgent?: string | null;
  referer?: string | null;
  range?: string;
  hashedIpAddress?: string;
}
interface Op3Case {
  id: string;
  requests: Op3Request[];
  expected: { downloads_total: number; rows: { serverUrl: string; hashedIpAddress: string; tags: string }[] };
}
interface Op3Derived {
  id: string;
  requests: Op3Request[];
  expected_downloads?: number;
  expected_downloads_reported_with_bots_excluded?: number;
  expected_tags?: string | string[];
}
const op3 = vectors<{ cases: Op3Case[]; derived_cases: Op3Derived[] }>('op3/download-vectors.json');

/** OP3's test hashes stand in for addresses: each distinct one becomes an address of its own. */
function addresses(requests: Op3Request[]): (r: Op3Request) => string {
  const hashes = [...new Set(requests.map((r) => r.hashedIpAddress ?? ''))];
  return (r) => `192.0.2.${hashes.indexOf(r.hashedIpAddress ?? '') + 1}`;
}

function fromOp3(requests: Op3Request[]): Request[] {
  const ip = addresses(requests);
  return requests.map((r, i) => ({
    time: r.time ?? new Date(Date.parse(T0) + i * 1000).toISOString(),
    ip: ip(r),
    method: r.method,
    url: r.url,
    userAgent: r.userAgent === undefined ? 'test-agent' : (r.userAgent ?? ''),
    referer: r.referer ?? '',
    range: r.range ?? '',
  }));
}

describe('OP3 mode: op3/download-vectors.json', () => {
  for (const c of op3.cases) {
    it(`${c.id}: the expected rows, first-two tag included`, async () => {
      const rows = await derive(oracle, fromOp3(c.requests), OP3);
      const ip = addresses(c.requests);
      const expected = c.expected.rows.map((r) => ({
        url: r.serverUrl,
        ip: `::ffff:${ip({ hashedIpAddress: r.hashedIpAddress } as Op3Request)}`,
        // Tags OP3 takes from its own infrastructure (x-forwarded-for) are not in a log.
        tags: r.tags
          .split(',')
          .filter((t) => t === 'first-two')
          .join(','),
      }));
      const key = (r: { url: string; ip: string }) => `${r.url}|${r.ip}`;
      expect(rows.map((r) => ({ url: r.url, ip: r.ip, tags: r.tags })).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
        expected.sort((a, b) => key(a).localeCompare(key(b))),
      );
      expect(rows).toHaveLength(c.expected.downloads_total);
    });
  }

  // OP3 unwraps other measurement prefixes (op3.dev, podtrac, …) to the destination; an import reads its own prefix only.
  const outOfScope = new Set(['derived/prefix-and-direct-same-destination']);
  for (const c of op3.derived_cases.filter((d) => !outOfScope.has(d.id))) {
    it(`${c.id}`, async () => {
      const same = c.requests.map((r) => ({ ...r, hashedIpAddress: 'same' }));
      const rows = await derive(oracle, fromOp3(same), OP3);
      const expected = c.expected_downloads ?? c.expected_downloads_reported_with_bots_excluded;
      expect(rows).toHaveLength(expected as number);
      if (Array.isArray(c.expected_tags)) expect(rows.map((r) => r.tags)).toEqual(c.expected_tags);
      else if (typeof c.expected_tags === 'string') expect(rows.map((r) => r.tags)).toEqual([c.expected_tags]);
    });
  }
});

interface RangeVector {
  header: string;
  download_decision: 'counts' | 'counts-first-two' | 'ignored';
}
const ranges = vectors<{ vectors: RangeVector[] }>('op3/range-vectors.json').vectors;

describe('Range headers: op3/range-vectors.json', () => {
  const requests: Request[] = ranges.map((v, i) => ({ time: T0, ip: '192.0.2.1', url: `https://a.com/${i}.mp3`, range: v.header }));
  const counted = (rows: { url: string; tags: string }[]) => ranges.map((_, i) => rows.find((r) => r.url === `https://a.com/${i}.mp3`));

  it("OP3 counts, tags or ignores each header as OP3's decision says", async () => {
    const rows = counted(await derive(oracle, requests, OP3));
    expect(rows.map((r, i) => `${ranges[i].header} → ${r === undefined ? 'ignored' : r.tags === 'first-two' ? 'counts-first-two' : 'counts'}`)).toEqual(
      ranges.map((v) => `${v.header} → ${v.download_decision}`),
    );
  });

  it('IAB counts what OP3 counts except the 0-1 probe, which it never counts (5.5.2 Step 1.2 item 6)', async () => {
    const rows = counted(await derive(oracle, requests, IAB));
    expect(rows.map((r, i) => `${ranges[i].header} → ${r === undefined ? 'not counted' : 'counts'}`)).toEqual(
      ranges.map((v) => `${v.header} → ${v.download_decision === 'counts' ? 'counts' : 'not counted'}`),
    );
  });
});

interface Ipv6Vector {
  input: string;
  output: string;
}
const ipv6 = vectors<{ for_download_vectors_upstream: Ipv6Vector[] }>('op3/ipv6-vectors.json');
const iabFilters = vectors<{ vectors: FilterVector[]; ipv6_truncation: { input: string; key_prefix: string }[] }>('iab/filter-vectors.json');

describe('IPv6 listeners: IAB keys on the first 64 bits', () => {
  for (const v of ipv6.for_download_vectors_upstream) {
    const mapped = v.input.startsWith('::ffff:');
    it(`${v.input}: ${mapped ? 'an IPv4-mapped address stays a whole IPv4 listener (OP3 zeroes it; see rules.ts)' : `one listener with ${v.output}`}`, async () => {
      const rows = await derive(
        oracle,
        [v.input, v.output].map((ip) => ({ time: T0, ip, url: 'https://a.com/1.mp3' })),
        IAB,
      );
      expect(rows).toHaveLength(mapped ? 2 : 1);
    });
  }

  it('iab/filter-vectors.json: addresses with the same /64 prefix are one listener, IPv4 is used whole', async () => {
    const rows = await derive(
      oracle,
      iabFilters.ipv6_truncation.map((v) => ({ time: T0, ip: v.input, url: 'https://a.com/1.mp3' })),
      IAB,
    );
    expect(rows).toHaveLength(new Set(iabFilters.ipv6_truncation.map((v) => v.key_prefix)).size);
  });
});

interface FilterVector {
  id: string;
  method: string;
  status?: number;
  range?: string;
  user_agent?: string;
  expected: string;
}

describe('IAB filters: iab/filter-vectors.json', () => {
  for (const v of iabFilters.vectors) {
    // "conditional" cases hinge on the 1-minute threshold, which a prefix service cannot see (5.2): counted when every other filter passes.
    const counts = !v.expected.startsWith('exclude');
    it(`${v.id}: ${counts ? 'counts' : 'excluded'}`, async () => {
      const rows = await derive(
        oracle,
        [{ time: T0, ip: '192.0.2.1', url: 'https://a.com/1.mp3', method: v.method, status: v.status, range: v.range, userAgent: v.user_agent }],
        IAB,
      );
      expect(rows).toHaveLength(counts ? 1 : 0);
    });
  }
});

/**
 * Not a published vector: the prefix's own answer, a GET of one file from an address per status. Hand-picked from
 * IAB 5.5.2 Step 1.3 (200 and 206 count, 304 does not; a prefix logs its redirect) and from OP3's R1 (no status rule
 * because its prefix always redirects): an error the prefix answered with (4xx, 5xx) is no download under either rule.
 */
describe('the status the prefix answered with', () => {
  const statuses = [0, 200, 206, 301, 302, 304, 307, 400, 403, 404, 410, 416, 429, 500, 502, 503, 504];
  const counted: Record<DownloadRuleSettings['rules'], number[]> = {
    iab: [0, 200, 206, 301, 302, 307],
    op3: [0, 200, 206, 301, 302, 304, 307],
  };
  it.each(['iab', 'op3'] as const)('%s: a download for each answer but the errors', async (rules) => {
    const rows = await derive(
      oracle,
      statuses.map((status, i) => ({ time: T0, ip: `192.0.2.${i + 1}`, url: 'https://a.com/1.mp3', status })),
      { rules, window: 'calendar' },
    );
    expect(rows.map((r) => statuses[Number(r.ip.split('.')[3]) - 1]).sort((a, b) => a - b)).toEqual(counted[rules]);
  });
});

interface WindowRequest {
  seq: number;
  time_utc_illustrative: string;
  episode: string;
  ip: string;
  user_agent: string;
  expected: Record<string, number>;
}
interface WindowCase {
  id: string;
  requests: WindowRequest[];
  expected_totals: Record<string, number>;
}
const windows = vectors<{ cases: WindowCase[] }>('iab/window-vectors.json').cases;
const WINDOW_NAMES = { calendar: 'calendar_day', 'first-touch': 'first_touch_rolling_24h', 'last-touch': 'last_touch_rolling_24h' } as const;

describe('IAB windows: iab/window-vectors.json', () => {
  for (const c of windows) {
    for (const [window, name] of Object.entries(WINDOW_NAMES) as [DownloadRuleSettings['window'], string][]) {
      it(`${c.id}, ${window}: the counted requests`, async () => {
        const requests = c.requests.map((r) => ({ time: r.time_utc_illustrative, ip: r.ip, url: `https://a.com/${r.episode}.mp3`, userAgent: r.user_agent }));
        const rows = await derive(oracle, requests, { rules: 'iab', window });
        const key = (r: { time: string; ua: string }) => `${r.time.replace(/\.000Z$/, 'Z')} ${r.ua}`;
        expect(rows.map((r) => key({ time: r.ts, ua: r.raw_ua }))).toEqual(
          c.requests.filter((r) => r.expected[name] === 1).map((r) => key({ time: r.time_utc_illustrative, ua: r.user_agent })),
        );
        expect(rows).toHaveLength(c.expected_totals[name] ?? c.expected_totals.downloads);
      });
    }
  }
});

/**
 * Not a published vector: the project's own rule for which of a key's
 * requests a calendar day's download keeps (downloads.ts, calendarSql): the
 * first, ties on the second going to the smaller referer (by bytes, so a
 * referer sorts before any longer one it begins, NUL bytes included), then
 * the smaller IP. The five requests are one key (one IPv6 /64, agent and
 * URL); taking away each kept request in turn must keep them in that order.
 */
describe('IAB calendar day: the request a download keeps', () => {
  const ordered: Request[] = [
    { time: '2023-01-06T10:00:01Z', ip: '2001:db8::4', url: 'https://a.com/e.mp3', referer: 'a' },
    { time: '2023-01-06T10:00:01Z', ip: '2001:db8::5', url: 'https://a.com/e.mp3', referer: 'a' },
    { time: '2023-01-06T10:00:01Z', ip: '2001:db8::3', url: 'https://a.com/e.mp3', referer: 'a\u0000' },
    { time: '2023-01-06T10:00:01Z', ip: '2001:db8::9', url: 'https://a.com/e.mp3', referer: 'a\u0000b' },
    { time: '2023-01-06T10:00:01Z', ip: '2001:db8::1', url: 'https://a.com/e.mp3', referer: 'ab' },
    { time: '2023-01-06T10:00:05Z', ip: '2001:db8::2', url: 'https://a.com/e.mp3', referer: '' },
  ];
  it('the first request, then the smaller referer, then the smaller IP', async () => {
    const kept: string[] = [];
    for (let i = 0; i < ordered.length; i++) {
      // Listed in reverse, so the pick does not follow the order rows were inserted in.
      const rows = await derive(oracle, ordered.slice(i).reverse(), IAB);
      expect(rows).toHaveLength(1);
      kept.push(`${rows[0].ts} ${rows[0].ip} ${JSON.stringify(rows[0].referer)}`);
    }
    expect(kept).toEqual(ordered.map((r) => `${r.time} ${r.ip} ${JSON.stringify(r.referer)}`));
  });
});
