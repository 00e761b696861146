/** Lines of an answer parsed between two turns of the event loop. */
export const READ_SLICE_LINES = 1000;

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

/**
 * The lines of a ClickHouse answer in one of its JSON-per-line formats
 * (JSONCompactEachRow and its WithNamesAndTypes form: one JSON value a line),
 * parsed a slice of at most `sliceLines` lines at a time, with a turn of the
 * event loop before each slice after the first. One JSON.parse of a whole
 * 50,000-row answer held the event loop for hundreds of milliseconds; a slice
 * of 1,000 lines takes about a millisecond, and other requests run between.
 *
 * A newline byte ends a line and nothing else: JSON writes the newlines of a
 * string as `\n`, and no byte of a multi-byte UTF-8 character is 0x0A, so
 * splitting the bytes there never cuts a value or a character; the chunks
 * the engine hands over may end anywhere and are joined where a line spans
 * two. A line that is not JSON (a server that fails after its first rows
 * writes its exception into the answer) is an error that quotes it.
 */
export async function* jsonLinesInSlices(chunks: AsyncIterable<Uint8Array>, sliceLines: number = READ_SLICE_LINES): AsyncGenerator<unknown[]> {
  let carry: Buffer = EMPTY;
  let lines = 0;
  for await (const chunk of chunks) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buffer = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
    let from = 0;
    for (let end = endOfLines(buffer, from, sliceLines); end !== -1; end = endOfLines(buffer, from, sliceLines)) {
      if (lines > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const parsed = parseLines(buffer.toString('utf8', from, end - 1), lines);
      lines += parsed.length;
      from = end;
      yield parsed;
    }
    carry = buffer.subarray(from);
  }
  const last = carry.toString('utf8');
  if (last.trim() !== '') {
    if (lines > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    yield parseLines(last, lines);
  }
}

/** The index just past the `count`-th newline from `from`, or past the last one there is; -1 when there is none. */
function endOfLines(buffer: Buffer, from: number, count: number): number {
  let end = -1;
  for (let found = 0, at = from; found < count; found += 1) {
    const newline = buffer.indexOf(NEWLINE, at);
    if (newline === -1) break;
    end = newline + 1;
    at = end;
  }
  return end;
}

/** Newline-separated JSON values, parsed as the one array they make with commas between them. */
function parseLines(text: string, before: number): unknown[] {
  try {
    return JSON.parse(`[${text.replaceAll('\n', ',')}]`) as unknown[];
  } catch {
    const lines = text.split('\n');
    const bad = lines.findIndex((line) => !isJson(line));
    const line = lines[bad] ?? text;
    throw new Error(`ClickHouse's answer is not JSON at line ${before + bad + 1}: ${[line, ...lines.slice(bad + 1)].join('\n').slice(0, 1000)}`);
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
