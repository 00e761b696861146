/**
 * ClickHouse's quoting, in the one place the service writes it: literals,
 * names and settings of statements built from values the service holds
 * (its configuration, its tables, its own files). A value a client sends
 * never reaches SQL through here: Cube binds a query's values itself.
 */
export type Literal = string | number | boolean | Literal[];

/** A ClickHouse literal: a string quoted with its backslashes and quotes escaped, a number, a boolean, an array of them. */
export function sqlLiteral(value: Literal): string {
  if (Array.isArray(value)) return `[${value.map(sqlLiteral).join(', ')}]`;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot inline ${value} in SQL`);
    return String(value);
  }
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A database, table or column name in backquotes. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

export function withClause(constants: Record<string, string>): string {
  return `WITH\n${Object.entries(constants)
    .map(([name, expr]) => `  ${expr} AS ${name}`)
    .join(',\n')}`;
}

/** Settings as a SETTINGS clause lists them: `name = value, …`. */
export function settingsList(settings: Record<string, string | number>): string {
  return Object.entries(settings)
    .map(([name, value]) => `${name} = ${sqlLiteral(value)}`)
    .join(', ');
}

/**
 * A statement's ` SETTINGS …` clause. Settings go in the statement, not in
 * the client's clickhouse_settings: chDB's client turns those into SET
 * statements on its one session, which outlive the statement and bind every
 * later one of the process.
 */
export function settingsSql(settings: Record<string, string | number>): string {
  return ` SETTINGS ${settingsList(settings)}`;
}
