import { refuse } from './rules';
import { eachFilter } from './filters';

/**
 * Query shapes that Cube 0.33 accepts from its validator and then crashes on
 * while building SQL (a TypeError answered as 500). They are the client's
 * mistakes, so they are refused here with a 400 that says what is wrong.
 * Everything else is left to Cube's own validation.
 */

const DATE_OPERATORS = new Set(['inDateRange', 'notInDateRange', 'onTheDate', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate']);
const COMPARISON_OPERATORS = new Set(['gt', 'gte', 'lt', 'lte']);

export interface MemberKinds {
  measures: ReadonlySet<string>;
  timeDimensions: ReadonlySet<string>;
}

export function guardQuery(query: Record<string, unknown>, kinds: MemberKinds): void {
  const { timeDimensions, filters } = query;
  if (timeDimensions !== undefined) {
    if (!Array.isArray(timeDimensions)) refuse('timeDimensions', '"timeDimensions" must be an array.');
    for (const [i, td] of (timeDimensions as unknown[]).entries()) {
      if (typeof td !== 'object' || td === null || Array.isArray(td)) refuse('timeDimensions', `timeDimensions[${i}] must be an object.`);
      const { compareDateRange, dimension } = td as Record<string, unknown>;
      // Cube wrote the bucket and range SQL of a text member as of a time and the engine refused it, a 400 that named
      // ClickHouse's toStartOfHour rather than the member.
      if (typeof dimension === 'string' && !kinds.timeDimensions.has(dimension)) {
        refuse('memberKinds', `timeDimensions[${i}].dimension: ${dimension} is not a time dimension${timeDimensionsOf(dimension, kinds)}.`);
      }
      if (compareDateRange !== undefined && (!Array.isArray(compareDateRange) || compareDateRange.length === 0)) {
        refuse('compareDateRange', `timeDimensions[${i}].compareDateRange must be a non-empty array of date ranges.`);
      }
    }
  }
  eachFilter(filters, ({ member, dimension, operator, values, or }, where) => {
    // An `or` of nothing matches no row; Cube 0.33 dropped it and answered every row.
    if (Array.isArray(or) && or.length === 0) refuse('emptyOr', `${where}.or lists no condition; an "or" needs at least one.`);
    const name = member ?? dimension;
    if (typeof name !== 'string' || typeof operator !== 'string') return;
    if (DATE_OPERATORS.has(operator) && !kinds.timeDimensions.has(name)) {
      refuse('memberKinds', `The ${operator} filter needs a time dimension; ${name} is not one.`);
    }
    if (operator === 'measureFilter' && !kinds.measures.has(name)) {
      refuse('memberKinds', `The measureFilter filter needs a measure; ${name} is not one.`);
    }
    if (COMPARISON_OPERATORS.has(operator) && Array.isArray(values) && values.some((v) => v === null || v === undefined)) {
      refuse('nullValues', `The ${operator} filter on ${name} needs a value, not null.`);
    }
    // Cube 0.33 compared with the first value and ignored the others without a word.
    if (COMPARISON_OPERATORS.has(operator) && Array.isArray(values) && values.length > 1) {
      refuse('oneValue', `The ${operator} filter on ${name} compares with one value; got ${values.length}.`);
    }
  });
}

/** `; <Cube>'s are …` naming the cube's time dimensions for a refusal, or `; <Cube> has none`. */
function timeDimensionsOf(member: string, kinds: MemberKinds): string {
  const cube = `${member.split('.')[0]}.`;
  const own = [...kinds.timeDimensions].filter((name) => name.startsWith(cube));
  return own.length === 0 ? `; ${cube.slice(0, -1)} has none` : `; ${cube.slice(0, -1)}'s ${own.length === 1 ? 'is' : 'are'} ${own.join(', ')}`;
}

/**
 * An array of queries is blended on their first time dimension's
 * granularity; Cube checks that the granularities agree but crashes on a
 * query without any time dimension.
 */
export function guardBlending(queries: Record<string, unknown>[]): void {
  for (const [i, query] of queries.entries()) {
    const [first] = Array.isArray(query.timeDimensions) ? query.timeDimensions : [];
    if (typeof first !== 'object' || first === null || typeof (first as Record<string, unknown>).granularity !== 'string') {
      refuse('blending', `query[${i}]: each query of an array is blended by time, so its first time dimension needs a granularity.`);
    }
  }
}
