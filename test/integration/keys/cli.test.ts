import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { looksLikeKey } from '../../../src/keys/key';
import { readKeyFile } from '../../../src/keys/store';
import { DEMO_ACCOUNTS } from '../../../src/warehouse/reference-data';
import { cli, tempKeyFile, testWarehouse } from './support';

const NOW = new Date('2026-11-22T10:00:00.000Z');

/** Creates a key through the CLI and returns it with its id, as printed. */
async function createThroughCli(file: string, args: string[], now = NOW): Promise<{ key: string; id: string; stdout: string }> {
  const { code, stdout, stderr } = await cli(file, ['create', ...args], now);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const keys = stdout.match(/pak_[0-9A-Za-z]+/g) ?? [];
  const ids = stdout.match(/key_[0-9a-f]{16}/g) ?? [];
  expect({ keys: keys.length, ids: ids.length }).toEqual({ keys: 1, ids: 1 });
  return { key: keys[0] ?? '', id: ids[0] ?? '', stdout };
}

describe('keys create', () => {
  it('prints the new key once, with its id, account, name, expiry, scopes and a warning, and stores only its hash', async () => {
    const file = tempKeyFile();
    const { key, id, stdout } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'CI pipeline']);

    expect(looksLikeKey(key)).toBe(true);
    expect(stdout).toContain(`Created key ${id}`);
    expect(stdout).toMatch(/account: +northwind-audio\n/);
    expect(stdout).toMatch(/name: +CI pipeline\n/);
    expect(stdout).toMatch(/expires: +never\n/);
    expect(stdout).toMatch(/scopes: +data:meta, data:load\n/);
    expect(stdout).toMatch(new RegExp(`^${key}$`, 'm'));
    expect(stdout).toContain('it will not be shown again');
    expect(readFileSync(file, 'utf8')).not.toContain(key);
    expect((await readKeyFile(file)).map((record) => record.id)).toEqual([id]);
  });

  it('sets the expiry from --expires-in-days and the scopes from --scope', async () => {
    const file = tempKeyFile();
    const { stdout } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'n', '--expires-in-days', '30', '--scope', 'data:meta']);
    expect(stdout).toMatch(/expires: +2026-12-22T10:00:00.000Z\n/);
    const [record] = await readKeyFile(file);
    expect(record.expiresAt).toBe('2026-12-22T10:00:00.000Z');
    expect(record.scopes).toEqual(['data:meta']);
  });

  it.each([
    ['no --account', ['--name', 'n'], /create needs --account/],
    ['no --name', ['--account', 'northwind-audio'], /create needs --name/],
    ['an account id with capitals', ['--account', 'Acme', '--name', 'n'], /account "Acme": expected 2 to 63 lowercase letters/],
    ['an unknown option', ['--account', 'northwind-audio', '--name', 'n', '--owner', 'x'], /--owner/],
    ['a positional argument', ['--account', 'northwind-audio', '--name', 'n', 'extra'], /extra/],
    ['zero days', ['--account', 'northwind-audio', '--name', 'n', '--expires-in-days', '0'], /--expires-in-days "0": expected a whole number/],
    ['a fraction of days', ['--account', 'northwind-audio', '--name', 'n', '--expires-in-days', '1.5'], /--expires-in-days "1.5"/],
    [
      'an unknown scope',
      ['--account', 'northwind-audio', '--name', 'n', '--scope', 'data:write'],
      /--scope "data:write": expected one of data:meta, data:load/,
    ],
  ])('answers %s with a usage error, exit 2, and creates nothing', async (_what, args, message) => {
    const file = tempKeyFile();
    const { code, stdout, stderr } = await cli(file, ['create', ...args], NOW);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr).toContain('Usage: npm run keys');
    expect(await readKeyFile(file)).toEqual([]);
  });
});

describe('keys create: an account without rows', () => {
  // The demo generator's accounts, each of which owns rows of the suite's data.
  const accounts = [...DEMO_ACCOUNTS].sort();

  it('is refused, exit 1, naming the nearest account and those with rows, and creates nothing', async () => {
    const file = tempKeyFile();
    const { code, stdout, stderr } = await cli(file, ['create', '--account', 'nortwind-audio', '--name', 'n'], NOW);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toContain(
      'error: account "nortwind-audio" has no rows in the warehouse, so a key for it would read nothing. Did you mean "northwind-audio"?',
    );
    expect(stderr).toContain(`Accounts with rows: ${accounts.join(', ')}.`);
    expect(stderr).toContain('Pass --force');
    expect(existsSync(file)).toBe(false);
  });

  it('suggests nothing for a name unlike any account', async () => {
    const { code, stderr } = await cli(tempKeyFile(), ['create', '--account', 'zz-nobody', '--name', 'n'], NOW);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: account "zz-nobody" has no rows in the warehouse, so a key for it would read nothing\.\nAccounts with rows: /);
  });

  it('is created with --force (an account whose data is not loaded yet)', async () => {
    const file = tempKeyFile();
    const { code, stderr } = await cli(file, ['create', '--account', 'nortwind-audio', '--name', 'n', '--force'], NOW);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect((await readKeyFile(file)).map((record) => record.account)).toEqual(['nortwind-audio']);
  });

  it("has rows in the suite's data for every demo account (the oracle above)", async () => {
    const client = (await testWarehouse()).client();
    const result = await client.query({ query: 'SELECT DISTINCT account_id FROM downloads ORDER BY account_id', format: 'JSONEachRow' });
    expect((await result.json<{ account_id: string }>()).map((row) => row.account_id)).toEqual(accounts);
  });
});

describe('keys list', () => {
  it('shows a table with the status of every key and never a key', async () => {
    const file = tempKeyFile();
    const active = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard']);
    const revoked = await createThroughCli(file, ['--account', 'harbor-lane-media', '--name', 'old laptop']);
    const expiring = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'trial', '--expires-in-days', '1', '--scope', 'data:meta']);
    expect((await cli(file, ['revoke', revoked.id], NOW)).code).toBe(0);

    const { code, stdout } = await cli(file, ['list'], new Date(NOW.getTime() + 2 * 24 * 60 * 60 * 1000));
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['ID', 'PREFIX', 'ACCOUNT', 'NAME', 'CREATED', 'EXPIRES', 'STATUS', 'SCOPES']);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(
      new RegExp(`^${active.id} +${active.key.slice(0, 12)} +northwind-audio +dashboard +2026-11-22T10:00:00.000Z +never +active +data:meta,data:load$`),
    );
    expect(lines[2]).toMatch(new RegExp(`^${revoked.id} +${revoked.key.slice(0, 12)} +harbor-lane-media +old laptop .* revoked `));
    expect(lines[3]).toMatch(new RegExp(`^${expiring.id} .* 2026-11-23T10:00:00.000Z +expired +data:meta$`));
    for (const { key } of [active, revoked, expiring]) expect(stdout).not.toContain(key.slice(12, 30));
  });

  it('--json gives the records without their hashes', async () => {
    const file = tempKeyFile();
    const { key, id } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard']);
    const { code, stdout } = await cli(file, ['list', '--json'], NOW);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      {
        id,
        prefix: key.slice(0, 12),
        account: 'northwind-audio',
        name: 'dashboard',
        createdAt: NOW.toISOString(),
        expiresAt: null,
        revokedAt: null,
        scopes: ['data:meta', 'data:load'],
      },
    ]);
    const [record] = await readKeyFile(file);
    expect(stdout).not.toContain(record.hash);
    expect(stdout).not.toContain(key.slice(12));
  });

  it('says so when there are no keys', async () => {
    expect(await cli(tempKeyFile(), ['list'], NOW)).toEqual({ code: 0, stdout: 'No keys.\n', stderr: '' });
    expect(await cli(tempKeyFile(), ['list', '--json'], NOW)).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('fails with exit 1 and the file and problem when the file is invalid', async () => {
    const file = tempKeyFile();
    await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'n']);
    writeFileSync(file, '{"version": 3, "keys": []}');
    const { code, stdout, stderr } = await cli(file, ['list'], NOW);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(`error: ${file}: unknown version 3 (this service reads version 1)\n`);
  });
});

describe('keys revoke', () => {
  it('revokes a key, says so again when it already is, and fails on an unknown id', async () => {
    const file = tempKeyFile();
    const { id } = await createThroughCli(file, ['--account', 'northwind-audio', '--name', 'dashboard']);
    const later = new Date(NOW.getTime() + 60_000);

    expect(await cli(file, ['revoke', id], later)).toEqual({ code: 0, stdout: `Revoked key ${id} (account northwind-audio, dashboard).\n`, stderr: '' });
    expect((await readKeyFile(file))[0].revokedAt).toBe(later.toISOString());

    expect(await cli(file, ['revoke', id], NOW)).toEqual({
      code: 0,
      stdout: `Key ${id} was already revoked at ${later.toISOString()}.\n`,
      stderr: '',
    });
    expect((await readKeyFile(file))[0].revokedAt).toBe(later.toISOString());

    const unknown = await cli(file, ['revoke', 'key_0000000000000000'], NOW);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: `error: no key with id "key_0000000000000000" in ${file}\n` });
  });

  it.each([[[]], [['key_a', 'key_b']]])('needs exactly one id (%p)', async (ids) => {
    const { code, stderr } = await cli(tempKeyFile(), ['revoke', ...ids], NOW);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^error: revoke needs exactly one key id\n\nUsage: npm run keys/);
  });
});

describe('keys usage', () => {
  it.each([[[]], [['help']], [['--help']]])('prints the usage for %p', async (argv) => {
    const { code, stdout, stderr } = await cli(tempKeyFile(), argv, NOW);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Usage: npm run keys -- <command>/);
    for (const command of ['create', 'list', 'revoke', 'help']) expect(stdout).toMatch(new RegExp(`^  ${command}`, 'm'));
  });

  it('answers an unknown command with a usage error and exit 2', async () => {
    const { code, stdout, stderr } = await cli(tempKeyFile(), ['delete', 'key_0000000000000000'], NOW);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^error: unknown command "delete"\n\nUsage: npm run keys/);
  });
});
