import fc from 'fast-check';
import { jsonInSlices, jsonLength } from '../../src/json-slices';

/**
 * An answer is serialised a slice of rows at a time; the oracle is
 * JSON.stringify of the same value, which res.json sent before.
 */

const leaf = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(undefined, () => 1, Symbol('s'), new Date(0), { toJSON: () => 'own' }, NaN, -0, '\u2028é😀"\\'),
);
const row = fc.dictionary(fc.string({ maxLength: 4 }), leaf, { maxKeys: 4 });
const rows = fc.array(fc.oneof(row, leaf), { maxLength: 25 });
const answer = fc.record({
  query: fc.jsonValue({ maxDepth: 2 }),
  data: rows,
  total: fc.oneof(fc.constant(null), fc.integer()),
  slowQuery: fc.boolean(),
  gone: fc.constant(undefined),
});
const multi = fc.record({ queryType: fc.string(), results: fc.array(answer, { maxLength: 4 }), pivotQuery: fc.jsonValue({ maxDepth: 2 }) });
const anything = fc.oneof(answer, multi, rows, fc.array(rows, { maxLength: 3 }), leaf);

describe('jsonInSlices', () => {
  it.each([1, 2, 3, 7])('gives JSON.stringify’s text in pieces, slices of %i elements', async (slice) => {
    await fc.assert(
      fc.asyncProperty(anything, async (value) => {
        fc.pre(JSON.stringify(value) !== undefined);
        const pieces = await jsonInSlices(value, slice);
        expect(pieces.join('')).toBe(JSON.stringify(value));
        expect(jsonLength(pieces)).toBe(JSON.stringify(value).length);
      }),
      { numRuns: 300 },
    );
  });

  it('cuts a long array of rows into slices, one per turn of the event loop', async () => {
    const data = Array.from({ length: 10 }, (_, i) => ({ n: i }));
    // Queued before the serialisation starts: it runs before the end only if the serialisation gives way.
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const pieces = await jsonInSlices({ data }, 3);
    expect(pieces.join('')).toBe(JSON.stringify({ data }));
    // {, "data":, four slices (3 + 3 + 3 + 1 rows), }
    expect(pieces.length).toBe(7);
    expect(otherWorkRan).toBe(true);
  });

  it('refuses a value with no JSON text', async () => {
    await expect(jsonInSlices(undefined)).rejects.toThrow(TypeError);
  });
});
