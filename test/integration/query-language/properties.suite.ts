/**
 * Properties of the query language that must hold for every query, checked
 * with random queries (fast-check). No oracle: the service is checked against
 * itself (groups against totals, pages against the whole, one cube against
 * its twin). Member values are drawn from the data, read once with direct SQL.
 *
 * Runs are bounded (RUNS each) so the file stays well under a minute; on a
 * failure fast-check prints the seed and the shrunk counterexample.
 */
import fc from 'fast-check';
import { DATABASE } from '../support/constants';
import { CUBES, LINK_COUNTS, type CubeSpec, type Dim } from '../support/catalog';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { load } from '../support/api';

const RUNS = 25;
const db = DATABASE;

let service: TestService;
let oracle: Oracle;
/** Last day of the demo window (UTC). */
let END: string;

type Query = Record<string, unknown>;
type Row = Record<string, unknown>;

/** The rows of a query that must succeed; the query is in the message otherwise. */
async function rows(query: Query): Promise<Row[]> {
  const res = await load(service, query);
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(query)}`);
  return res.body.data;
}
async function single(query: Query, measure: string): Promise<number> {
  const data = await rows(query);
  if (data.length !== 1) throw new Error(`expected one row, got ${data.length} for ${JSON.stringify(query)}`);
  return Number(data[0][measure]);
}

const TABLE_CUBES = CUBES.filter((c) => c.table);
const cubeSpec = (name: string) => CUBES.find((c) => c.cube === name)!;

/** Filter values as the query language carries them: strings, or null. */
type Value = string | null;
/** Per "Cube.dim": candidate values drawn from the data, and the number of groups. */
const candidates = new Map<string, Value[]>();
const groupCounts = new Map<string, number>();
const key = (cube: string, dim: string) => `${cube}.${dim}`;
const toValue = (v: unknown): Value => (v === null ? null : String(v));

/** Seconds (YYYY-MM-DD HH:MM:SS) holding web events with a non-zero millisecond part. */
const fractionalSeconds: { member: string; second: string }[] = [];

beforeAll(async () => {
  // Random shapes include second buckets over a year; the bucket limit has tests of its own
  // (test/integration/limits/amplification.suite.ts), and here every shape must be answered.
  service = await startService({ QUERY_MAX_TIME_BUCKETS: '100000000' });
  oracle = openOracle();
  END = (await oracle.rows<{ d: string }>(`SELECT toString(max(toDate(snapshot_ts))) AS d FROM ${db}.channel_ranks`))[0].d;
  for (const spec of TABLE_CUBES) {
    for (const dim of spec.dims) {
      // The most frequent values and a hash-spread sample of the rest.
      const sample = await oracle.rows<{ v: unknown }>(
        `(SELECT v FROM (SELECT ${dim.sql} AS v, count() AS c FROM ${db}.${spec.table} GROUP BY v) ORDER BY c DESC, v LIMIT 6)
         UNION ALL
         (SELECT v FROM (SELECT ${dim.sql} AS v FROM ${db}.${spec.table} GROUP BY v) ORDER BY cityHash64(toString(v)), v LIMIT 10)`,
      );
      const values = [...new Set(sample.map((r) => toValue(r.v)))];
      if (dim.nullable && !values.includes(null)) values.push(null);
      candidates.set(key(spec.cube, dim.name), values);
      groupCounts.set(key(spec.cube, dim.name), await oracle.value(`SELECT count() FROM (SELECT ${dim.sql} AS v FROM ${db}.${spec.table} GROUP BY v)`));
    }
  }
  for (const [member, column] of [
    ['WebEvents.trackTs', 'track_ts'],
    ['WebEvents.ingestTs', 'ingest_ts'],
  ]) {
    const seconds = await oracle.rows<{ t: string }>(
      `SELECT DISTINCT toString(toDateTime(${column})) AS t FROM ${db}.web_events WHERE toMillisecond(${column}) > 0 ORDER BY t LIMIT 40`,
    );
    fractionalSeconds.push(...seconds.map(({ t }) => ({ member, second: t })));
  }
});
afterAll(async () => {
  await oracle.close();
  await service.close();
});

// ---------------------------------------------------------------------------
// Arbitraries.

const DAY_MS = 86_400_000;
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
/** A day n days before END (negative: after). */
const D = (n: number) => addDays(END, -n);

const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
const TIMEZONES = ['UTC', 'America/New_York', 'Asia/Kolkata'];
const RELATIVE_RANGES = ['today', 'yesterday', 'last 7 days', 'this week', 'last week', 'this month', 'last month', 'this quarter', 'this year'];

/** Two days, from ≤ to, around the demo window (which is END-29 … END). */
const dayPairArb = () => fc.tuple(fc.integer({ min: -1, max: 33 }), fc.integer({ min: -1, max: 33 })).map(([x, y]) => [D(Math.max(x, y)), D(Math.min(x, y))]);
const dateRangeArb = () => fc.oneof(dayPairArb(), fc.constantFrom(...RELATIVE_RANGES));

/** A filter on one of the given dimensions, with values from the data. */
function filterArb(cube: string, dims: Dim[]): fc.Arbitrary<Query> {
  return fc.constantFrom(...dims).chain((dim) => {
    const member = key(cube, dim.name);
    const values = (candidates.get(member) ?? []).filter((v): v is string => v !== null);
    const one = fc.constantFrom(...values);
    const some = fc.subarray(values, { minLength: 1, maxLength: Math.min(3, values.length) });
    const ops: fc.Arbitrary<Query>[] = [
      one.map((v) => ({ member, operator: 'equals', values: [v] })),
      one.map((v) => ({ member, operator: 'notEquals', values: [v] })),
      some.map((vs) => ({ member, operator: 'equals', values: vs })),
      some.map((vs) => ({ member, operator: 'notEquals', values: vs })),
      fc.constantFrom('set', 'notSet').map((operator) => ({ member, operator })),
    ];
    const nonEmpty = values.filter((v) => v.length > 0);
    if (dim.type === 'string' && nonEmpty.length > 0) {
      // The first half of a value: a piece that contains/startsWith find.
      const piece = fc.constantFrom(...nonEmpty).map((v) => v.slice(0, Math.ceil(v.length / 2)));
      ops.push(
        fc.tuple(fc.constantFrom('contains', 'notContains', 'startsWith', 'endsWith'), piece).map(([operator, v]) => ({ member, operator, values: [v] })),
      );
    }
    if (dim.type === 'number') {
      ops.push(fc.tuple(fc.constantFrom('gt', 'gte', 'lt', 'lte'), one).map(([operator, v]) => ({ member, operator, values: [v] })));
    }
    return fc.oneof(...ops);
  });
}

interface Shape {
  dims: string[];
  td?: { granularity?: string; dateRange?: string | string[] };
  filters: Query[];
  timezone: string;
}

/** Dimensions, an optional time dimension and filters over one cube (member names without the cube). */
function shapeArb(spec: CubeSpec, opts: { maxDims: number; maxFilters: number }): fc.Arbitrary<Shape> {
  return fc.record({
    dims: fc.subarray(
      spec.dims.map((d) => d.name),
      { maxLength: opts.maxDims },
    ),
    td: fc.option(
      fc.record({ granularity: fc.option(fc.constantFrom(...GRANULARITIES), { nil: undefined }), dateRange: fc.option(dateRangeArb(), { nil: undefined }) }),
      { nil: undefined },
    ),
    filters: fc.array(filterArb(spec.cube, spec.dims), { maxLength: opts.maxFilters }),
    timezone: fc.constantFrom(...TIMEZONES),
  });
}

/** A Cube query from a shape; `order` covers every grouping member, so the row order is total. */
function toQuery(cube: string, shape: Shape, measures: string[], extra: Query = {}, dirs: boolean[] = []): Query {
  const time = CUBES.find((c) => c.cube === cube)!.times[0];
  const td = shape.td && (shape.td.granularity || shape.td.dateRange) && time ? [{ dimension: `${cube}.${time}`, ...shape.td }] : [];
  const grouping = [...(td.length && shape.td?.granularity ? [`${cube}.${time}`] : []), ...shape.dims.map((d) => `${cube}.${d}`)];
  return {
    measures: measures.map((m) => `${cube}.${m}`),
    dimensions: shape.dims.map((d) => `${cube}.${d}`),
    timeDimensions: td,
    filters: [...shape.filters],
    timezone: shape.timezone,
    order: grouping.map((m, i) => [m, dirs[i] ? 'desc' : 'asc']),
    ...extra,
  };
}

const sum = (data: Row[], measure: string) => data.reduce((acc, r) => acc + Number(r[measure]), 0);

// ---------------------------------------------------------------------------

interface Grouping {
  dimension?: string;
  granularity?: string;
}

describe('properties of random queries', () => {
  it('grouped counts sum to the total, for any cube, count measure and grouping', async () => {
    const arb = fc.constantFrom(...CUBES).chain((spec) =>
      fc.record({
        spec: fc.constant(spec),
        measure: fc.constantFrom(...spec.counts),
        // A dimension, a time shorthand ("ts.day") or a granularity in timeDimensions.
        grouping: (spec.times.length
          ? fc.oneof(
              fc.constantFrom(...spec.dims.map((d) => ({ dimension: d.name }))),
              fc.constantFrom('hour', 'day', 'week', 'month', 'year').map((g) => ({ dimension: `${spec.times[0]}.${g}` })),
              fc.constantFrom('day', 'quarter').map((g) => ({ granularity: g })),
            )
          : fc.constantFrom(...spec.dims.map((d) => ({ dimension: d.name })))) as fc.Arbitrary<Grouping>,
        dateRange: spec.times.length ? fc.option(dayPairArb(), { nil: undefined }) : fc.constant(undefined),
      }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ({ spec, measure, grouping, dateRange }) => {
        const m = `${spec.cube}.${measure}`;
        const time = `${spec.cube}.${spec.times[0]}`;
        const rangeTd = dateRange ? [{ dimension: time, dateRange }] : [];
        const grouped: Query = {
          measures: [m],
          dimensions: grouping.dimension ? [`${spec.cube}.${grouping.dimension}`] : [],
          timeDimensions: grouping.granularity ? [{ dimension: time, granularity: grouping.granularity, ...(dateRange ? { dateRange } : {}) }] : rangeTd,
          total: true,
          // Some groupings (EpisodeRanks by episodeId: 11,217 groups) pass the default limit of 10,000.
          limit: 50_000,
        };
        const res = await load(service, grouped);
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(res.body.data.length); // nothing cut off by the limit
        const total = await single({ measures: [m], timeDimensions: rangeTd }, m);
        expect(sum(res.body.data, m)).toBe(total);
      }),
      { numRuns: RUNS },
    );
  });

  it('equals and notEquals partition the rows; notEquals keeps the NULL rows (equals null is notSet)', async () => {
    // Cube 0.33: equals v → `col = v`; notEquals v → `col <> v OR col IS NULL`;
    // equals null → notSet; notEquals null → set (on a text member '' is not set either).
    const arb = fc.constantFrom(...TABLE_CUBES).chain((spec) =>
      fc.constantFrom(...spec.dims).chain((dim) =>
        fc.record({
          spec: fc.constant(spec),
          dim: fc.constant(dim),
          value: fc.constantFrom<Value>(...(candidates.get(key(spec.cube, dim.name)) ?? []), ...(dim.type === 'string' ? ['no such value'] : [])),
          dateRange: spec.times.length ? fc.option(dayPairArb(), { nil: undefined }) : fc.constant(undefined),
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ({ spec, dim, value, dateRange }) => {
        const measure = `${spec.cube}.${spec.counts[0]}`;
        const member = `${spec.cube}.${dim.name}`;
        const timeDimensions = dateRange ? [{ dimension: `${spec.cube}.${spec.times[0]}`, dateRange }] : [];
        const countWith = (...filters: Query[]) => single({ measures: [measure], timeDimensions, filters }, measure);
        const eq = { member, operator: 'equals', values: [value] };
        const neq = { member, operator: 'notEquals', values: [value] };
        const notSet = { member, operator: 'notSet' };
        const set = { member, operator: 'set' };
        const [total, nEq, nNeq, nNotSet, nSet] = await Promise.all([countWith(), countWith(eq), countWith(neq), countWith(notSet), countWith(set)]);
        expect(nEq + nNeq).toBe(total);
        expect(nSet + nNotSet).toBe(total);
        // On a text member '' is not set either; a column that is not Nullable has no other unset rows.
        const nEmpty = dim.type === 'string' ? await countWith({ member, operator: 'equals', values: [''] }) : 0;
        if (!dim.nullable) expect(nNotSet).toBe(nEmpty);
        if (value === null) {
          expect(nEq).toBe(nNotSet);
          expect(nNeq).toBe(nSet);
        } else {
          // Every unset row is among notEquals unless it is the value itself (''); a NULL row is never among equals.
          const [neqAndUnset, eqAndUnset] = await Promise.all([countWith(neq, notSet), countWith(eq, notSet)]);
          const unsetValue = value === '' && dim.type === 'string';
          expect(neqAndUnset).toBe(unsetValue ? nNotSet - nEmpty : nNotSet);
          expect(eqAndUnset).toBe(unsetValue ? nEmpty : 0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('inDateRange over two adjacent ranges adds up to the union range (day or second splits, any time dimension)', async () => {
    const members = TABLE_CUBES.flatMap((spec) => spec.times.map((time) => ({ spec, member: `${spec.cube}.${time}` })));
    const arb = fc.record({
      target: fc.constantFrom(...members),
      from: fc.integer({ min: 0, max: 33 }),
      len: fc.integer({ min: 1, max: 12 }),
      splitDay: fc.integer({ min: 0, max: 12 }),
      splitSecond: fc.option(fc.integer({ min: 0, max: 86_399 }), { nil: undefined }),
      asFilter: fc.boolean(),
      timezone: fc.constantFrom(...TIMEZONES),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ target, from, len, splitDay, splitSecond, asFilter, timezone }) => {
        const measure = `${target.spec.cube}.${target.spec.counts[0]}`;
        const a = D(from);
        const b = addDays(a, len);
        const s = addDays(a, Math.min(splitDay, len));
        let first: string[];
        let second: string[];
        if (splitSecond === undefined) {
          // [a, s-1] and [s, b], whole days; an empty first part when s = a.
          first = [a, addDays(s, -1)];
          second = [s, b];
        } else {
          // Split inside day s at a whole second t: [a, t - 1 ms] and [t, b].
          const t = new Date(Date.parse(`${s}T00:00:00Z`) + splitSecond * 1000);
          const iso = (d: Date) => d.toISOString().slice(0, 23);
          first = [a, iso(new Date(t.getTime() - 1))];
          second = [iso(t), b];
        }
        const countIn = (range: string[]) =>
          single(
            asFilter
              ? { measures: [measure], timezone, filters: [{ member: target.member, operator: 'inDateRange', values: range }] }
              : { measures: [measure], timezone, timeDimensions: [{ dimension: target.member, dateRange: range }] },
            measure,
          );
        const [x, y, union] = await Promise.all([countIn(first), countIn(second), countIn([a, b])]);
        expect(x + y).toBe(union);
      }),
      { numRuns: RUNS },
    );
  });

  it('limit/offset pages concatenate to the full ordered result, whatever the order leaves tied', async () => {
    const picks = TABLE_CUBES.flatMap((spec) =>
      spec.dims.filter((d) => (groupCounts.get(key(spec.cube, d.name)) ?? 0) <= 60).map((d) => ({ spec, dim: d.name })),
    );
    const arb = fc.constantFrom(...picks).chain(({ spec, dim }) =>
      fc.record({
        spec: fc.constant(spec),
        dim: fc.constant(dim),
        measure: fc.constantFrom(...spec.counts),
        desc: fc.boolean(),
        // Orders that leave rows tied (the measure alone, none: Cube's default) as well as total ones.
        ordered: fc.constantFrom('measure', 'measure, dimension', 'dimension', 'none'),
        byDay: spec.times.length ? fc.boolean() : fc.constant(false),
        pages: fc.integer({ min: 1, max: 8 }),
        jitter: fc.integer({ min: 0, max: 2 }),
        dateRange: spec.times.length ? fc.option(dayPairArb(), { nil: undefined }) : fc.constant(undefined),
      }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ({ spec, dim, measure, desc, ordered, byDay, pages, jitter, dateRange }) => {
        const m = `${spec.cube}.${measure}`;
        const d = `${spec.cube}.${dim}`;
        const order: [string, string][] = [
          ...(ordered.startsWith('measure') ? [[m, desc ? 'asc' : 'desc'] as [string, string]] : []),
          ...(ordered.endsWith('dimension') ? [[d, desc ? 'desc' : 'asc'] as [string, string]] : []),
        ];
        const time = `${spec.cube}.${spec.times[0]}`;
        const timeDimensions = [...(dateRange ? [{ dimension: time, dateRange }] : []), ...(byDay ? [{ dimension: time, granularity: 'day' }] : [])];
        const base: Query = { measures: [m], dimensions: [d], timeDimensions, ...(ordered === 'none' ? {} : { order }), limit: 50_000 };
        const full = await rows(base);
        const size = Math.max(1, Math.ceil(full.length / pages)) + jitter;
        const concatenated: Row[] = [];
        for (let offset = 0; ; offset += size) {
          const res = await load(service, { ...base, limit: size, offset, total: true }).expect(200);
          expect(res.body.total).toBe(full.length);
          expect(res.body.data.length).toBeLessThanOrEqual(size);
          concatenated.push(...res.body.data);
          if (res.body.data.length < size) break;
        }
        expect(concatenated).toEqual(full);
      }),
      { numRuns: RUNS },
    );
  });

  it('LinksDashboard and LinksAdvancedAnalytics answer every query alike (modulo the cube name)', async () => {
    const spec = cubeSpec('LinksAdvancedAnalytics');
    const arb = fc.record({
      shape: shapeArb(spec, { maxDims: 2, maxFilters: 2 }),
      measures: fc.subarray([...LINK_COUNTS, 'conversionRate'], { minLength: 1 }),
      dirs: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      measureFilter: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    });
    const strip = (value: unknown, cube: string) => JSON.parse(JSON.stringify(value).replaceAll(`${cube}.`, 'Links.'));
    await fc.assert(
      fc.asyncProperty(arb, async ({ shape, measures, dirs, measureFilter, limit }) => {
        const ask = (cube: string) => {
          const query = toQuery(cube, shape, measures, limit === undefined ? {} : { limit }, dirs);
          if (measureFilter !== undefined) {
            (query.filters as Query[]).push({ member: `${cube}.linkViewCount`, operator: 'gt', values: [String(measureFilter)] });
          }
          // The filters were drawn for LinksAdvancedAnalytics; the twin gets the same members.
          return load(service, JSON.parse(JSON.stringify(query).replaceAll('LinksAdvancedAnalytics.', `${cube}.`)));
        };
        const [advanced, dashboard] = await Promise.all([ask('LinksAdvancedAnalytics'), ask('LinksDashboard')]);
        expect(dashboard.status).toBe(advanced.status);
        if (advanced.status !== 200) {
          expect(strip(dashboard.body.error, 'LinksDashboard')).toEqual(strip(advanced.body.error, 'LinksAdvancedAnalytics'));
          return;
        }
        expect(strip(dashboard.body.data, 'LinksDashboard')).toEqual(strip(advanced.body.data, 'LinksAdvancedAnalytics'));
        expect(strip(dashboard.body.query, 'LinksDashboard')).toEqual(strip(advanced.body.query, 'LinksAdvancedAnalytics'));
      }),
      { numRuns: RUNS },
    );
  });

  it('ChannelRanks.avgRank × ChannelRanks.count = ChannelRanks.rankSum in every group', async () => {
    const spec = cubeSpec('ChannelRanks');
    const arb = fc.record({ shape: shapeArb(spec, { maxDims: 2, maxFilters: 3 }), dirs: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) });
    await fc.assert(
      fc.asyncProperty(arb, async ({ shape, dirs }) => {
        const data = await rows(toQuery('ChannelRanks', shape, ['avgRank', 'count', 'rankSum'], { limit: 500 }, dirs));
        for (const row of data) {
          const count = Number(row['ChannelRanks.count']);
          const rankSum = Number(row['ChannelRanks.rankSum']);
          if (count === 0) {
            // No chart entries: no average (nullIf in the model), and the sum is 0.
            expect(row['ChannelRanks.avgRank']).toBeNull();
            expect(rankSum).toBe(0);
          } else {
            const product = Number(row['ChannelRanks.avgRank']) * count;
            expect(Math.abs(product - rankSum)).toBeLessThanOrEqual(1e-9 * Math.max(1, rankSum));
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('LinksAdvancedAnalytics.conversionRate = 100 × openLinkViewCount ÷ linkViewCount in every group', async () => {
    const spec = cubeSpec('LinksAdvancedAnalytics');
    const arb = fc.record({ shape: shapeArb(spec, { maxDims: 2, maxFilters: 2 }), dirs: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) });
    await fc.assert(
      fc.asyncProperty(arb, async ({ shape, dirs }) => {
        const data = await rows(toQuery('LinksAdvancedAnalytics', shape, ['conversionRate', 'openLinkViewCount', 'linkViewCount'], {}, dirs));
        for (const row of data) {
          const opens = Number(row['LinksAdvancedAnalytics.openLinkViewCount']);
          const views = Number(row['LinksAdvancedAnalytics.linkViewCount']);
          expect(opens).toBeLessThanOrEqual(views);
          if (views === 0) {
            expect(row['LinksAdvancedAnalytics.conversionRate']).toBeNull();
          } else {
            expect(Math.abs(Number(row['LinksAdvancedAnalytics.conversionRate']) - (100 * opens) / views)).toBeLessThanOrEqual(1e-9);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------

describe('adjacent date ranges on DateTime64(3) members (WebEvents.trackTs, WebEvents.ingestTs)', () => {
  // Cube 0.33's ClickHouse dialect parsed range bounds with
  // parseDateTimeBestEffort (whole seconds): the end "t.999" became "t", so
  // an event at t.250 was in neither [a, t.999] nor [t+1s, b], though in
  // [a, b]. Every split below is at a second that holds such an event.
  it('inDateRange over [a, t.999] and [t+1s, b] adds up to [a, b], splitting inside seconds that hold events', async () => {
    expect(fractionalSeconds.length).toBeGreaterThan(0);
    const arb = fc.record({ target: fc.constantFrom(...fractionalSeconds), before: fc.integer({ min: 0, max: 5 }), after: fc.integer({ min: 0, max: 5 }) });
    await fc.assert(
      fc.asyncProperty(arb, async ({ target, before, after }) => {
        const t = target.second.replace(' ', 'T');
        const a = addDays(t.slice(0, 10), -before);
        const b = addDays(t.slice(0, 10), after);
        const next = new Date(Date.parse(`${t}Z`) + 1000).toISOString().slice(0, 23);
        const countIn = (range: string[]) =>
          single({ measures: ['WebEvents.count'], filters: [{ member: target.member, operator: 'inDateRange', values: range }] }, 'WebEvents.count');
        const [x, y, union, inSecond] = await Promise.all([countIn([a, `${t}.999`]), countIn([next, b]), countIn([a, b]), countIn([`${t}.000`, `${t}.999`])]);
        expect(inSecond).toBeGreaterThan(0);
        expect(x + y).toBe(union);
      }),
      { numRuns: RUNS },
    );
  });
});
