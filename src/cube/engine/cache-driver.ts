import { LocalCacheDriver } from '@cubejs-backend/query-orchestrator';
import { jsonInSlices } from '../../json-slices';

/** Entries written this recently are never evicted: Cube reads a result's time back right after writing it. */
const GRACE_MS = 10_000;

/** Cube's list of a rollup database's tables; not its bookkeeping of tables touched and used, which shares the prefix. */
const TABLE_LIST = /^SQL_PRE_AGGREGATIONS_TABLES_(?!TOUCH_|USED_)/;

/**
 * Cube's in-memory cache driver with a bound. Cube's own keeps every result
 * and refresh-key value it stores for 24 hours, in one object shared by the
 * whole process, and deletes an entry only when that same key is read after
 * it expired; so every distinct query grows the process for a day. This one
 * keeps its own store and, once the entries exceed `maxBytes` (as Cube
 * measures them, the bytes of their JSON), drops the oldest written. Losing
 * an entry only makes Cube run that query again.
 *
 * An entry younger than GRACE_MS stays even past the bound: Cube answers
 * `lastRefreshTime` by reading the result it has just written, and without it
 * the answer would lack the field.
 */
export class BoundedCacheDriver extends LocalCacheDriver {
  private readonly written = new Map<string, { bytes: number; at: number }>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onSize: (bytes: number) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    super();
    // The base class points at a store shared by every instance in the process.
    (this as unknown as { store: Record<string, unknown> }).store = {};
  }

  /** Bytes of the entries kept, as counted against maxBytes. */
  get size(): number {
    return this.bytes;
  }

  /**
   * Forgets the entries whose key starts with `prefix` (the data changed
   * under them). Cube keeps its rollup bookkeeping here too (which tables
   * queries touched lately, which it keeps when it drops the others), so
   * forgetting everything would have it drop and rebuild rollups in use.
   */
  removeStartingWith(prefix: string): void {
    for (const key of Object.keys(this.store)) {
      if (!key.startsWith(prefix)) continue;
      delete this.store[key];
      this.forget(key);
    }
    this.onSize(this.bytes);
  }

  /**
   * The base class's set, but its measure (the bytes of the value's JSON) is
   * taken a slice of rows at a time: a large result serialised in one go held
   * the event loop, and so did counting the UTF-8 bytes of all its pieces
   * at once (about 90 ms for a 14 MB answer), so each piece is counted on a
   * turn of its own. The entry is stored before that, as the base class does.
   */
  override async set(key: string, value: unknown, expiration: number): Promise<{ key: string; bytes: number }> {
    // Cube reads a rollup database's table list through a queue that joins a read already under way, and stores
    // what that read found for an hour: a list read while a build was still creating its table, and stored after it,
    // lacked the new table, and queries answered from the table before it, with no error, until the next build
    // (the refresh worker's rebuilds, which nothing here forgets after). Not kept, each request that needs the list
    // reads it (one small system.tables query), and Cube keeps it for the rest of that request.
    if (TABLE_LIST.test(key)) return { key, bytes: 0 };
    (this.store as Record<string, { value: unknown; exp: number }>)[key] = { value, exp: new Date().getTime() + expiration * 1000 };
    let bytes = 0;
    for (const [i, piece] of (await jsonInSlices(value)).entries()) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      bytes += Buffer.byteLength(piece);
    }
    const result = { key, bytes };
    this.forget(key);
    this.written.set(key, { bytes: result.bytes, at: this.now() });
    this.bytes += result.bytes;
    this.evict();
    this.onSize(this.bytes);
    return result;
  }

  override async get(key: string): Promise<unknown> {
    const value = await super.get(key);
    // The base class deletes an expired entry when it is read.
    if (!(key in this.store)) this.forgetAndReport(key);
    return value;
  }

  override async remove(key: string): Promise<void> {
    await super.remove(key);
    this.forgetAndReport(key);
  }

  private evict(): void {
    const graceFrom = this.now() - GRACE_MS;
    for (const [key, { at }] of this.written) {
      if (this.bytes <= this.maxBytes || at > graceFrom) return;
      delete this.store[key];
      this.forget(key);
    }
  }

  private forget(key: string): void {
    const entry = this.written.get(key);
    if (!entry) return;
    this.written.delete(key);
    this.bytes -= entry.bytes;
  }

  private forgetAndReport(key: string): void {
    if (!this.written.has(key)) return;
    this.forget(key);
    this.onSize(this.bytes);
  }
}
