import { refuse } from './rules';
import { checkTimeValues } from './dates';
import { eachFilter } from './filters';
import type { Schema } from '../cube/shapes';

/**
 * Every member reference of a query is checked against the model's members
 * (as /meta lists them) before Cube sees it. Cube 0.33 looks members up in plain objects, so a name
 * like `Downloads.__proto__` or `Downloads.constructor` finds an inherited
 * property and crashes while building SQL (500), and it never looks at
 * `order` keys that name no member of the query: it answers 200 and echoes
 * them back. Sets hold only what the model declares.
 */
export interface ModelMembers {
  measures: ReadonlySet<string>;
  dimensions: ReadonlySet<string>;
  timeDimensions: ReadonlySet<string>;
  segments: ReadonlySet<string>;
  /** Each measure's and dimension's type: string, number, time, boolean, … */
  types: ReadonlyMap<string, string>;
  /** Members the models define but that cannot be queried, with why (models/validate.ts). */
  unavailable?: ReadonlyMap<string, string>;
  /** Cubes that declare a primary key: their rows are records an ungrouped query can list (ungrouped.ts). */
  keyed?: ReadonlySet<string>;
}

/**
 * Filter operators that compare text: on a number or a boolean ClickHouse
 * fails the whole statement, and a null value makes Cube write SQL that does
 * not parse.
 */
const TEXT_OPERATORS = new Set(['contains', 'notContains', 'startsWith', 'notStartsWith', 'endsWith', 'notEndsWith']);

/**
 * The members of /meta. Cube refuses hidden members (primary keys) too, but
 * only once the query has run, with a message showing their SQL alias; here
 * they are unknown like any other, before any work.
 */
export function modelMembersOf(schemas: Schema[]): ModelMembers {
  const dimensions = schemas.flatMap((schema) => schema.dimensions);
  return {
    measures: new Set(schemas.flatMap((schema) => schema.measures.map((measure) => measure.name))),
    dimensions: new Set(dimensions.map((dimension) => dimension.name)),
    timeDimensions: new Set(dimensions.filter((dimension) => dimension.type === 'time').map((dimension) => dimension.name)),
    segments: new Set(schemas.flatMap((schema) => schema.segments.map((segment) => segment.name))),
    types: new Map(schemas.flatMap((schema) => [...schema.measures, ...schema.dimensions].map((member) => [member.name, member.type] as const))),
  };
}

/** Cube 0.33's filter operators (its gateway's query schema); any other answers "does not match any of the allowed types". */
export const FILTER_OPERATORS: readonly string[] = [
  'equals',
  'notEquals',
  'contains',
  'notContains',
  'startsWith',
  'notStartsWith',
  'endsWith',
  'notEndsWith',
  'in',
  'notIn',
  'gt',
  'gte',
  'lt',
  'lte',
  'set',
  'notSet',
  'inDateRange',
  'notInDateRange',
  'onTheDate',
  'beforeDate',
  'beforeOrOnDate',
  'afterDate',
  'afterOrOnDate',
  'measureFilter',
];
const KNOWN_OPERATORS = new Set(FILTER_OPERATORS);

const MAX_NAME_SHOWN = 100;

export function checkMembers(query: Record<string, unknown>, model: ModelMembers): void {
  const isMember = (name: string) => model.measures.has(name) || model.dimensions.has(name);
  const notAMember = (where: string, name: string, what = 'a member of the model'): never => {
    const why = model.unavailable?.get(name);
    if (why !== undefined)
      refuse('knownMembers', `${where}: ${JSON.stringify(name)} cannot be queried: ${why} (npm run models -- validate lists such members).`);
    const shown = name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name;
    refuse('knownMembers', `${where}: ${JSON.stringify(shown)} is not ${what} (see GET /v1/data/meta/).`);
  };
  // Values that are not strings are left to Cube's own validation, which names them.
  const each = (field: string, check: (name: string, where: string) => void) => {
    const list = query[field];
    if (!Array.isArray(list)) return;
    list.forEach((name, i) => {
      if (typeof name === 'string') check(name, `${field}[${i}]`);
    });
  };

  each('measures', (name, where) => isMember(name) || notAMember(where, name));
  each('dimensions', (name, where) => {
    const dimension = shorthandTimeDimension(name);
    if (dimension !== undefined) {
      if (!model.timeDimensions.has(dimension)) notAMember(where, dimension, 'a time dimension of the model');
    } else if (!isMember(name)) {
      notAMember(where, name);
    }
  });
  each('segments', (name, where) => model.segments.has(name) || notAMember(where, name, 'a segment of the model'));

  const { timeDimensions, order, filters } = query;
  if (Array.isArray(timeDimensions)) {
    timeDimensions.forEach((td, i) => {
      const dimension = typeof td === 'object' && td !== null ? (td as Record<string, unknown>).dimension : undefined;
      if (typeof dimension === 'string' && !isMember(dimension)) notAMember(`timeDimensions[${i}].dimension`, dimension);
    });
  }

  const ordered: [string, string][] = Array.isArray(order)
    ? order.flatMap((pair, i) => (Array.isArray(pair) && typeof pair[0] === 'string' ? [[pair[0], `order[${i}]`] as [string, string]] : []))
    : typeof order === 'object' && order !== null
      ? Object.keys(order).map((name) => [name, 'order'] as [string, string])
      : [];
  for (const [name, where] of ordered) if (!isMember(name)) notAMember(where, name);
  if (ordered.length > 0) checkOrderedAreReturned(query, ordered);

  eachFilter(filters, ({ member, dimension, operator, values }, where) => {
    if (typeof operator === 'string' && !KNOWN_OPERATORS.has(operator)) {
      const shown = operator.length > MAX_NAME_SHOWN ? `${operator.slice(0, MAX_NAME_SHOWN)}…` : operator;
      refuse('operators', `${where}.operator: ${JSON.stringify(shown)} is not a filter operator; use one of ${FILTER_OPERATORS.join(', ')}.`);
    }
    for (const [key, name] of [
      ['member', member],
      ['dimension', dimension],
    ] as const) {
      if (typeof name !== 'string') continue;
      if (!isMember(name)) notAMember(`${where}.${key}`, name);
      if (typeof operator !== 'string') continue;
      const type = model.types.get(name);
      if (type === 'time') checkTimeValues(where, name, operator, values);
      if (!TEXT_OPERATORS.has(operator)) continue;
      if (type !== 'string') refuse('memberKinds', `${where}: the ${operator} filter compares text; ${name} is of type ${type}.`);
      if (Array.isArray(values) && values.includes(null)) refuse('nullValues', `${where}: the ${operator} filter needs text values, not null.`);
    }
  });
}

/**
 * Cube 0.33 orders only by columns the answer has: an `order` entry naming a
 * member the query does not return was left out of the SQL without a word,
 * and the answer came back in another order while its echo showed the one
 * asked for.
 */
function checkOrderedAreReturned(query: Record<string, unknown>, ordered: [string, string][]): void {
  const returned = new Set<string>();
  for (const field of ['measures', 'dimensions']) {
    const list = query[field];
    if (!Array.isArray(list)) continue;
    for (const name of list) {
      if (typeof name !== 'string') continue;
      returned.add(shorthandTimeDimension(name) ?? name);
    }
  }
  if (Array.isArray(query.timeDimensions)) {
    for (const td of query.timeDimensions) {
      const { dimension, granularity } = (typeof td === 'object' && td !== null ? td : {}) as Record<string, unknown>;
      if (typeof dimension === 'string' && typeof granularity === 'string') returned.add(dimension);
    }
  }
  for (const [name, where] of ordered) {
    if (returned.has(name)) continue;
    refuse(
      'orderedMembers',
      `${where}: ${JSON.stringify(name)} is not one of the query's measures, dimensions or time dimensions with a granularity, so the answer cannot be ordered by it; add it to the query or leave it out of \`order\`.`,
    );
  }
}

/** The time dimension of Cube's shorthand `<Cube>.<time dimension>.<granularity>`; undefined for any other name. */
function shorthandTimeDimension(name: string): string | undefined {
  const parts = name.split('.');
  return parts.length === 3 ? `${parts[0]}.${parts[1]}` : undefined;
}
