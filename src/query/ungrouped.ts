import { refuse } from './rules';
import { eachFilter } from './filters';

/**
 * `ungrouped: true` lists one row per record, which is only a record when the
 * cube's rows have a key (`primary_key` in the model: PodcastEvents'
 * request, WebEvents' event). The key need not be one of the query's
 * dimensions (Cube's own rule, off through `allowUngroupedWithoutPrimaryKey`):
 * PodcastEvents keeps its key hidden, and Cube's refusal named it. Cubes
 * without a key (daily aggregates, rank snapshots, the funnel) are refused
 * here with why, before Cube answers with its own primary-key messages.
 */
export function checkUngrouped(query: Record<string, unknown>, keyedCubes: ReadonlySet<string>): void {
  if (query.ungrouped !== true) return;
  const cubes = new Set<string>();
  const add = (name: unknown) => {
    if (typeof name === 'string' && name.includes('.')) cubes.add(name.split('.')[0]);
  };
  for (const field of ['measures', 'dimensions', 'segments']) {
    const list = query[field];
    if (Array.isArray(list)) list.forEach(add);
  }
  if (Array.isArray(query.timeDimensions)) for (const td of query.timeDimensions) add((td as Record<string, unknown> | null)?.dimension);
  eachFilter(query.filters, (filter) => add(filter.member ?? filter.dimension));
  const unkeyed = [...cubes].filter((cube) => !keyedCubes.has(cube)).sort();
  if (unkeyed.length === 0) return;
  const keyed = [...keyedCubes].sort();
  refuse(
    'ungrouped',
    `"ungrouped": true lists one row per record, which needs cubes whose rows have a key; ${unkeyed.join(', ')} ${unkeyed.length === 1 ? 'has' : 'have'} none ` +
      `(each row is already an aggregate or a snapshot). Leave out "ungrouped" to get grouped rows` +
      (keyed.length > 0 ? `; cubes that list records: ${keyed.join(', ')}.` : '.'),
  );
}
