import { distance } from 'fastest-levenshtein';
import { refuse } from './rules';
import { checkTimeValues } from './dates';
import { GRANULARITY_MS } from './date-range';
import { eachFilter } from './filters';

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

/** What admission reads of a cube as /meta lists it (src/cube/shapes.ts Schema). */
export interface MetaCube {
  measures: readonly { name: string; type: string }[];
  dimensions: readonly { name: string; type: string }[];
  segments: readonly { name: string }[];
}

/**
 * The members of /meta. Cube refuses hidden members (primary keys) too, but
 * only once the query has run, with a message showing their SQL alias; here
 * they are unknown like any other, before any work.
 */
export function modelMembersOf(schemas: readonly MetaCube[]): ModelMembers {
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
const shownName = (name: string) => JSON.stringify(name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name);

type Kind = 'measure' | 'dimension' | 'time dimension' | 'segment';

/** The list of a query each kind of member goes in, as a refusal says it. */
const LIST_OF: Record<Kind, string> = {
  measure: '"measures"',
  dimension: '"dimensions"',
  'time dimension': '"dimensions", or in "timeDimensions" (with a granularity to group by it)',
  segment: '"segments"',
};

function kindOf(name: string, model: ModelMembers): Kind | undefined {
  if (model.measures.has(name)) return 'measure';
  if (model.timeDimensions.has(name)) return 'time dimension';
  if (model.dimensions.has(name)) return 'dimension';
  if (model.segments.has(name)) return 'segment';
  return undefined;
}

const article = (kind: Kind) => `a ${kind}`;

export function checkMembers(query: Record<string, unknown>, model: ModelMembers): void {
  const checks = memberChecks(model);
  checkListedMembers(query, model, checks);
  checkTimeDimensionMembers(query.timeDimensions, model, checks);
  checkOrderedMembers(query, checks);
  checkFilterMembers(query.filters, model, checks);
}

/** The refusals of a name that is no member, and of a member listed where its kind does not go. */
interface MemberChecks {
  notAMember(where: string, name: string): never;
  /** A member of one of `kinds`, or a refusal saying what it is and where it goes. */
  expectKind(where: string, name: string, kinds: readonly Kind[]): void;
}

function memberChecks(model: ModelMembers): MemberChecks {
  const notAMember = (where: string, name: string): never => {
    const why = model.unavailable?.get(name);
    if (why !== undefined)
      refuse('knownMembers', `${where}: ${JSON.stringify(name)} cannot be queried: ${why} (npm run models -- validate lists such members).`);
    const near = closestMembers(name, model).map((close) => `${JSON.stringify(close)} (${article(kindOf(close, model)!)})`);
    const meant = near.length === 0 ? '' : `; did you mean ${near.join(' or ')}?`;
    refuse('knownMembers', `${where}: ${shownName(name)} is not a member of the model${meant} (see GET /v1/data/meta/).`);
  };
  return {
    notAMember,
    expectKind: (where, name, kinds) => {
      const kind = kindOf(name, model);
      if (kind === undefined) return notAMember(where, name);
      if (!kinds.includes(kind))
        refuse('memberKinds', `${where}: ${JSON.stringify(name)} is ${article(kind)}, not ${kinds.map(article).join(' or ')}: list it in ${LIST_OF[kind]}.`);
    },
  };
}

/** `measures`, `dimensions` (the `<Cube>.<time>.<granularity>` shorthand included) and `segments`. */
function checkListedMembers(query: Record<string, unknown>, model: ModelMembers, { notAMember, expectKind }: MemberChecks): void {
  // Values that are not strings are left to Cube's own validation, which names them.
  const each = (field: string, check: (name: string, where: string) => void) => {
    const list = query[field];
    if (!Array.isArray(list)) return;
    list.forEach((name, i) => {
      if (typeof name === 'string') check(name, `${field}[${i}]`);
    });
  };

  each('measures', (name, where) => {
    const [dimension, granularity] = shorthandParts(name) ?? [];
    if (dimension !== undefined && model.timeDimensions.has(dimension))
      refuse(
        'memberKinds',
        `${where}: ${JSON.stringify(name)} is a time dimension by ${granularity}, not a measure: list it in "dimensions", or as {"dimension": ${JSON.stringify(dimension)}, "granularity": ${JSON.stringify(granularity)}} in "timeDimensions".`,
      );
    expectKind(where, name, ['measure']);
  });
  each('dimensions', (name, where) => {
    const parts = shorthandParts(name);
    if (parts === undefined) return expectKind(where, name, ['dimension', 'time dimension']);
    const [dimension, granularity] = parts;
    const kind = kindOf(dimension, model);
    if (kind === undefined) return notAMember(where, dimension);
    if (kind !== 'time dimension')
      refuse(
        'memberKinds',
        `${where}: ${JSON.stringify(name)}: ${JSON.stringify(dimension)} is ${article(kind)}, not a time dimension, so it has no granularity.`,
      );
    checkShorthandGranularity(where, dimension, granularity);
  });
  each('segments', (name, where) => expectKind(where, name, ['segment']));
}

function checkTimeDimensionMembers(timeDimensions: unknown, model: ModelMembers, { notAMember, expectKind }: MemberChecks): void {
  if (!Array.isArray(timeDimensions)) return;
  timeDimensions.forEach((td, i) => {
    const { dimension, granularity } = (typeof td === 'object' && td !== null ? td : {}) as Record<string, unknown>;
    const where = `timeDimensions[${i}]`;
    if (typeof dimension === 'string') {
      const [member, written] = shorthandParts(dimension) ?? [];
      if (member !== undefined && model.timeDimensions.has(member))
        refuse(
          'granularities',
          `${where}.dimension: ${JSON.stringify(dimension)} names a granularity; write it apart: {"dimension": ${JSON.stringify(member)}, "granularity": ${JSON.stringify(written)}}.`,
        );
      if (kindOf(dimension, model) === undefined) notAMember(`${where}.dimension`, dimension);
      if (model.segments.has(dimension)) expectKind(`${where}.dimension`, dimension, ['time dimension']);
    }
    if (granularity !== undefined && granularity !== null) checkGranularity(`${where}.granularity`, granularity);
  });
}

/** Both forms of `order`: members the query returns. */
function checkOrderedMembers(query: Record<string, unknown>, { expectKind }: MemberChecks): void {
  const { order } = query;
  const ordered: [string, string][] = Array.isArray(order)
    ? order.flatMap((pair, i) => (Array.isArray(pair) && typeof pair[0] === 'string' ? [[pair[0], `order[${i}]`] as [string, string]] : []))
    : typeof order === 'object' && order !== null
      ? Object.keys(order).map((name) => [name, 'order'] as [string, string])
      : [];
  for (const [name, where] of ordered) expectKind(where, name, ['measure', 'dimension', 'time dimension']);
  if (ordered.length > 0) checkOrderedAreReturned(query, ordered);
}

/** Filters at any depth: their operators, members, and values by the member's type. */
function checkFilterMembers(filters: unknown, model: ModelMembers, { expectKind }: MemberChecks): void {
  eachFilter(filters, ({ member, dimension, operator, values }, where) => {
    if (typeof operator === 'string' && !KNOWN_OPERATORS.has(operator)) {
      refuse('operators', `${where}.operator: ${shownName(operator)} is not a filter operator; use one of ${FILTER_OPERATORS.join(', ')}.`);
    }
    for (const [key, name] of [
      ['member', member],
      ['dimension', dimension],
    ] as const) {
      if (typeof name !== 'string') continue;
      expectKind(`${where}.${key}`, name, ['measure', 'dimension', 'time dimension']);
      if (typeof operator !== 'string') continue;
      const type = model.types.get(name);
      if (type === 'time') checkTimeValues(where, name, operator, values);
      if (type === 'number') checkNumberValues(where, name, operator, values);
      if (!TEXT_OPERATORS.has(operator)) continue;
      if (type !== 'string') refuse('memberKinds', `${where}: the ${operator} filter compares text; ${name} is of type ${type}.`);
      if (Array.isArray(values) && values.includes(null)) refuse('nullValues', `${where}: the ${operator} filter needs text values, not null.`);
    }
  });
}

/** Operators whose values a number member's column compares with: ClickHouse failed the statement on any that is not a number. */
const NUMBER_OPERATORS = new Set(['equals', 'notEquals', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte']);
/** A number as JSON or ClickHouse writes one: digits, optionally a fraction and an exponent. */
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** The values of a comparison on a number member: numbers, or strings of one; null aside (equals and notEquals read it as `IS NULL`). */
function checkNumberValues(where: string, member: string, operator: string, values: unknown): void {
  if (!NUMBER_OPERATORS.has(operator) || !Array.isArray(values)) return;
  for (const value of values) {
    const number = (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && NUMBER.test(value.trim()) && value.trim() === value);
    if (value !== null && !number)
      refuse('numberValues', `${where}: the ${operator} filter on ${member} compares numbers; ${shownValue(value)} is not one (write 20, "20" or "20.5").`);
  }
}

const shownValue = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_NAME_SHOWN ? `${text.slice(0, MAX_NAME_SHOWN)}…` : text;
};

/** Granularities of a time dimension, finest first. */
export const GRANULARITIES: readonly string[] = Object.keys(GRANULARITY_MS);
/** Cube 0.33's regular expression for the shorthand leaves quarter out: it refused `Downloads.ts.quarter` printing the expression. */
const SHORTHAND_GRANULARITIES = GRANULARITIES.filter((granularity) => granularity !== 'quarter');

function checkGranularity(where: string, granularity: unknown): void {
  if (typeof granularity === 'string' && GRANULARITIES.includes(granularity)) return;
  const near = typeof granularity === 'string' ? closest(granularity, GRANULARITIES) : [];
  const meant = near.length === 0 ? '' : ` Did you mean ${near.map((name) => JSON.stringify(name)).join(' or ')}?`;
  refuse('granularities', `${where}: ${shownValue(granularity)} is not a granularity; use one of ${GRANULARITIES.join(', ')}.${meant}`);
}

function checkShorthandGranularity(where: string, dimension: string, granularity: string): void {
  if (granularity === 'quarter')
    refuse(
      'granularities',
      `${where}: the <Cube>.<time dimension>.<granularity> shorthand takes ${SHORTHAND_GRANULARITIES.join(', ')}; for quarters write {"dimension": ${JSON.stringify(dimension)}, "granularity": "quarter"} in "timeDimensions".`,
    );
  checkGranularity(where, granularity);
}

/** The `[time dimension, granularity]` of Cube's shorthand `<Cube>.<time dimension>.<granularity>`; undefined for any other name. */
function shorthandParts(name: string): [string, string] | undefined {
  const parts = name.split('.');
  return parts.length === 3 ? [`${parts[0]}.${parts[1]}`, parts[2]] : undefined;
}

/**
 * The members closest to an unknown name, for a refusal to offer: those
 * named the same but for a cube left out (`country`: every cube's), else
 * those at the fewest edits (letters added, removed or changed, case
 * aside), when that is at most a third of the name.
 */
function closestMembers(name: string, model: ModelMembers): string[] {
  const all = [...model.measures, ...model.dimensions, ...model.segments];
  if (!name.includes('.')) {
    const same = all.filter((member) => member.slice(member.indexOf('.') + 1).toLowerCase() === name.toLowerCase());
    if (same.length > 0) return same.slice(0, 5);
  }
  return closest(name, all);
}

/** The names of `among` fewest edits from `name` (case aside), up to three, when that is at most a third of its length. */
function closest(name: string, among: readonly string[]): string[] {
  if (name.length > MAX_NAME_SHOWN) return [];
  const lower = name.toLowerCase();
  const scored = among.map((candidate) => [candidate, distance(lower, candidate.toLowerCase())] as const);
  const fewest = Math.min(...scored.map(([, edits]) => edits));
  if (!(fewest <= Math.max(2, Math.floor(name.length / 3)))) return [];
  return scored
    .filter(([, edits]) => edits === fewest)
    .map(([candidate]) => candidate)
    .slice(0, 3);
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
      returned.add(shorthandParts(name)?.[0] ?? name);
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
