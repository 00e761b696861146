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
