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
  return `WITH\n${Object.entries(constants)
    .map(([name, expr]) => `  ${expr} AS ${name}`)
    .join(',\n')}`;
}

/**
 * A statement's ` SETTINGS …` clause. Settings go in the statement, not in
 * the client's clickhouse_settings: chDB's client turns those into SET
 * statements on its one session, which outlive the statement and bind every
 * later one of the process.
 */
export function settingsSql(settings: Record<string, string | number>): string {
  return ` SETTINGS ${Object.entries(settings)
    .map(([name, value]) => `${name} = ${typeof value === 'number' ? value : sqlLiteral(value)}`)
    .join(', ')}`;
}
