/**
 * The UTC date `n` days before now, YYYY-MM-DD, by the clock the service reads (JavaScript's, which TEST_NOW moves:
 * clock.ts) — never the engine's `now()`, which a relative range does not count from.
 */
export const daysAgo = (n: number): string => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
