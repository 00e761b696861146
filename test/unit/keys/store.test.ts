import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { looksLikeKey } from '../../../src/keys/key';
import {
  ACCOUNT_ID_PATTERN,
  createKey,
  KeyFileError,
  KeyInputError,
  keyStatus,
  readKeyFile,
  revokeKey,
  SCOPES,
  writeKeyFile,
  type KeyRecord,
} from '../../../src/keys/store';
import { tempKeyFile } from './support';

const NOW = new Date('2026-11-22T10:00:00.000Z');

describe('key file', () => {
  it('holds no keys while it does not exist', async () => {
    expect(await readKeyFile(tempKeyFile())).toEqual([]);
  });

  it('keeps only the hash of a new key, in a version 1 file with mode 0600 in a directory it creates', async () => {
    const file = tempKeyFile();
    const { key, record } = await createKey(file, { account: 'acme', name: 'CI pipeline' }, NOW);

    expect(looksLikeKey(key)).toBe(true);
    expect(record).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{16}$/),
      prefix: key.slice(0, 12),
      hash: createHash('sha256').update(key).digest('hex'),
      account: 'acme',
      name: 'CI pipeline',
      createdAt: '2026-11-22T10:00:00.000Z',
      expiresAt: null,
      revokedAt: null,
      scopes: ['data:meta', 'data:load'],
    });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(12));
    expect(JSON.parse(text)).toEqual({ version: 1, keys: [record] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await readKeyFile(file)).toEqual([record]);
  });

  it('replaces the file by rename and leaves no temporary file behind', async () => {
    const file = tempKeyFile();
    await createKey(file, { account: 'acme', name: 'one' }, NOW);
    const before = statSync(file).ino;
    await createKey(file, { account: 'acme', name: 'two' }, NOW);
    expect(statSync(file).ino).not.toBe(before);
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
    expect((await readKeyFile(file)).map((record) => record.name)).toEqual(['one', 'two']);
  });

  it('keeps the requested scopes, in canonical order', async () => {
    const file = tempKeyFile();
    const { record } = await createKey(file, { account: 'acme', name: 'meta only', scopes: ['data:meta'] }, NOW);
    expect(record.scopes).toEqual(['data:meta']);
    const both = await createKey(file, { account: 'acme', name: 'both', scopes: ['data:load', 'data:meta', 'data:load'] }, NOW);
    expect(both.record.scopes).toEqual([...SCOPES]);
  });

  describe('refuses to read a file that is not exactly what it writes, naming the file and the problem', () => {
    let good: KeyRecord;
    beforeAll(async () => {
      good = (await createKey(tempKeyFile(), { account: 'acme', name: 'good' }, NOW)).record;
    });

    it.each<[string, (record: KeyRecord) => unknown, RegExp]>([
      ['unknown version', () => ({ version: 2, keys: [] }), /unknown version 2/],
      ['no version', () => ({ keys: [] }), /unknown version undefined/],
      ['keys not an array', () => ({ version: 1, keys: {} }), /"keys" to be an array/],
      ['a top-level array', () => [], /expected \{"version": 1/],
      ['a record that is not an object', () => ({ version: 1, keys: ['pak_x'] }), /keys\[0\]: expected an object/],
      ['an unknown field', (r) => ({ version: 1, keys: [{ ...r, key: 'pak_secret' }] }), /keys\[0\]: unknown field key/],
      ['a missing field', ({ hash: _hash, ...r }) => ({ version: 1, keys: [r] }), /keys\[0\]: hash: expected 64/],
      ['a bad id', (r) => ({ version: 1, keys: [{ ...r, id: 'key_1' }] }), /keys\[0\]: id:/],
      ['a bad prefix', (r) => ({ version: 1, keys: [{ ...r, prefix: 'ghp_12345678' }] }), /keys\[0\]: prefix:/],
      ['an upper-case hash', (r) => ({ version: 1, keys: [{ ...r, hash: r.hash.toUpperCase() }] }), /keys\[0\]: hash:/],
      ['a bad account', (r) => ({ version: 1, keys: [{ ...r, account: 'Acme' }] }), /keys\[0\]: account:/],
      ['a blank name', (r) => ({ version: 1, keys: [{ ...r, name: ' ' }] }), /keys\[0\]: name:/],
      ['a date that is not ISO', (r) => ({ version: 1, keys: [{ ...r, createdAt: '22/11/2026' }] }), /keys\[0\]: createdAt:/],
      ['a missing expiresAt', ({ expiresAt: _e, ...r }) => ({ version: 1, keys: [r] }), /keys\[0\]: expiresAt:/],
      ['a numeric revokedAt', (r) => ({ version: 1, keys: [{ ...r, revokedAt: 0 }] }), /keys\[0\]: revokedAt:/],
      ['an unknown scope', (r) => ({ version: 1, keys: [{ ...r, scopes: ['data:write'] }] }), /keys\[0\]: scopes:/],
      ['no scopes', (r) => ({ version: 1, keys: [{ ...r, scopes: [] }] }), /keys\[0\]: scopes:/],
      ['a duplicate id', (r) => ({ version: 1, keys: [r, { ...r, name: 'copy' }] }), /keys\[1\]: duplicate id/],
    ])('%s', async (_what, content, problem) => {
      const file = tempKeyFile();
      await writeKeyFile(file, []);
      writeFileSync(file, JSON.stringify(content(good)));
      const error = await readKeyFile(file).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(KeyFileError);
      expect((error as Error).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
      expect((error as Error).message).toMatch(problem);
    });

    it('invalid JSON', async () => {
      const file = tempKeyFile();
      await writeKeyFile(file, [good]);
      writeFileSync(file, '{"version": 1, "keys": [');
      await expect(readKeyFile(file)).rejects.toThrow(`${file}: is not valid JSON`);
    });

    it('a directory where the file should be', async () => {
      const file = tempKeyFile();
      await writeKeyFile(path.join(file, 'inner.json'), []);
      await expect(readKeyFile(file)).rejects.toThrow(`${file}: cannot be read`);
    });
  });
});

describe('createKey', () => {
  it.each(['a', 'Acme', '-acme', 'acme_corp', 'acme corp', 'ac.me', `a${'b'.repeat(63)}`, ''])(
    'refuses the account id %p with a message saying what an id looks like',
    async (account) => {
      const file = tempKeyFile();
      await expect(createKey(file, { account, name: 'x' }, NOW)).rejects.toThrow(KeyInputError);
      await expect(createKey(file, { account, name: 'x' }, NOW)).rejects.toThrow(/^account .*: expected 2 to 63 lowercase letters, digits and hyphens/);
      expect(await readKeyFile(file)).toEqual([]);
    },
  );

  it.each(['ab', '0-', 'acme-corp-2', `a${'b'.repeat(62)}`])('accepts the account id %p', async (account) => {
    expect(ACCOUNT_ID_PATTERN.test(account)).toBe(true);
    const { record } = await createKey(tempKeyFile(), { account, name: 'x' }, NOW);
    expect(record.account).toBe(account);
  });

  it.each([
    ['a blank name', { account: 'acme', name: '  ' }, /^name/],
    ['a name with a newline', { account: 'acme', name: 'a\nb' }, /^name/],
    ['an expiry in the past', { account: 'acme', name: 'x', expiresAt: new Date(NOW.getTime() - 1) }, /^expiry/],
    ['no scopes', { account: 'acme', name: 'x', scopes: [] }, /^scopes/],
  ])('refuses %s', async (_what, input, problem) => {
    await expect(createKey(tempKeyFile(), input, NOW)).rejects.toThrow(problem);
  });
});

describe('revokeKey and keyStatus', () => {
  it('revokes once, keeping the record, and tells an unknown id apart', async () => {
    const file = tempKeyFile();
    const { record } = await createKey(file, { account: 'acme', name: 'x' }, NOW);
    const other = await createKey(file, { account: 'acme', name: 'y' }, NOW);
    const later = new Date(NOW.getTime() + 60_000);

    expect(await revokeKey(file, record.id, later)).toEqual({ status: 'revoked', record: { ...record, revokedAt: later.toISOString() } });
    expect(await revokeKey(file, record.id, new Date(later.getTime() + 1))).toEqual({
      status: 'already-revoked',
      record: { ...record, revokedAt: later.toISOString() },
    });
    expect(await revokeKey(file, 'key_0000000000000000', later)).toEqual({ status: 'unknown' });
    expect(await readKeyFile(file)).toEqual([{ ...record, revokedAt: later.toISOString() }, other.record]);
  });

  it('counts a key as expired from its expiry on, and revocation first', () => {
    const record: KeyRecord = {
      id: 'key_0123456789abcdef',
      prefix: 'pak_01234567',
      hash: '0'.repeat(64),
      account: 'acme',
      name: 'x',
      createdAt: NOW.toISOString(),
      expiresAt: '2026-12-01T00:00:00.000Z',
      revokedAt: null,
      scopes: ['data:meta'],
    };
    expect(keyStatus(record, new Date('2026-11-30T23:59:59.999Z'))).toBe('active');
    expect(keyStatus(record, new Date('2026-12-01T00:00:00.000Z'))).toBe('expired');
    expect(keyStatus({ ...record, revokedAt: NOW.toISOString() }, NOW)).toBe('revoked');
    expect(keyStatus({ ...record, expiresAt: null }, new Date('2100-01-01T00:00:00.000Z'))).toBe('active');
  });
});
