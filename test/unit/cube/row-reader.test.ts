import fc from 'fast-check';
import { jsonLinesInSlices } from '../../../src/cube/engine/row-reader';

/**
 * The driver reads ClickHouse's answer one JSON value a line, a slice of
 * lines at a time (src/cube/engine/row-reader.ts). The oracle is JSON.parse
 * of each line on its own, over answers cut into chunks at any byte, the
 * middle of a character or of an escape included.
 */

const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\n', '\r\n', '"', '\\', '\u2028\u2029', 'é😀', '\u0000', ']\n['),
);
const cell = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null), fc.array(text, { maxLength: 3 }));
const line = fc.array(cell, { maxLength: 6 });
const answer = fc.array(line, { maxLength: 40 });

/** The bytes of `lines` as ClickHouse writes them (one JSON value a line), cut at the given offsets. */
function chunksOf(lines: unknown[], cuts: number[]): Uint8Array[] {
  const bytes = Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join(''), 'utf8');
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  return [0, ...at].map((from, i) => bytes.subarray(from, i < at.length ? at[i] : bytes.length)).filter((c) => c.length > 0);
}

async function* yielded(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function read(chunks: Uint8Array[], sliceLines: number): Promise<unknown[][]> {
  const slices: unknown[][] = [];
  for await (const slice of jsonLinesInSlices(yielded(chunks), sliceLines)) slices.push(slice);
  return slices;
}

it.each([1, 2, 7, 1000])('parses every line as JSON.parse does, chunks cut anywhere, slices of at most %i lines', async (sliceLines) => {
  await fc.assert(
    fc.asyncProperty(answer, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), async (lines, cuts) => {
      const slices = await read(chunksOf(lines, cuts), sliceLines);
      expect(slices.flat(1)).toEqual(lines.map((l) => JSON.parse(JSON.stringify(l))));
      for (const slice of slices) expect(slice.length).toBeLessThanOrEqual(sliceLines);
      expect(slices.every((slice) => slice.length > 0)).toBe(true);
    }),
    { numRuns: 200 },
  );
});

it('reads a last line without its newline', async () => {
  expect((await read([Buffer.from('["a"]\n[1]')], 10)).flat(1)).toEqual([['a'], [1]]);
});

it('gives way to other work before each slice but the first', async () => {
  const lines = Array.from({ length: 10 }, (_, i) => [i, `row ${i}`]);
  // Queued before the reading starts: it runs before the end only if the reading gives way.
  let otherWorkRan = 0;
  const tick = () => {
    otherWorkRan += 1;
    if (otherWorkRan < 100) setImmediate(tick);
  };
  setImmediate(tick);
  const slices = await read(chunksOf(lines, []), 3);
  expect(slices.map((s) => s.length)).toEqual([3, 3, 3, 1]);
  // A turn before each slice but the first.
  expect(otherWorkRan).toBeGreaterThanOrEqual(3);
});

it('refuses a line that is not JSON, quoting it: a server that failed after its first rows writes its exception there', async () => {
  const body = '[1]\n[2]\nCode: 241. DB::Exception: Memory limit (for query) exceeded. (MEMORY_LIMIT_EXCEEDED)\n';
  await expect(read([Buffer.from(body)], 1000)).rejects.toThrow(/not JSON at line 3: Code: 241\. DB::Exception: Memory limit/);
});
