import { BaseDimension } from '@cubejs-backend/schema-compiler/dist/src/adapter/BaseDimension';
import { BaseTimeDimension } from '@cubejs-backend/schema-compiler/dist/src/adapter/BaseTimeDimension';
import { ClickHouseQuery } from '@cubejs-backend/schema-compiler/dist/src/adapter/ClickHouseQuery';
import { PreAggregations } from '@cubejs-backend/schema-compiler/dist/src/adapter/PreAggregations';
import { UserError } from '@cubejs-backend/schema-compiler/dist/src/compiler/UserError';
import moment from 'moment-timezone';

/**
 * A key of a normalized query (Cube hands the query to the dialect as its
 * options) asking that rows tied on the query's order come as the engine
 * gives them (see orderBy): set by exports only.
 */
export const TIES_AS_READ = 'tiesAsRead';

/** The one time zone rollups are built and used in (the refresh worker's, core.ts). */
export const ROLLUP_TIME_ZONE = 'UTC';

/**
 * Cube 0.33's ClickHouse dialect with ten of its mistakes corrected, each
 * proven by a case in test/integration/query-language/filters.suite.ts,
 * time.suite.ts, order-limit.suite.ts or joins.suite.ts:
 * - a date-only value of `beforeOrOnDate` / `afterDate` is read as that
 *   day's first instant, which leaves the day out of the former and in the
 *   latter; the day's last instant is the bound both need;
 * - `inDateRange`, `notInDateRange` and `onTheDate` with one value run to
 *   the end of today instead of covering that one value's day or instant;
 * - bounds are parsed to whole seconds, so millisecond columns (WebEvents)
 *   miss events inside the bounding second;
 * - equals, in, gt and the other value operators on a time member read
 *   their values in UTC, whatever the query's time zone;
 * - a time member listed without a granularity comes in UTC, whatever the
 *   query's time zone (see LocalTimeDimension);
 * - contains/startsWith/endsWith fold case for ASCII letters only;
 * - their LIKE patterns escape `%` and `_` for contains only and a backslash
 *   never: startsWith "%" matched every row, and a value ending in a
 *   backslash failed the query;
 * - `order` on a time member is dropped when a range-only entry for that
 *   member (no column of its own) comes before the grouped one;
 * - rows that tie on `order` come in no fixed order (see orderBy);
 * - a measure of the `many` side of a join is counted once per row of the
 *   other side, where this project's joins repeat both (see
 *   multipliedJoinRowResult).
 *
 * And one rewrite, exact, so ClickHouse can answer from the tables' hourly
 * aggregate projections (src/warehouse/ddl.ts), which it uses only when
 * every time expression a query filters or groups on is `toStartOfHour(ts)`:
 * see hourAlignedRange and HourTimeDimension.
 *
 * And helpers for model files: `SQL_UTILS.timeCondition(member, column)`
 * (see timeCondition) and `SQL_UTILS.timeLowerBound(member, column)` (see
 * timeLowerBound).
 *
 * And rollups answer queries in ROLLUP_TIME_ZONE only (see
 * RollupsInOneTimeZone).
 *
 * An engine's dialect is a class of its own (warehouseDialect), which gives
 * model files its funnel's steps and its tables' retention too.
 */
/** The funnel's steps after a download: SQL conditions over web_events' columns (src/cube/funnel-steps.ts). */
export interface FunnelSteps {
  visit: string;
  conversion: string;
}

/** What an engine's dialect gives the models, from the service's settings. */
export interface ModelSettings {
  funnelSteps: FunnelSteps;
  /** Per table, the condition its rows meet while they are kept (retainedRowsSql, src/warehouse/retention.ts). */
  retained: Record<string, string>;
}

/**
 * The dialect of an engine with these settings, which model files read as
 * `SQL_UTILS.funnelStep('visit')` and `SQL_UTILS.funnelStep('conversion')`,
 * and `SQL_UTILS.retained('<table>')`: every model reads its tables' rows
 * through the latter, so that none counts a row past its retention.
 */
export function warehouseDialect(settings: ModelSettings): typeof WarehouseClickHouseQuery {
  return class extends WarehouseClickHouseQuery {
    /** What this dialect gives the models, which the SQL Cube caches with compiled models depends on (shared-compile.ts). */
    static readonly modelSettings = settings;

    override parametrizedContextSymbols(): any {
      const symbols = super.parametrizedContextSymbols();
      symbols.sqlUtils.funnelStep ??= (step: string) => {
        if (step === 'visit' || step === 'conversion') return settings.funnelSteps[step];
        throw new UserError(`SQL_UTILS.funnelStep takes 'visit' or 'conversion', not ${JSON.stringify(step)}`);
      };
      symbols.sqlUtils.retained ??= (table: string) => {
        const condition = settings.retained[table];
        if (condition === undefined)
          throw new UserError(`SQL_UTILS.retained takes a table with a retention (${Object.keys(settings.retained).join(', ')}), not ${JSON.stringify(table)}`);
        return condition;
      };
      return symbols;
    }
  };
}

export class WarehouseClickHouseQuery extends ClickHouseQuery {
  override parametrizedContextSymbols(): any {
    const symbols = super.parametrizedContextSymbols();
    symbols.sqlUtils.timeCondition ??= (member: string, column: string) => this.timeCondition(member, column);
    symbols.sqlUtils.timeLowerBound ??= (member: string, column: string) => this.timeLowerBound(member, column);
    return symbols;
  }

  /**
   * The query's conditions on a time member, written on another column:
   * each date range of the member in `timeDimensions`, and each filter on
   * it, top-level or in `and`/`or` groups (a group's other members' filters
   * left out of an `and`); `1 = 1` when there is none. A model whose rows'
   * time is derived from a column of a subquery (WebEventsFromPodcastFunnel:
   * a listener's first download within the range) puts the range there.
   * Cube's FILTER_PARAMS cannot: it reads a group as a filter of its first
   * member and writes every filter in it on the column, and leaves a group
   * that starts with another member out. An `or` with filters on the member
   * and on others gives the member no range of its own: a UserError (400)
   * naming the member, not an answer over some other range.
   */
  timeCondition(member: string, column: string): string {
    const ranges = (this.timeDimensions as any[]).filter((td) => td.dimension === member && td.dateRange).map((td) => td.conditionSql(column) as string);
    const conditions = [...ranges, ...(this.filters as any[]).map((filter) => this.conditionOn(filter, member, column))];
    const kept = conditions.filter((c): c is string => c !== undefined);
    return kept.length > 0 ? kept.map((c) => `(${c})`).join(' AND ') : '1 = 1';
  }

  /** A filter (or group) on `member` written on `column`, what an `and` keeps of one; undefined when it names no filter on the member. */
  private conditionOn(filter: any, member: string, column: string): string | undefined {
    if (filter.operator !== 'and' && filter.operator !== 'or') return filter.dimension === member ? (filter.conditionSql(column) as string) : undefined;
    const parts = (filter.values as any[]).map((f) => this.conditionOn(f, member, column));
    const kept = parts.filter((p): p is string => p !== undefined);
    if (kept.length === 0) return undefined;
    if (filter.operator === 'or' && kept.length < parts.length) {
      throw new UserError(`${member} cannot be in an "or" with filters on other members: the range it gives is the query's conditions on it alone`);
    }
    return kept.map((p) => `(${p})`).join(` ${filter.operator.toUpperCase()} `);
  }

  /**
   * `column >= <earliest time the query keeps>` for a time member, from the
   * query's date ranges on it and its top-level filters that set a lower
   * bound (inDateRange, onTheDate, afterDate, afterOrOnDate); `1 = 1` when
   * there is none. Filters inside and/or groups are left out: an `or` can
   * let earlier times through. A model pushes this into a subquery whose
   * rows can only reach the answer at or after their own time, so that the
   * engine skips the older rows (WebEventsFromPodcastFunnel's web events).
   */
  timeLowerBound(member: string, column: string): string {
    const bounds: unknown[] = [];
    for (const td of this.timeDimensions as any[]) {
      if (td.dimension === member && td.dateRange) bounds.push(td.filterParams()[0]);
    }
    for (const filter of this.filters as any[]) {
      if (filter.dimension === member && LOWER_BOUND_OPERATORS.has(filter.camelizeOperator)) bounds.push(filter.filterParams()[0]);
    }
    const conditions = bounds.filter((b) => typeof b === 'string').map((b) => `${column} >= ${this.timeStampCast(this.paramAllocator!.allocateParam(b))}`);
    return conditions.length > 0 ? conditions.join(' AND ') : '1 = 1';
  }

  /**
   * A local time of the query's time zone as the UTC instant it names. Cube 0.33 read the local time as if it were
   * UTC and took the zone's offset at that instant, which is another instant by the offset itself: in the hours
   * after a clock change (west of UTC; before it, east) a bound came out an hour off, so "from 3 hours ago to now"
   * in New York on the morning of 14 March 2027 started at 10:00Z, not 09:00Z, without an error. moment-timezone
   * reads the local time in the zone: a time the clock skips is moved on by the hour skipped, a time it shows twice
   * is the first of the two.
   */
  override inDbTimeZone(date: string): string {
    if (date.length !== LOCAL_TIME_LENGTH) return super.inDbTimeZone(date);
    return moment.tz(date, 'YYYY-MM-DDTHH:mm:ss.SSS', true, this.timezone).utc().format('YYYY-MM-DD[T]HH:mm:ss.SSS[Z]');
  }

  override newPreAggregations(): PreAggregations {
    return new RollupsInOneTimeZone(this, this.options.historyQueries || [], this.options.cubeLatticeCache);
  }

  override newFilter(filter: unknown): Filter {
    const Filter = (fixedFilterClass ??= withFixes(super.newFilter(filter).constructor as FilterClass));
    return new Filter(this, filter);
  }

  override newDimension(dimension: unknown): BaseDimension {
    return new LocalTimeDimension(this, dimension);
  }

  override newTimeDimension(timeDimension: unknown): BaseTimeDimension {
    return new HourTimeDimension(this, timeDimension);
  }

  override getFieldAlias(id: string): string | null {
    const grouped = this.dimensionsForSelect().find(
      (d: { dimension?: string; aliasName(): string | null }) => d.dimension?.toUpperCase() === id.toUpperCase() && d.aliasName() !== null,
    );
    return grouped ? grouped.aliasName() : super.getFieldAlias(id);
  }

  /**
   * The query's order, then each of its columns the order leaves out,
   * ascending: dimensions and time dimensions as listed (a grouped row's
   * key), and an ungrouped query's measures. Rows that tie on the order
   * otherwise come in the order the engine's threads finish them, which
   * differs from run to run, so pages at growing offsets repeated some rows
   * and skipped others without an error. The echoed `order` stays the
   * client's.
   *
   * An export (TIES_AS_READ) keeps the order asked for alone: it is one
   * file, so no page of it can overlap another, and sorting on every column
   * took 2–2.5 times as long for a million groups and 5–15 times for an
   * account's records (read in the table's order otherwise).
   *
   * When measures of several cubes are joined (joinFullKeyQueryAggregate),
   * every subquery has the dimensions' columns, so they are named by the
   * first's (`q_0.`): ClickHouse refuses an unqualified one as ambiguous.
   */
  override orderBy(): string {
    if (this.options.preAggregationQuery) return super.orderBy();
    const dimensions = new Set(this.dimensionAliasNames());
    const column = (alias: string) => (this.joinedSubqueries && dimensions.has(alias) ? `q_0.${alias}` : alias);
    const terms: string[] = [];
    const ordered = new Set<string>();
    for (const hash of this.order as { id?: string; desc?: boolean }[]) {
      const alias = hash?.id ? this.getFieldAlias(hash.id) : null;
      if (alias === null) continue;
      ordered.add(alias);
      terms.push(`${column(alias)} ${hash.desc ? 'DESC' : 'ASC'}`);
    }
    const keys = [...dimensions, ...(this.ungrouped ? this.measures.map((m: { aliasName(): string }) => m.aliasName()) : [])];
    if (!this.options[TIES_AS_READ]) for (const alias of new Set(keys)) if (!ordered.has(alias)) terms.push(`${column(alias)} ASC`);
    return terms.length > 0 ? ` ORDER BY ${terms.join(', ')}` : '';
  }

  /** Whether orderBy is writing the ORDER BY of subqueries joined on the dimensions' columns. */
  private joinedSubqueries = false;

  override joinFullKeyQueryAggregate(multipliedMeasures: unknown, regularMeasures: unknown, cumulativeMeasures: unknown, toJoin: unknown[]): string {
    this.joinedSubqueries = toJoin.length > 1;
    try {
      return super.joinFullKeyQueryAggregate(multipliedMeasures, regularMeasures, cumulativeMeasures, toJoin);
    } finally {
      this.joinedSubqueries = false;
    }
  }

  /**
   * Whether a cube's rows can repeat in the query's join, so its measures
   * must count each row once (by primary key) per group: for every cube of a
   * query that joins cubes, not only where Cube 0.33 finds it. Cube trusts a
   * join's `relationship`, and a `one_to_many` join leaves its `many` side
   * alone; but this project's joins match on an address (PodcastEvents →
   * WebEvents → WebEventsFromPodcastFunnel, by account and ip4), so both
   * sides repeat: every web event came once per raw request of its address
   * (WebEvents.count by PodcastEvents.country summed to 306,141 of 79,230
   * events), every funnel row once per web event of its address. Cube 0.33
   * cannot say many-to-many; counting by primary key is exact whether or
   * not a cube's rows repeat, so it costs only a distinct count or a keys
   * subquery on the queries that join. An `ungrouped` query lists the
   * join's rows, one per pair, as before.
   */
  override multipliedJoinRowResult(cubeName: string): boolean {
    const join = this.join as { joins: unknown[]; multiplicationFactor: Record<string, boolean> } | undefined;
    if (!join) return false;
    return (join.joins.length > 0 && !this.ungrouped) || Boolean(join.multiplicationFactor[cubeName]);
  }

  /**
   * A measure whose model says `meta: { notAcrossJoins: "<why>" }` refuses a
   * query that joins other cubes to it, with the model's reason: a 400
   * instead of a number the join cannot make right. The funnel's
   * conversionsPercent divides by rows (the first step's, repeated for each
   * later step) that have no user id to join on: by a WebEvents member it
   * answered 2,500 %.
   */
  override buildSqlAndParams(exportAnnotatedSql?: boolean): ReturnType<ClickHouseQuery['buildSqlAndParams']> {
    if ((this.join as { joins: unknown[] } | undefined)?.joins.length) {
      for (const { measure } of this.measures as { measure: string }[]) {
        const why = (this.cubeEvaluator.measureByPath(measure) as { meta?: { notAcrossJoins?: unknown } }).meta?.notAcrossJoins;
        if (typeof why === 'string') throw new UserError(`${measure} cannot be asked with members of other cubes: ${why}`);
      }
    }
    return super.buildSqlAndParams(exportAnnotatedSql);
  }

  // Cube hands time values over in UTC (its "database time zone"), with a `Z` or, in rollup and some range
  // conditions, without one: read without a zone, the engine took them in its own time zone, which is the machine's
  // (TZ, /etc/localtime) under chDB and the server's setting on a ClickHouse server.
  override timeStampCast(value: string): string {
    return `parseDateTime64BestEffort(${value}, 3, 'UTC')`;
  }

  override dateTimeCast(value: string): string {
    return `parseDateTime64BestEffort(${value}, 3, 'UTC')`;
  }
}

/**
 * Cube builds a rollup table per time zone it is asked in, each reading an
 * account's whole history: any key could make the service build hundreds
 * (one per zone name). Queries in other zones read the raw tables instead,
 * with the same answers.
 */
class RollupsInOneTimeZone extends PreAggregations {
  override findPreAggregationForQuery(): any {
    return this.query.timezone === ROLLUP_TIME_ZONE ? super.findPreAggregationForQuery() : undefined;
  }
}

/** Filter operators on a time member whose first value is the earliest time they keep. */
/** A local time as Cube writes one: YYYY-MM-DDTHH:mm:ss.SSS. */
const LOCAL_TIME_LENGTH = 23;
const LOWER_BOUND_OPERATORS = new Set(['inDateRange', 'onTheDate', 'afterDate', 'afterOrOnDate']);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Buckets that start on a local hour; finer ones need the exact time. */
const HOUR_OR_COARSER = new Set(['hour', 'day', 'week', 'month', 'quarter', 'year']);
/** Longest date range whose time-zone offsets are checked day by day; longer ranges keep the raw column. */
const MAX_CHECKED_DAYS = 400;

/**
 * `column >= from AND column <= to` written on `toStartOfHour(column)` when
 * that is the same condition: `from` on the hour and `to` the last
 * millisecond of an hour (every range Cube makes from dates and relative
 * phrases in UTC and whole-hour zones). Then `column >= from` ⟺
 * `toStartOfHour(column) >= from`, and `column <= to` ⟺ `column` before the
 * next hour ⟺ `toStartOfHour(column) <=` to's hour, for columns of second or
 * millisecond precision (all of ours). Anything else: undefined, and the
 * caller keeps Cube's condition on the raw column.
 */
function hourAlignedRange(filter: any, column: string): string | undefined {
  if (filter.dateFieldType?.() === 'string') return undefined;
  const [from, to] = filter.filterParams() as unknown[];
  const fromMs = utcMs(from);
  const toMs = utcMs(to);
  if (fromMs === undefined || toMs === undefined || fromMs % HOUR_MS !== 0 || (toMs + 1) % HOUR_MS !== 0 || toMs < fromMs) return undefined;
  const hour = `toStartOfHour(${column})`;
  const lastHour = new Date(toMs + 1 - HOUR_MS).toISOString();
  return filter.query.timeRangeFilter(hour, filter.allocateTimestampParam(from), filter.allocateTimestampParam(lastHour));
}

/** Milliseconds of a UTC timestamp as Cube formats bounds ('2026-10-24T00:00:00.000Z'); undefined for anything else. */
function utcMs(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Whether the zone is a whole number of hours from UTC all through the
 * range, so that local hour, day, week, … buckets of a time equal those of
 * its UTC hour. Checked once a day through the range: no zone changes its
 * offset twice within a day.
 */
function wholeHourOffsets(timezone: string, fromMs: number, toMs: number): boolean {
  if (timezone === 'UTC' || timezone === 'Etc/UTC') return true;
  if ((toMs - fromMs) / DAY_MS > MAX_CHECKED_DAYS) return false;
  const format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
  for (let t = fromMs; ; t = Math.min(t + DAY_MS, toMs)) {
    const offset = format.formatToParts(t).find((part) => part.type === 'timeZoneName')?.value ?? '';
    // 'GMT' for UTC itself, else 'GMT+05:30'-like.
    if (offset !== 'GMT' && !/^GMT[+-]\d{2}:00$/.test(offset)) return false;
    if (t >= toMs) return true;
  }
}

/**
 * A time dimension whose range condition and buckets use
 * `toStartOfHour(<column>)` wherever the result is the same (see
 * hourAlignedRange and wholeHourOffsets).
 */
class HourTimeDimension extends BaseTimeDimension {
  // Cube's filter typings are loose; these keep to them.
  declare dateRange: unknown;
  declare granularity: string | undefined;

  override inDateRangeWhere(column: string): string {
    return hourAlignedRange(this, column) ?? super.inDateRangeWhere(column);
  }

  override dimensionSql(): string {
    const query = this.query as any;
    const context = query.safeEvaluateSymbolContext();
    const granularity: string | undefined = context.granularityOverride || this.granularity;
    if (context.rollupQuery || context.wrapQuery || context.ungrouped || !granularity || !HOUR_OR_COARSER.has(granularity) || !this.dateRange) {
      return super.dimensionSql();
    }
    const [fromMs, toMs] = (this.filterParams() as unknown[]).map(utcMs);
    if (fromMs === undefined || toMs === undefined || !wholeHourOffsets(query.timezone, fromMs, toMs)) return super.dimensionSql();
    return query.timeGroupedColumn(granularity, query.convertTz(`toStartOfHour(${query.dimensionSql(this)})`));
  }
}

/**
 * A time member listed as a dimension, without a granularity (an ungrouped
 * record's too), as a local time of the query's time zone, to the
 * millisecond, like its buckets: Cube 0.33 wrote it in UTC in the same form,
 * five hours off for a New York reader. Only the member selected is
 * converted, not one it is named in: Cube's own switch for this
 * (convertTzForRawTimeDimension) also converts a time member inside
 * another's SQL, which changed the funnel's row keys and emptied its joins;
 * and Cube's convertTz would cut WebEvents' milliseconds off. A Date column
 * is midnight UTC: read without a zone it was midnight in the engine's own.
 */
class LocalTimeDimension extends BaseDimension {
  override dimensionSql(): string {
    const sql = super.dimensionSql();
    if (this.expression || this.query.cubeEvaluator.isSegment(this.dimension)) return sql;
    const definition = this.definition() as { type?: string; primaryKey?: boolean };
    if (definition.type !== 'time' || definition.primaryKey) return sql;
    return `toTimeZone(toDateTime64(${sql}, 3, 'UTC'), '${this.query.timezone}')`;
  }
}

type Filter = ReturnType<ClickHouseQuery['newFilter']>;
type FilterClass = new (query: unknown, filter: unknown) => Filter;

/**
 * Operators that compare a member with values as written. On a time member
 * Cube 0.33 handed the value to ClickHouse unconverted, which read it in
 * UTC whatever the query's time zone: `gt "2026-11-01T10:00:00"` in
 * America/New_York answered what afterDate answers in UTC.
 */
const VALUE_OPERATORS = new Set(['equals', 'notEquals', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte']);

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
      if (this.comparesTimes()) return (super.filterParams() as string[]).map((value) => this.inDbTimeZoneDateFrom(value));
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

    castParameter(): string {
      return this.comparesTimes() ? this.query.timeStampCast('?') : super.castParameter();
    }

    /** A value operator on a time member: its values are instants local to the query's time zone, as date operators' are. */
    comparesTimes(): boolean {
      return !this.measure && VALUE_OPERATORS.has(this.camelizeOperator) && this.definition().type === 'time';
    }

    /**
     * The warehouse stores a missing text as '' (ClickHouse's String is not
     * Nullable by default, and the import keeps a source's empty field), so on
     * a text member "not set" is NULL or ''. Cube's `IS NULL` alone answered 0
     * for PodcastEvents.referer's two million requests without a referer.
     * `equals [null]` and `notEquals [null]` come here too.
     */
    notSetWhere(column: string): string {
      return this.isText() ? `(${column} IS NULL OR toString(${column}) = '')` : super.notSetWhere(column);
    }

    setWhere(column: string): string {
      return this.isText() ? `(${column} IS NOT NULL AND toString(${column}) != '')` : super.setWhere(column);
    }

    /**
     * null beside other values (`equals ["x", null]`, `notIn [...]`): on a text
     * member it means not set as well, as it does alone. Cube added only
     * `OR col IS NULL` to equals and nothing to notEquals, which then kept
     * the empty texts that `notEquals [null]` drops.
     */
    orIsNullCheck(column: string, not: boolean): string {
      if (!this.isText() || !this.valuesContainNull()) return super.orIsNullCheck(column, not);
      return not ? ` AND ${this.setWhere(column)}` : ` OR ${this.notSetWhere(column)}`;
    }

    isText(): boolean {
      return !this.measure && this.definition().type === 'string';
    }

    isWildcardOperator(): boolean {
      return LIKE_OPERATORS.has(this.camelizeOperator);
    }

    escapeWildcardChars(param: unknown): unknown {
      return typeof param === 'string' ? param.replace(/[\\%_]/g, '\\$&') : param;
    }

    inDateRangeWhere(column: string): string {
      return hourAlignedRange(this, column) ?? super.inDateRangeWhere(column);
    }

    onTheDateWhere(column: string): string {
      return hourAlignedRange(this, column) ?? super.onTheDateWhere(column);
    }

    likeIgnoreCase(column: string, not: boolean, param: unknown, type?: string): string {
      return super.likeIgnoreCase(column, not, param, type).replace(/\blower\(/g, 'lowerUTF8(');
    }
  } as unknown as FilterClass;
}
