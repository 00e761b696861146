/** Array elements serialised between two turns of the event loop. */
export const JSON_SLICE_ELEMENTS = 1000;

/** How deep a long array is looked for: a multi answer's `results[i].data` is three levels down. */
const DEPTH = 3;

/** A JSON text in pieces, in order: joined, they are the text. */
export type JsonPieces = readonly string[];

/**
 * JSON.stringify(value), the same text in pieces, without holding the event
 * loop for the whole of a large answer: an array longer than
 * `sliceElements`, at most three levels down (`data`, `results[i].data`), is
 * serialised a slice at a time, one slice per turn of the event loop, and
 * is never joined into one string (a 14 MB string, made or copied at once,
 * held the event loop too). Everything else is serialised by JSON.stringify
 * itself; only the plain objects and arrays on the way to a long array are
 * written here, as JSON.stringify writes them (own enumerable string keys in
 * order, undefined, functions and symbols left out of objects and null in
 * arrays).
 */
export async function jsonInSlices(value: unknown, sliceElements: number = JSON_SLICE_ELEMENTS): Promise<JsonPieces> {
  const pieces: string[] = [];
  const text = await write(value, DEPTH, sliceElements, pieces);
  // A value JSON.stringify cannot write (undefined) is no text; callers pass answers, which always are.
  if (text === false) throw new TypeError('a value with no JSON text');
  return pieces;
}

/** Characters of a JSON text (one per UTF-16 unit, as `string.length`). */
export function jsonLength(pieces: JsonPieces): number {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  return length;
}

/** Writes the value's JSON to `pieces`; false when JSON.stringify would give undefined. */
async function write(value: unknown, depth: number, slice: number, pieces: string[]): Promise<boolean> {
  if (!containsLong(value, depth, slice)) {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    pieces.push(text);
    return true;
  }
  if (Array.isArray(value)) {
    if (value.length > slice) await slicedArray(value, slice, pieces);
    else {
      pieces.push('[');
      for (const [i, item] of value.entries()) {
        if (i > 0) pieces.push(',');
        if (!(await write(item, depth - 1, slice, pieces))) pieces.push('null');
      }
      pieces.push(']');
    }
    return true;
  }
  pieces.push('{');
  let first = true;
  for (const [key, field] of Object.entries(value as object)) {
    const name = `${first ? '' : ','}${JSON.stringify(key)}:`;
    if (containsLong(field, depth - 1, slice)) {
      pieces.push(name);
      await write(field, depth - 1, slice, pieces);
    } else {
      const text = JSON.stringify(field);
      if (text === undefined) continue;
      pieces.push(name + text);
    }
    first = false;
  }
  pieces.push('}');
  return true;
}

/** Whether a long array is within `depth` levels of plain objects and arrays (those JSON.stringify writes as they are). */
function containsLong(value: unknown, depth: number, slice: number): boolean {
  if (Array.isArray(value)) {
    if (hasToJson(value)) return false;
    return value.length > slice || (depth > 0 && value.some((item) => containsLong(item, depth - 1, slice)));
  }
  if (depth === 0 || !isPlainObject(value)) return false;
  return Object.values(value).some((field) => containsLong(field, depth - 1, slice));
}

function isPlainObject(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !hasToJson(value);
}

function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

async function slicedArray(items: unknown[], slice: number, pieces: string[]): Promise<void> {
  for (let from = 0; from < items.length; from += slice) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    // Each slice is a non-empty array: its text without the brackets is its elements, joined by commas.
    const text = JSON.stringify(items.slice(from, from + slice));
    pieces.push(`${from === 0 ? '[' : ','}${text.slice(1, -1)}${from + slice >= items.length ? ']' : ''}`);
  }
}
