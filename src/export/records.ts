/**
 * Where rows end in an export's bytes, as ClickHouse writes them, so that a
 * cap stops the file after a whole row. JSONEachRow escapes newlines inside
 * values, so each newline ends a row; CSV quotes a field holding a newline,
 * so only newlines outside quotes end one (a doubled quote inside a quoted
 * field leaves and re-enters the quotes, which comes to the same).
 */
export class RecordEnds {
  private inQuotes = false;

  constructor(private readonly kind: 'lines' | 'csv') {}

  /**
   * Reads `chunk` from its start (the bytes after the previous chunk's),
   * counting the records that end in it, until `records` have ended or the
   * next end would lie beyond `bytes`. Returns how many ended and the offset
   * just after the last of them.
   */
  scan(chunk: Uint8Array, records: number, bytes: number): { ended: number; end: number } {
    let ended = 0;
    let end = 0;
    while (ended < records) {
      const newline = this.nextEnd(chunk, end);
      if (newline === -1 || newline + 1 > bytes) break;
      ended++;
      end = newline + 1;
    }
    return { ended, end };
  }

  /** The next newline at or after `pos` that ends a record, or -1; keeps track of quotes up to it (or the chunk's end). */
  private nextEnd(chunk: Uint8Array, pos: number): number {
    if (this.kind === 'lines') return chunk.indexOf(0x0a, pos);
    for (;;) {
      if (this.inQuotes) {
        const close = chunk.indexOf(0x22, pos);
        if (close === -1) return -1;
        this.inQuotes = false;
        pos = close + 1;
        continue;
      }
      const newline = chunk.indexOf(0x0a, pos);
      const quote = chunk.indexOf(0x22, pos);
      if (quote !== -1 && (newline === -1 || quote < newline)) {
        this.inQuotes = true;
        pos = quote + 1;
        continue;
      }
      return newline;
    }
  }
}
