/** SQL literals for statements the warehouse set-up builds from data it trusts (lists, constants). */
export type Literal = string | number | boolean | Literal[];

export function sqlLiteral(value: Literal): string {
  if (Array.isArray(value)) return `[${value.map(sqlLiteral).join(', ')}]`;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot inline ${value} in SQL`);
    return String(value);
  }
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function withClause(constants: Record<string, string>): string {
  return `WITH\n${Object.entries(constants).map(([name, expr]) => `  ${expr} AS ${name}`).join(',\n')}`;
}
