/** The demo generator's seeded randomness in SQL, and the weighted lookup tables its picks read. */
import { sqlLiteral } from '../sql';

/** Weighted picks read a lookup table of this many slots instead of scanning cumulative weights per row. */
export const LUT_SIZE = 16_384;
export const SMALL_LUT_SIZE = 1_024;

export function cumulative(weights: number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const lastPositive = weights.reduce((last, w, i) => (w > 0 ? i : last), -1);
  let running = 0;
  // Exactly 1 from the last positive weight on, so rounding never hands a draw to a zero-weight entry.
  return weights.map((w, i) => (i >= lastPositive ? 1 : (running += w) / total));
}

/** slot → 1-based index, each index owning a share of slots proportional to its weight. */
export function lookupTable(weights: number[], size = LUT_SIZE): string {
  return `arrayMap(i -> arrayFirstIndex(c -> c > (i + 0.5) / ${size}, ${sqlLiteral(cumulative(weights))}), range(${size}))`;
}

/** One lookup table per group, laid end to end, because indexing nested constant arrays per row is slow. */
export function groupedLookupTables(groups: number[][]): string {
  return `arrayFlatten([${groups.map((w) => lookupTable(w, SMALL_LUT_SIZE)).join(', ')}])`;
}

export interface SqlRandom {
  /** UInt64 hash of the seed, a tag naming the decision, and the row keys. */
  hash(tag: string, ...keys: string[]): string;
  /** Uniform in (0, 1). */
  unit(tag: string, ...keys: string[]): string;
  /** Standard normal (Box–Muller). */
  normal(tag: string, ...keys: string[]): string;
  /** Weighted 1-based index through a lookupTable constant. */
  pick(table: string, tag: string, ...keys: string[]): string;
  /** Weighted 1-based index within group `group` of a groupedLookupTables constant. */
  pickIn(table: string, group: string, tag: string, ...keys: string[]): string;
}

export function sqlRandom(seed: number): SqlRandom {
  const hash = (tag: string, ...keys: string[]) => `cityHash64(${seed}, ${sqlLiteral(tag)}${keys.map((k) => `, ${k}`).join('')})`;
  const unit = (tag: string, ...keys: string[]) => `((${hash(tag, ...keys)} % 1000000 + 0.5) / 1000000)`;
  return {
    hash,
    unit,
    normal: (tag, ...keys) => `(sqrt(-2 * ln(${unit(`${tag}/r`, ...keys)})) * cos(2 * pi() * ${unit(`${tag}/a`, ...keys)}))`,
    pick: (table, tag, ...keys) => `${table}[1 + ${hash(tag, ...keys)} % ${LUT_SIZE}]`,
    pickIn: (table, group, tag, ...keys) => `${table}[(${group} - 1) * ${SMALL_LUT_SIZE} + 1 + ${hash(tag, ...keys)} % ${SMALL_LUT_SIZE}]`,
  };
}
