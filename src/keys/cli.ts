import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config';
import { nearestAccounts, warehouseAccountCheck, type AccountCheck, type AccountRows } from './accounts';
import { ACCOUNT_ID_PATTERN, createKey, isScope, KeyFileError, KeyInputError, keyStatus, readKeyFile, revokeKey, SCOPES, type KeyRecord } from './store';

const USAGE = `Usage: npm run keys -- <command>

Commands (on the key file API_KEYS_FILE, default data/api-keys.json):
  create --account <id> --name <name> [--expires-in-days <n>] [--scope <scope>]... [--force]
                      create a key and print it; it is shown this once only
                      (scopes: ${SCOPES.join(', ')}; default: all of them).
                      Refused when the account has no rows in the warehouse, or
                      when that cannot be checked (chDB's directory is held by
                      the running service); --force creates it unchecked
  list [--json]       list keys (never the keys themselves)
  revoke <id>         revoke a key; the running service drops it within API_KEYS_RELOAD_MS
  help                show this text
`;

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_EXPIRY_DAYS = 3650;

export interface KeysCliIo {
  file: string;
  /** Whether the account of a new key has rows (see accounts.ts). */
  accounts: AccountCheck;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  now?: () => Date;
}

class UsageError extends Error {}

/** `npm run keys -- …`, returning the exit code: 0 done, 1 failed, 2 bad usage. */
export async function runKeysCli(argv: string[], io: KeysCliIo): Promise<number> {
  const now = io.now ?? (() => new Date());
  try {
    const [command, ...args] = argv;
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(USAGE);
        return 0;
      case 'create':
        return await create(args, io, now());
      case 'list':
        return await list(args, io, now());
      case 'revoke':
        return await revoke(args, io, now());
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    // parseArgs reports bad options with an ERR_PARSE_ARGS_* code; checked by code because
    // Node's own errors may come from another realm (as under jest), where instanceof fails.
    const parseError = typeof err === 'object' && err !== null && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (err instanceof UsageError || err instanceof KeyInputError || parseError) {
      io.stderr(`error: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof KeyFileError) {
      io.stderr(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function create(args: string[], io: KeysCliIo, now: Date): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      'expires-in-days': { type: 'string' },
      scope: { type: 'string', multiple: true },
      force: { type: 'boolean', default: false },
    },
  });
  if (values.account === undefined) throw new UsageError('create needs --account <id>');
  if (values.name === undefined) throw new UsageError('create needs --name <name>');
  let expiresAt: Date | null = null;
  const days = values['expires-in-days'];
  if (days !== undefined) {
    if (!/^\d+$/.test(days) || Number(days) < 1 || Number(days) > MAX_EXPIRY_DAYS) {
      throw new UsageError(`--expires-in-days ${JSON.stringify(days)}: expected a whole number of days from 1 to ${MAX_EXPIRY_DAYS}`);
    }
    expiresAt = new Date(now.getTime() + Number(days) * DAY_MS);
  }
  const scopes = values.scope;
  if (scopes !== undefined && !scopes.every(isScope)) {
    const unknown = scopes.find((scope) => !isScope(scope));
    throw new UsageError(`--scope ${JSON.stringify(unknown)}: expected one of ${SCOPES.join(', ')}`);
  }

  if (!values.force && ACCOUNT_ID_PATTERN.test(values.account)) {
    const refusal = accountRefusal(values.account, await io.accounts(values.account));
    if (refusal !== undefined) {
      io.stderr(`error: ${refusal}\n`);
      return 1;
    }
  }
  const { key, record } = await createKey(io.file, { account: values.account, name: values.name, expiresAt, scopes }, now);
  io.stdout(
    `Created key ${record.id}\n` +
      `  account: ${record.account}\n` +
      `  name:    ${record.name}\n` +
      `  expires: ${record.expiresAt ?? 'never'}\n` +
      `  scopes:  ${record.scopes.join(', ')}\n\n` +
      `${key}\n\n` +
      `Store this key now: it will not be shown again.\n`,
  );
  return 0;
}

/** Why a key for `account` is not created without --force, or undefined when it has rows. */
function accountRefusal(account: string, rows: AccountRows): string | undefined {
  const force = 'Pass --force to create the key anyway (for an account whose data is not loaded yet).';
  switch (rows.status) {
    case 'has-rows':
      return undefined;
    case 'unchecked':
      return (
        `could not check that account ${JSON.stringify(account)} has rows in the warehouse: ${rows.reason}\n` +
        'The embedded engine (chDB) lets one process at a time open CHDB_DATA_DIR, so while the service runs on it ' +
        'the account cannot be checked from here: stop the service, or check the account yourself. ' +
        force
      );
    case 'no-rows': {
      const accounts = rows.known.map((known) => known.account);
      if (accounts.length === 0) {
        return `account ${JSON.stringify(account)} has no rows: the warehouse holds no account's rows yet (load the data first). ${force}`;
      }
      const nearest = nearestAccounts(account, rows.known);
      const shown = accounts.length <= 20 ? accounts.join(', ') : `${accounts.slice(0, 20).join(', ')}, … (${accounts.length} in all)`;
      return (
        `account ${JSON.stringify(account)} has no rows in the warehouse, so a key for it would read nothing.` +
        (nearest.length > 0 ? ` Did you mean ${nearest.map((name) => JSON.stringify(name)).join(' or ')}?` : '') +
        `\nAccounts with rows: ${shown}.\n${force}`
      );
    }
  }
}

async function list(args: string[], io: KeysCliIo, now: Date): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  const records = await readKeyFile(io.file);
  if (values.json) {
    io.stdout(`${JSON.stringify(records.map(withoutHash), null, 2)}\n`);
    return 0;
  }
  if (records.length === 0) {
    io.stdout('No keys.\n');
    return 0;
  }
  const header = ['ID', 'PREFIX', 'ACCOUNT', 'NAME', 'CREATED', 'EXPIRES', 'STATUS', 'SCOPES'];
  const rows = records.map((record) => [
    record.id,
    record.prefix,
    record.account,
    record.name,
    record.createdAt,
    record.expiresAt ?? 'never',
    keyStatus(record, now),
    record.scopes.join(','),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    `${cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd()}\n`;
  io.stdout([header, ...rows].map(line).join(''));
  return 0;
}

async function revoke(args: string[], io: KeysCliIo, now: Date): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  if (positionals.length !== 1) throw new UsageError('revoke needs exactly one key id');
  const id = positionals[0];
  const result = await revokeKey(io.file, id, now);
  switch (result.status) {
    case 'unknown':
      io.stderr(`error: no key with id ${JSON.stringify(id)} in ${io.file}\n`);
      return 1;
    case 'already-revoked':
      io.stdout(`Key ${id} was already revoked at ${result.record.revokedAt}.\n`);
      return 0;
    case 'revoked':
      io.stdout(`Revoked key ${id} (account ${result.record.account}, ${result.record.name}).\n`);
      return 0;
  }
}

function withoutHash({ hash: _hash, ...rest }: KeyRecord): Omit<KeyRecord, 'hash'> {
  return rest;
}

async function main(): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
  return runKeysCli(process.argv.slice(2), {
    file: config.keys.file,
    accounts: warehouseAccountCheck(config.warehouse),
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
  });
}

// Imported by tests, which call runKeysCli; run as `node dist/keys/cli.js`, it is the CLI.
if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
