/** The routes that carry Server-Timing. */
export const DATA_ROUTES = [
  '/v1/data/meta',
  '/v1/data/load',
  '/v1/data/export',
  '/cubejs-api/v1/meta',
  '/cubejs-api/v1/load',
  '/cubejs-api/v1/sql',
  '/cubejs-api/v1/dry-run',
];

/** Routes that are their own label in the request metrics; any other path counts as "unmatched" (docs/reference/metrics.md lists them all). */
export const LABELLED_ROUTES = [...DATA_ROUTES, '/healthz', '/readyz', '/v1/openapi.json'];

/**
 * The route pattern a request path counts under, as mounting a middleware
 * on each pattern (`app.use(pattern, …)`) finds it: the pattern itself or
 * anything below it (a trailing slash included), compared with ASCII letters
 * of either case (Express's routing is case-insensitive), on the path as sent
 * (percent-encoding not decoded). Undefined when none matches. One function
 * instead of a mounted middleware per pattern: each is a layer every request
 * walks through, and the router's walk was 8 % of the service's CPU under a
 * repeated cached query.
 */
export function routeLabeller(patterns: readonly string[]): (path: string) => string | undefined {
  const matchers = patterns.map((pattern) => ({ pattern, regexp: new RegExp(`^${escapeRegExp(pattern)}(?:/|$)`, 'i') }));
  return (path) => matchers.find(({ regexp }) => regexp.test(path))?.pattern;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
