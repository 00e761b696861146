/**
 * Where records end in the engine's bytes, however the bytes are split into
 * chunks: csv fields may hold newlines, commas and doubled quotes inside
 * quotes; ndjson lines never hold a newline. The expected ends come from the
 * records the test joined, not from the scanner.
 */
import { RecordEnds } from '../../../src/export/records';

const CSV_RECORDS = ['"a","b"\r\n', '"x\ny",1\r\n', '"say ""hi""\r\n, twice",2\r\n', '"",3\r\n', 'plain,4\r\n', '"end""\n""",5\r\n'];
const LINES = ['{"a":1}\n', '{"b":"x\\ny"}\n', '{"c":"\\"q\\""}\n'];

/** Every split of `text` into two chunks, scanned for at most `records` records within `bytes`: the offsets where records ended. */
function endsWhenSplit(kind: 'csv' | 'lines', text: string, records: number, bytes: number): number[][] {
  const all = Buffer.from(text);
  const found: number[][] = [];
  for (let at = 0; at <= all.length; at++) {
    const ends = new RecordEnds(kind);
    const offsets: number[] = [];
    let left = records;
    let room = bytes;
    for (const [start, chunk] of [
      [0, all.subarray(0, at)],
      [at, all.subarray(at)],
    ] as const) {
      const { ended, end } = ends.scan(chunk, left, room);
      left -= ended;
      if (ended > 0) offsets.push(start + end);
      room -= chunk.length;
      if (left === 0 || room < 0) break;
    }
    found.push(offsets.slice(-1));
  }
  return found;
}

const endOf = (records: string[], n: number) => Buffer.byteLength(records.slice(0, n).join(''));

it.each([
  ['csv', CSV_RECORDS],
  ['lines', LINES],
] as const)('%s: the last record end is the same at every split, under a record cap', (kind, records) => {
  const text = records.join('');
  for (let cap = 1; cap <= records.length; cap++) {
    for (const offsets of endsWhenSplit(kind, text, cap, Infinity)) expect(offsets).toEqual([endOf(records, cap)]);
  }
});

it('csv: under a byte cap, the scan stops after the last whole record that fits', () => {
  const text = CSV_RECORDS.join('');
  for (let bytes = endOf(CSV_RECORDS, 1); bytes <= Buffer.byteLength(text); bytes++) {
    const whole = [...Array(CSV_RECORDS.length + 1).keys()].filter((n) => endOf(CSV_RECORDS, n) <= bytes).at(-1)!;
    const all = Buffer.from(text);
    const { ended, end } = new RecordEnds('csv').scan(all, Infinity, bytes);
    expect([bytes, ended, end]).toEqual([bytes, whole, endOf(CSV_RECORDS, whole)]);
  }
});
