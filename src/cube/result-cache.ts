/**
 * Answers kept in front of Cube, so a repeated query skips Cube's per-request
 * work (validation, SQL generation, its own cache look-up, result transform),
 * which bounds throughput long before the HTTP layer does. An answer is kept
 * only until `windowMs` after Cube computed it (its lastRefreshTime) and is
 * evicted least recently used first once the answers kept exceed `maxBytes`.
 * Keys say everything that changes an answer; see cacheKey in result-key.ts.
 */
export interface ResultCacheOptions {
  /** 0 turns the cache off. */
  maxBytes: number;
  windowMs: number;
  now?: () => number;
}

interface Entry {
  value: unknown;
  expiresAt: number;
  bytes: number;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly now: () => number;

  constructor(private readonly options: ResultCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.options.maxBytes > 0 && this.options.windowMs > 0;
  }

  /** Bytes the kept answers take, as counted against maxBytes. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** Forgets every answer (the data changed under them). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get(key: string): unknown {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (this.now() >= entry.expiresAt) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps `value`, computed by Cube at `computedAt`, if it is still inside its
   * window and fits; `serializedLength` is the length of its JSON text.
   */
  set(key: string, value: unknown, computedAt: number, serializedLength: number): void {
    if (!this.enabled) return;
    const expiresAt = computedAt + this.options.windowMs;
    // An estimate, not a measure: the key is UTF-16 in memory, and parsed answers take about twice their JSON text.
    const bytes = 2 * (key.length + serializedLength);
    if (this.now() >= expiresAt || bytes > this.options.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    this.entries.set(key, { value, expiresAt, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}
