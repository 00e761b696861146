/** More than any run of builds a second apart puts a stamp ahead of the clock. */
const MAX_AHEAD_MS = 600_000;

/**
 * The times Cube 0.33 names rollup tables with: each build's later than any
 * other's. Cube stamps a new table with the time its build starts, to the
 * second, and answers a rollup from the table of the latest stamp: a table
 * built in the same second as the one before it ties, and the tie goes by
 * name, that is by a hash of the refresh key. Half the time the older table
 * won, and answers came from before the data changed, with no error, until
 * the next build (two imports, or an import and a refresh, within a second).
 * Here each stamp is at least a second after the last one given and after
 * every one seen in the rollup database's table names (those of an earlier
 * process, or another replica's), so the newest build is the newest stamp.
 * A stamp runs ahead of the clock only while builds come faster than one a
 * second.
 */
export class BuildStamps {
  private last = 0;

  constructor(private readonly now: () => number = Date.now) {}

  next(): number {
    this.last = Math.max(this.now(), this.last + 1000);
    return this.last;
  }

  /**
   * Table names as Cube makes them, `<name>_<content>_<structure>_<stamp>`:
   * base-32 seconds, or (Cube's older naming) decimal milliseconds. A stamp
   * further ahead of the clock than builds run is not one of Cube's (another
   * table in the database) and would hold every later stamp there: skipped.
   */
  saw(tableNames: readonly string[]): void {
    const latest = this.now() + MAX_AHEAD_MS;
    for (const name of tableNames) {
      const match = /^.+_[^_]+_[^_]+_(?:([0-9a-v]{1,12})|([0-9]{13,}))$/.exec(name);
      if (!match) continue;
      const ms = match[1] !== undefined ? parseInt(match[1], 32) * 1000 : Number(match[2]);
      if (ms <= latest && ms > this.last) this.last = ms;
    }
  }
}

/**
 * Of Cube's rollup tables, the builds a later build of the same rollup for
 * the same context replaced: the same name and structure (a hash of the
 * build's SQL, which holds the context's account), an earlier stamp. Cube
 * drops them itself only at a later build, and not while queries used them
 * lately; an erasure drops them at once (CubeService.dropSupersededRollups).
 */
export function supersededBuilds(tableNames: readonly string[]): string[] {
  const newest = new Map<string, { name: string; ms: number }>();
  const superseded: string[] = [];
  for (const name of tableNames) {
    const match = /^(.+)_[^_]+_([^_]+)_(?:([0-9a-v]{1,12})|([0-9]{13,}))$/.exec(name);
    if (!match) continue;
    const key = `${match[1]} ${match[2]}`;
    const ms = match[3] !== undefined ? parseInt(match[3], 32) * 1000 : Number(match[4]);
    const kept = newest.get(key);
    if (kept === undefined) newest.set(key, { name, ms });
    else if (kept.ms < ms) {
      superseded.push(kept.name);
      newest.set(key, { name, ms });
    } else superseded.push(name);
  }
  return superseded;
}
