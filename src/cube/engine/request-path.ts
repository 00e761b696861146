import * as cubeValues from '@cubejs-backend/api-gateway/dist/src/helpers/transformValue';

/**
 * Per-request costs of Cube 0.33's gateway that buy nothing in this service,
 * removed where they arise. Each one was found with `node --cpu-prof` on the
 * benchmark and kept because the benchmark shows it (docs/benchmarks.md).
 */

type Meta = readonly unknown[];
interface VisibilityFilter {
  filterVisibleItemsInMeta(context: { signedWithPlaygroundAuthSecret?: boolean }, meta: Meta): unknown;
}

/**
 * Every load filters the compiled meta by visibility, and the filter reads
 * CUBEJS_DEV_MODE through env-var once per member: hundreds of environment
 * reads per request. Its answer depends only on the compiled meta (a new
 * array whenever the models compile) and on playground sign-in, which this
 * service never grants; so the first answer for a compiled meta is kept
 * and reused. Callers only read it (annotation, meta shapes).
 */
export function reuseVisibleMeta(gateway: unknown): void {
  const target = gateway as VisibilityFilter;
  const filter = target.filterVisibleItemsInMeta.bind(target);
  const byMeta = new WeakMap<Meta, unknown>();
  target.filterVisibleItemsInMeta = (context, meta) => {
    if (context.signedWithPlaygroundAuthSecret) return filter(context, meta);
    if (!byMeta.has(meta)) byMeta.set(meta, filter(context, meta));
    return byMeta.get(meta);
  };
}

/**
 * Cube's server core loads its dev-server templates even with the dev
 * server off, and they install source-map-support for the whole process.
 * Cube then formats a stack for every query it runs (its continue-wait
 * timeout builds an Error and reads `.stack`), and each frame is looked up
 * in source maps. Native formatting is restored: stacks name dist/*.js
 * positions, and `node --enable-source-maps` maps them where wanted.
 */
export function restoreNativeStackTraces(): void {
  delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace;
}

/** Rows Cube's result transform handles between two turns of the event loop. */
export const TRANSFORM_SLICE_ROWS = 1000;

type ResultInternal = (
  context: unknown,
  queryType: unknown,
  normalizedQuery: unknown,
  sqlQuery: unknown,
  annotation: unknown,
  response: { data?: unknown[] },
  responseType: unknown,
) => { data: unknown };

/**
 * Cube's gateway turns the driver's rows into the answer's (member names,
 * times formatted by moment) in one synchronous pass: 50,000 rows held the
 * event loop for seconds, and every other request with it. Each row is
 * transformed on its own, and the members come from the first row's columns,
 * which every row of one result shares; so Cube's own transform is run on
 * slices of the rows, one slice per turn of the event loop, and the slices'
 * rows are joined in order. The gateway awaits what this returns.
 */
export function transformResultsInSlices(gateway: unknown, sliceRows: number = TRANSFORM_SLICE_ROWS): void {
  const target = gateway as { getResultInternal: ResultInternal };
  const whole = target.getResultInternal.bind(target);
  target.getResultInternal = ((...args: Parameters<ResultInternal>) => {
    const response = args[5];
    const rows = response.data;
    const times = new Map<string, cubeValues.DBResponsePrimitive>();
    if (!Array.isArray(rows) || rows.length <= sliceRows) return withTimesOnce(times, () => whole(...args));
    return sliced(whole, args, rows, sliceRows, times);
  }) as unknown as ResultInternal;
}

/**
 * Runs Cube's transform with each distinct time value formatted once:
 * Cube parses and formats every time value of every row with moment (most
 * of the transform's time), while an answer by day has one value per day.
 * Formatting a time string is a function of the string alone, so the first
 * result for a string is reused for the rest of the answer. Swapped in for
 * the synchronous call only, so nothing else meets it.
 */
function withTimesOnce<T>(times: Map<string, cubeValues.DBResponsePrimitive>, run: () => T): T {
  // The module object itself (it is an ES module compiled to CommonJS), whose property Cube's transform reads at each call.
  const values = cubeValues as { transformValue: typeof cubeValues.transformValue };
  const format = values.transformValue;
  values.transformValue = (value, type) => {
    if (type !== 'time' || typeof value !== 'string') return format(value, type);
    let text = times.get(value);
    if (text === undefined) {
      text = format(value, type);
      times.set(value, text);
    }
    return text;
  };
  try {
    return run();
  } finally {
    values.transformValue = format;
  }
}

async function sliced(
  whole: ResultInternal,
  args: Parameters<ResultInternal>,
  rows: unknown[],
  sliceRows: number,
  times: Map<string, cubeValues.DBResponsePrimitive>,
): Promise<{ data: unknown }> {
  const [context, queryType, normalizedQuery, sqlQuery, annotation, response, responseType] = args;
  const sliceOf = (from: number) =>
    withTimesOnce(times, () =>
      whole(context, queryType, normalizedQuery, sqlQuery, annotation, { ...response, data: rows.slice(from, from + sliceRows) }, responseType),
    );
  const first = sliceOf(0);
  const parts = [first.data];
  for (let from = sliceRows; from < rows.length; from += sliceRows) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    parts.push(sliceOf(from).data);
  }
  return { ...first, data: joined(parts) };
}

/** The rows of each slice in order: an array of rows, or the compact format's `{ members, dataset }`. */
function joined(parts: unknown[]): unknown {
  if (parts.every(Array.isArray)) return (parts as unknown[][]).flat(1);
  const compact = parts as { members: unknown; dataset: unknown[] }[];
  return { members: compact[0].members, dataset: compact.flatMap((part) => part.dataset) };
}
