import { createHash } from 'node:crypto';
import { generateKey, hashKey, KEY_PREFIX, looksLikeKey } from '../../../src/keys/key';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('generateKey', () => {
  const keys = Array.from({ length: 5000 }, generateKey);

  it('never repeats a key', () => {
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('is pak_ and base62 only, one word of fixed length, and passes looksLikeKey', () => {
    for (const key of keys) {
      expect(key).toMatch(/^pak_[0-9A-Za-z]{49}$/);
      expect(looksLikeKey(key)).toBe(true);
    }
    expect(KEY_PREFIX).toBe('pak_');
  });

  it('spreads at least 128 bits over the random part: every one of its 43 characters varies', () => {
    // 43 positions each taking ~62 values is ~256 bits; a key built from 16
    // bytes or fewer would leave at least 21 positions fixed or nearly so.
    const randomPart = keys.map((key) => key.slice(4, 47));
    for (let position = 0; position < 43; position++) {
      const seen = new Set(randomPart.map((part) => part[position]));
      expect({ position, distinct: seen.size >= 50 }).toEqual({ position, distinct: true });
    }
  });
});

describe('looksLikeKey', () => {
  const key = generateKey();

  it('fails the checksum when any one character after the prefix changes', () => {
    for (let position = KEY_PREFIX.length; position < key.length; position++) {
      for (const replacement of [BASE62[(BASE62.indexOf(key[position]) + 1) % 62], BASE62[(BASE62.indexOf(key[position]) + 31) % 62]]) {
        const changed = key.slice(0, position) + replacement + key.slice(position + 1);
        expect({ changed, valid: looksLikeKey(changed) }).toEqual({ changed, valid: false });
      }
    }
  });

  it('fails on two swapped neighbours', () => {
    const position = [...key].findIndex((char, i) => i >= 4 && key[i + 1] !== undefined && key[i + 1] !== char);
    const swapped = key.slice(0, position) + key[position + 1] + key[position] + key.slice(position + 2);
    expect(looksLikeKey(swapped)).toBe(false);
  });

  it.each([
    ['another prefix', `gak_${key.slice(4)}`],
    ['upper-case prefix', `PAK_${key.slice(4)}`],
    ['one character more', `${key}0`],
    ['one character less', key.slice(0, -1)],
    ['a non-base62 character', `${key.slice(0, 10)}_${key.slice(11)}`],
    ['surrounding space', ` ${key}`],
    ['the empty string', ''],
  ])('rejects %s', (_what, candidate) => {
    expect(looksLikeKey(candidate)).toBe(false);
  });
});

describe('hashKey', () => {
  it('is the SHA-256 of the key in hex', () => {
    const key = generateKey();
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });
});
