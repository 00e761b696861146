/**
 * The spool between the engine and a slow client: what it gives back is
 * what was pushed, in order, whether it waited in memory or in the file;
 * beyond its memory (or one larger chunk alone) it writes to the file, so
 * memory does not grow with the answer; the reader waits for bytes still to
 * come.
 */
import { randomBytes } from 'node:crypto';
import { Spool } from '../../../src/export/spool';

const KIB = 1024;

async function all(spool: Spool): Promise<Uint8Array[]> {
  const taken: Uint8Array[] = [];
  for await (const chunk of spool.chunks()) taken.push(chunk);
  return taken;
}

it('gives back every byte in order; past its memory the bytes come from the file', async () => {
  const spool = new Spool(4 * KIB);
  const pushed = Array.from({ length: 10 }, (_, i) => randomBytes(KIB + i));
  for (const chunk of pushed) await spool.push(chunk);
  spool.end();
  expect(spool.buffered).toBe(pushed.reduce((n, c) => n + c.length, 0));
  const taken = await all(spool);
  await spool.close();
  expect(taken.map((c) => Buffer.from(c).toString('hex'))).toEqual(pushed.map((c) => c.toString('hex')));
  // The first three fit in memory and come back as they were; the rest were written out and read back.
  expect(taken.slice(0, 3).every((c, i) => c === pushed[i])).toBe(true);
  expect(taken.slice(3).some((c, i) => c === pushed[i + 3])).toBe(false);
  expect(spool.buffered).toBe(0);
});

it('memory frees as the reader takes, and the reader waits for what is still to come', async () => {
  const spool = new Spool(2 * KIB);
  const reading = all(spool);
  const first = randomBytes(2 * KIB);
  await spool.push(first);
  await new Promise((resolve) => setImmediate(resolve));
  // Taken: the next chunk of the same size fits in memory again.
  const second = randomBytes(2 * KIB);
  await spool.push(second);
  spool.end();
  const taken = await reading;
  await spool.close();
  expect(taken).toEqual([first, second]);
  expect(taken[1]).toBe(second);
});

it('a chunk larger than its memory waits in memory when nothing else does; one more goes to the file', async () => {
  const spool = new Spool(2 * KIB);
  const large = randomBytes(5 * KIB);
  const next = randomBytes(5 * KIB);
  await spool.push(large);
  await spool.push(next);
  spool.end();
  const taken = await all(spool);
  await spool.close();
  expect(taken[0]).toBe(large);
  expect(taken[1]).not.toBe(next);
  expect(taken[1]).toEqual(next);
});

it('whenBuffered resolves once that many bytes wait', async () => {
  const spool = new Spool(KIB);
  let reached = false;
  void spool.whenBuffered(3 * KIB).then(() => (reached = true));
  await spool.push(randomBytes(2 * KIB));
  await new Promise((resolve) => setImmediate(resolve));
  expect(reached).toBe(false);
  await spool.push(randomBytes(KIB));
  await new Promise((resolve) => setImmediate(resolve));
  expect(reached).toBe(true);
  await spool.close();
});
