/**
 * Visits every filter of a query, nested `and`/`or` groups included, with
 * where it stands (`filters[0].or[1]`). Iterative: the HTTP layer caps the
 * number of filters, not their depth. Entries that are not objects are left
 * to Cube's own validation, which names them.
 */
export function eachFilter(filters: unknown, visit: (filter: Record<string, unknown>, where: string) => void): void {
  if (!Array.isArray(filters)) return;
  const pending: { filter: unknown; where: string }[] = filters.map((filter, i) => ({ filter, where: `filters[${i}]` }));
  while (pending.length > 0) {
    const { filter, where } = pending.pop()!;
    if (typeof filter !== 'object' || filter === null) continue;
    const fields = filter as Record<string, unknown>;
    for (const key of ['and', 'or'] as const) {
      const nested = fields[key];
      if (Array.isArray(nested)) nested.forEach((item, i) => pending.push({ filter: item, where: `${where}.${key}[${i}]` }));
    }
    visit(fields, where);
  }
}
