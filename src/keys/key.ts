import { createHash, randomBytes } from 'node:crypto';

/**
 * Account keys look like `pak_<43 base62 chars of 32 random bytes><6 base62 chars of their CRC32>`.
 * The prefix lets secret scanners find leaked keys, and the checksum lets them
 * tell a real key from a look-alike without asking us. Base62 keeps the whole
 * key one word, so a double-click selects all of it.
 */
export const KEY_PREFIX = 'pak_';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 32;
// Every 32-byte value fits in 43 base62 digits (62^43 > 2^256), so padding to 43 loses no entropy.
const RANDOM_CHARS = 43;
// Every CRC32 fits in 6 base62 digits (62^6 > 2^32).
const CHECKSUM_CHARS = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);

export function generateKey(): string {
  const random = toBase62(BigInt(`0x${randomBytes(RANDOM_BYTES).toString('hex')}`), RANDOM_CHARS);
  return `${KEY_PREFIX}${random}${checksum(random)}`;
}

/** True when `s` has the prefix, length, alphabet and checksum of a key; says nothing of whether it was issued. */
export function looksLikeKey(s: string): boolean {
  if (!KEY_PATTERN.test(s)) return false;
  const random = s.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_CHARS);
  return s.slice(KEY_PREFIX.length + RANDOM_CHARS) === checksum(random);
}

/** What the store keeps instead of the key: SHA-256, hex. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function checksum(random: string): string {
  return toBase62(BigInt(crc32(Buffer.from(random, 'ascii'))), CHECKSUM_CHARS);
}

function toBase62(value: bigint, width: number): string {
  let digits = '';
  for (let rest = value; rest > 0n; rest /= 62n) digits = ALPHABET[Number(rest % 62n)] + digits;
  return digits.padStart(width, ALPHABET[0]);
}

// zlib.crc32 only exists from Node 20.15; the engines field allows any Node 20.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let bit = 0; bit < 8; bit++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
