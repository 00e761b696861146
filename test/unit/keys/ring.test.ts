import { rmSync, writeFileSync } from 'node:fs';
import { createAuthenticator } from '../../../src/keys/authenticator';
import { openKeyRing, type KeyRing } from '../../../src/keys/ring';
import { createKey, revokeKey } from '../../../src/keys/store';
import { eventually, recordingLogger, tempKeyFile } from './support';

const INTERVAL_MS = 100;

const rings: KeyRing[] = [];
afterEach(() => {
  for (const ring of rings.splice(0)) ring.close();
});

async function open(file: string) {
  const logger = recordingLogger();
  const ring = await openKeyRing({ file, reloadIntervalMs: INTERVAL_MS, logger });
  rings.push(ring);
  // fs.watchFile takes its first sample of the file on its own schedule (under load on Node 24, after the start's
  // read): a write in that instant is seen at the file's next change, so the tests' first write waits for the sample.
  await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));
  return { ring, logger, auth: createAuthenticator({ operatorKeys: [], ring }) };
}

describe('openKeyRing', () => {
  it('picks up keys created and revoked after it started, without a restart', async () => {
    const file = tempKeyFile();
    const { ring, auth, logger } = await open(file);
    expect(ring.keys()).toEqual([]);

    const { key, record } = await createKey(file, { account: 'acme', name: 'new' });
    await eventually('the new key is accepted', () => auth.authenticate(key)?.keyId === record.id);
    expect(logger.info).toHaveBeenCalledWith('key file reloaded', { file, keys: 1 });

    const second = await createKey(file, { account: 'globex', name: 'another' });
    await eventually('the second key is accepted', () => auth.authenticate(second.key)?.accountId === 'globex');

    await revokeKey(file, record.id);
    await eventually('the revoked key is refused', () => auth.authenticate(key) === undefined);
    expect(auth.authenticate(second.key)?.accountId).toBe('globex');
    expect(logger.error).not.toHaveBeenCalled();
  });

  it('keeps the last good keys and reports when the file turns invalid, and recovers when it is fixed', async () => {
    const file = tempKeyFile();
    const { key } = await createKey(file, { account: 'acme', name: 'kept' });
    const { auth, logger } = await open(file);
    expect(auth.authenticate(key)?.accountId).toBe('acme');

    writeFileSync(file, '{"version": 1, "keys": [ broken');
    await eventually('the bad file is reported', () => logger.error.mock.calls.length > 0);
    expect(logger.error).toHaveBeenCalledWith('key file not reloaded; keeping the previous keys', {
      file,
      error: expect.stringContaining(`${file}: is not valid JSON`),
      keys: 1,
    });
    expect(auth.authenticate(key)?.accountId).toBe('acme');

    writeFileSync(file, JSON.stringify({ version: 1, keys: [] }));
    await eventually('the fixed file is loaded', () => auth.authenticate(key) === undefined);
  });

  it('keeps the last good keys and logs an error when the file is deleted, and loads it again when it comes back', async () => {
    const file = tempKeyFile();
    const { key, record } = await createKey(file, { account: 'acme', name: 'kept' });
    const { auth, logger } = await open(file);
    expect(auth.authenticate(key)?.accountId).toBe('acme');

    rmSync(file);
    await eventually('the missing file is reported', () => logger.error.mock.calls.length > 0);
    expect(logger.error).toHaveBeenCalledWith('key file missing; keeping the last good keys', { file, keys: 1 });
    // Several reload intervals later the key still works.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5));
    expect(auth.authenticate(key)?.accountId).toBe('acme');
    expect(logger.error).toHaveBeenCalledTimes(1);

    writeFileSync(file, JSON.stringify({ version: 1, keys: [{ ...record, revokedAt: new Date().toISOString() }] }));
    await eventually('the file that came back is loaded', () => auth.authenticate(key) === undefined);
  });

  it('applies a file that lists no keys, with a warning', async () => {
    const file = tempKeyFile();
    const { key } = await createKey(file, { account: 'acme', name: 'n' });
    const { auth, logger } = await open(file);
    expect(auth.authenticate(key)).toBeDefined();
    writeFileSync(file, JSON.stringify({ version: 1, keys: [] }));
    await eventually('the key is refused', () => auth.authenticate(key) === undefined);
    await eventually('the empty file is reported', () => logger.warn.mock.calls.length > 0);
    expect(logger.warn).toHaveBeenCalledWith('key file holds no keys; every account key is refused', { file });
    expect(logger.error).not.toHaveBeenCalled();
  });

  it('warns at start about a file that lists no keys', async () => {
    const file = tempKeyFile();
    await createKey(file, { account: 'acme', name: 'n' });
    writeFileSync(file, JSON.stringify({ version: 1, keys: [] }));
    const { ring, logger } = await open(file);
    expect(ring.keys()).toEqual([]);
    expect(logger.warn).toHaveBeenCalledWith('key file holds no keys; every account key is refused', { file });
  });

  it('refuses to open on a file it cannot read', async () => {
    const file = tempKeyFile();
    await createKey(file, { account: 'acme', name: 'n' });
    writeFileSync(file, '{"version": 2, "keys": []}');
    await expect(openKeyRing({ file, reloadIntervalMs: INTERVAL_MS, logger: recordingLogger() })).rejects.toThrow(`${file}: unknown version 2`);
  });

  it('reports no reload while the file stays missing', async () => {
    const { ring, logger } = await open(tempKeyFile());
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 4));
    expect(ring.keys()).toEqual([]);
    expect(logger.info).not.toHaveBeenCalled();
    expect(logger.warn).not.toHaveBeenCalled();
    expect(logger.error).not.toHaveBeenCalled();
  });

  it('stops reloading once closed', async () => {
    const file = tempKeyFile();
    const { ring, auth, logger } = await open(file);
    ring.close();
    const { key } = await createKey(file, { account: 'acme', name: 'n' });
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 6));
    expect(auth.authenticate(key)).toBeUndefined();
    expect(logger.info).not.toHaveBeenCalled();
  });
});
