import { open, unlink, type FileHandle } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

type Held = { bytes: Uint8Array } | { offset: number; length: number };

/**
 * The bytes between the engine and a client that may read slower than the
 * engine writes. chDB runs one statement at a time and an open stream holds
 * it, so a reader that sets the pace would stop every other query of the
 * instance; here the engine writes at its own pace and the client reads at
 * its own: up to `memoryBytes` wait in memory (or one larger chunk alone), the rest in a temporary file
 * (unlinked as soon as it is open, so nothing outlives the process), in
 * order. What waits is bounded by what is pushed, which the export's caps
 * bound.
 */
export class Spool {
  private readonly held: Held[] = [];
  private inMemory = 0;
  private waiting = 0;
  private file: Promise<FileHandle> | undefined;
  private fileEnd = 0;
  private ended = false;
  private wake: (() => void) | undefined;
  private readonly watchers: { bytes: number; resolve(): void }[] = [];

  constructor(
    private readonly memoryBytes: number,
    private readonly dir: string = os.tmpdir(),
  ) {}

  /** Bytes pushed and not yet taken. */
  get buffered(): number {
    return this.waiting;
  }

  async push(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return;
    // A chunk larger than the whole window waits in memory when nothing else does: the engine's block
    // is held already, and a trip through the file would copy it twice more (ndjson's blocks of 65,536
    // rows are about 12 MB).
    if (this.inMemory + bytes.length <= this.memoryBytes || this.inMemory === 0) {
      this.held.push({ bytes });
      this.inMemory += bytes.length;
    } else {
      const file = await this.spillFile();
      const offset = this.fileEnd;
      this.fileEnd += bytes.length;
      await file.write(bytes, 0, bytes.length, offset);
      this.held.push({ offset, length: bytes.length });
    }
    this.waiting += bytes.length;
    this.notify();
  }

  /** Resolves once `bytes` wait to be taken (never, if fewer ever do). */
  whenBuffered(bytes: number): Promise<void> {
    if (this.waiting >= bytes) return Promise.resolve();
    return new Promise((resolve) => this.watchers.push({ bytes, resolve }));
  }

  /** No more bytes: the reader ends after the last one. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** The bytes in the order pushed, as they become available. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const next = this.held.shift();
      if (next) {
        let bytes: Uint8Array;
        if ('bytes' in next) {
          bytes = next.bytes;
          this.inMemory -= bytes.length;
        } else {
          bytes = Buffer.allocUnsafe(next.length);
          await (await this.spillFile()).read(bytes, 0, next.length, next.offset);
        }
        this.waiting -= bytes.length;
        yield bytes;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Frees the file, if one was needed. */
  async close(): Promise<void> {
    this.held.length = 0;
    const file = this.file;
    this.file = undefined;
    if (file) await (await file).close();
  }

  private spillFile(): Promise<FileHandle> {
    this.file ??= (async () => {
      const name = path.join(this.dir, `analytics-export-${randomUUID()}.spool`);
      const handle = await open(name, 'w+', 0o600);
      await unlink(name);
      return handle;
    })();
    return this.file;
  }

  private notify(): void {
    for (const watcher of [...this.watchers]) {
      if (this.waiting >= watcher.bytes) {
        this.watchers.splice(this.watchers.indexOf(watcher), 1);
        watcher.resolve();
      }
    }
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
