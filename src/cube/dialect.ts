import { ClickHouseQuery } from '@cubejs-backend/schema-compiler/dist/src/adapter/ClickHouseQuery';

/**
 * Cube 0.33's ClickHouse dialect with six of its mistakes corrected, each
 * proven by a case in test/query-language/filters.test.ts or time.test.ts:
 * - a date-only value of `beforeOrOnDate` / `afterDate` is read as that
 *   day's first instant, which leaves the day out of the former and in the
 *   latter; the day's last instant is the bound both need;
 * - `inDateRange`, `notInDateRange` and `onTheDate` with one value run to
 *   the end of today instead of covering that one value's day or instant;
 * - bounds are parsed to whole seconds, so millisecond columns (WebEvents)
 *   miss events inside the bounding second;
 * - contains/startsWith/endsWith fold case for ASCII letters only;
 * - their LIKE patterns escape `%` and `_` for contains only and a backslash
 *   never: startsWith "%" matched every row, and a value ending in a
 *   backslash failed the query;
 * - `order` on a time member is dropped when a range-only entry for that
 *   member (no column of its own) comes before the grouped one.
 */
export class WarehouseClickHouseQuery extends ClickHouseQuery {
  override newFilter(filter: unknown): Filter {
    const Filter = (fixedFilterClass ??= withFixes(super.newFilter(filter).constructor as FilterClass));
    return new Filter(this, filter);
  }

  override getFieldAlias(id: string): string | null {
    const grouped = this.dimensionsForSelect().find(
      (d: { dimension?: string; aliasName(): string | null }) => d.dimension?.toUpperCase() === id.toUpperCase() && d.aliasName() !== null,
    );
    return grouped ? grouped.aliasName() : super.getFieldAlias(id);
  }

  override timeStampCast(value: string): string {
    return `parseDateTime64BestEffort(${value}, 3)`;
  }

  override dateTimeCast(value: string): string {
    return `parseDateTime64BestEffort(${value}, 3)`;
  }
}

type Filter = ReturnType<ClickHouseQuery['newFilter']>;
type FilterClass = new (query: unknown, filter: unknown) => Filter;

/** The operators Cube writes as LIKE patterns. */
const LIKE_OPERATORS = new Set(['contains', 'notContains', 'startsWith', 'notStartsWith', 'endsWith', 'notEndsWith']);

// Cube does not export its ClickHouse filter class; the first filter built
// reveals it, and the fixes extend it.
let fixedFilterClass: FilterClass | undefined;

function withFixes(ClickHouseFilter: FilterClass): FilterClass {
  // Cube's filter typings are loose (`any` parameters); this class keeps to them.
  const Base = ClickHouseFilter as new (query: unknown, filter: unknown) => any;
  return class FixedClickHouseFilter extends Base {
    filterParams(): unknown[] {
      if (!this.isDateOperator()) return super.filterParams();
      const [first, second] = this.values as (string | undefined)[];
      switch (this.camelizeOperator) {
        case 'inDateRange':
        case 'notInDateRange':
        case 'onTheDate':
          return [this.inDbTimeZoneDateFrom(first), this.inDbTimeZoneDateTo(second ?? first)];
        case 'beforeOrOnDate':
        case 'afterDate':
          return [this.inDbTimeZoneDateTo(first)];
        default:
          return super.filterParams();
      }
    }

    isWildcardOperator(): boolean {
      return LIKE_OPERATORS.has(this.camelizeOperator);
    }

    escapeWildcardChars(param: unknown): unknown {
      return typeof param === 'string' ? param.replace(/[\\%_]/g, '\\$&') : param;
    }

    likeIgnoreCase(column: string, not: boolean, param: unknown, type?: string): string {
      return super.likeIgnoreCase(column, not, param, type).replace(/\blower\(/g, 'lowerUTF8(');
    }
  } as unknown as FilterClass;
}
