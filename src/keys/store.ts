import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { generateKey, hashKey } from './key';

/**
 * The key file: `{ "version": 1, "keys": [KeyRecord…] }`, hashes only. The CLI
 * writes it and the running service reads it (see ring.ts). Every write
 * replaces the whole file by rename, so a reader sees the old or the new file,
 * never half of one. Two CLI runs at the same moment could still lose one of
 * the changes (the later rename wins); keys are created and revoked by hand,
 * rarely enough that no lock is worth its stale-lock problems.
 */

export const SCOPES = ['data:meta', 'data:load'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return (SCOPES as readonly unknown[]).includes(value);
}

export const ACCOUNT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

export interface KeyRecord {
  id: string;
  prefix: string;
  /** SHA-256 of the key, hex; the key itself is never stored. */
  hash: string;
  account: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  scopes: Scope[];
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** The key file cannot be read, parsed or written; the message names the file. */
export class KeyFileError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'KeyFileError';
  }
}

/** A key cannot be created with what was asked for; the message says why. */
export class KeyInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyInputError';
  }
}

const FILE_VERSION = 1;
const NAME_MAX_LENGTH = 100;
/** What listings show so people can recognize a key: `pak_` and 8 characters. */
const DISPLAY_PREFIX_LENGTH = 12;
const RECORD_FIELDS = ['id', 'prefix', 'hash', 'account', 'name', 'createdAt', 'expiresAt', 'revokedAt', 'scopes'];

export function keyStatus(record: KeyRecord, now: Date): KeyStatus {
  if (record.revokedAt !== null) return 'revoked';
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now.getTime()) return 'expired';
  return 'active';
}

/** All records, in creation order; a missing file holds none. */
export async function readKeyFile(file: string): Promise<KeyRecord[]> {
  return (await readKeyFileIfPresent(file)) ?? [];
}

/** All records, in creation order, or undefined when there is no file. */
export async function readKeyFileIfPresent(file: string): Promise<KeyRecord[] | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw new KeyFileError(file, `cannot be read (${describe(err)})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new KeyFileError(file, `is not valid JSON (${describe(err)})`);
  }
  if (!isObject(data)) throw new KeyFileError(file, `expected {"version": ${FILE_VERSION}, "keys": [...]}`);
  if (data.version !== FILE_VERSION) {
    throw new KeyFileError(file, `unknown version ${JSON.stringify(data.version)} (this service reads version ${FILE_VERSION})`);
  }
  if (!Array.isArray(data.keys)) throw new KeyFileError(file, 'expected "keys" to be an array');
  const ids = new Set<string>();
  return data.keys.map((value: unknown, index: number) => {
    const problem = recordProblem(value);
    if (problem !== undefined) throw new KeyFileError(file, `keys[${index}]: ${problem}`);
    const record = value as KeyRecord;
    if (ids.has(record.id)) throw new KeyFileError(file, `keys[${index}]: duplicate id ${record.id}`);
    ids.add(record.id);
    return record;
  });
}

/** Replaces the file atomically: temp file in the same directory, fsync, rename. */
export async function writeKeyFile(file: string, keys: readonly KeyRecord[]): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(dir, { recursive: true });
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify({ version: FILE_VERSION, keys }, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw new KeyFileError(file, `cannot be written (${describe(err)})`);
  }
}

export interface NewKey {
  account: string;
  name: string;
  expiresAt?: Date | null;
  scopes?: readonly Scope[];
}

/** Adds a key; the returned `key` is the only copy of it there will ever be. */
export async function createKey(file: string, input: NewKey, now = new Date()): Promise<{ key: string; record: KeyRecord }> {
  const problem = newKeyProblem(input, now);
  if (problem !== undefined) throw new KeyInputError(problem);
  const keys = await readKeyFile(file);
  const key = generateKey();
  const record: KeyRecord = {
    id: `key_${randomBytes(8).toString('hex')}`,
    prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
    hash: hashKey(key),
    account: input.account,
    name: input.name,
    createdAt: now.toISOString(),
    expiresAt: input.expiresAt?.toISOString() ?? null,
    revokedAt: null,
    scopes: SCOPES.filter((scope) => input.scopes?.includes(scope) ?? true),
  };
  await writeKeyFile(file, [...keys, record]);
  return { key, record };
}

export type RevokeResult = { status: 'revoked' | 'already-revoked'; record: KeyRecord } | { status: 'unknown' };

/** Revoked keys stay in the file, so listings can still say what a key was. */
export async function revokeKey(file: string, id: string, now = new Date()): Promise<RevokeResult> {
  const keys = await readKeyFile(file);
  const found = keys.find((record) => record.id === id);
  if (found === undefined) return { status: 'unknown' };
  if (found.revokedAt !== null) return { status: 'already-revoked', record: found };
  const record = { ...found, revokedAt: now.toISOString() };
  await writeKeyFile(
    file,
    keys.map((other) => (other === found ? record : other)),
  );
  return { status: 'revoked', record };
}

function newKeyProblem(input: NewKey, now: Date): string | undefined {
  if (!ACCOUNT_ID_PATTERN.test(input.account)) {
    return `account ${JSON.stringify(input.account)}: expected 2 to 63 lowercase letters, digits and hyphens, starting with a letter or digit`;
  }
  const nameProblem = nameProblemOf(input.name);
  if (nameProblem !== undefined) return `name ${JSON.stringify(input.name)}: ${nameProblem}`;
  if (input.expiresAt != null && !(input.expiresAt.getTime() > now.getTime())) return 'expiry: expected a time in the future';
  if (input.scopes !== undefined) {
    if (input.scopes.length === 0 || !input.scopes.every(isScope)) return `scopes: expected one or more of ${SCOPES.join(', ')}`;
  }
  return undefined;
}

function recordProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'expected an object';
  const extra = Object.keys(value).filter((field) => !RECORD_FIELDS.includes(field));
  if (extra.length > 0) return `unknown field ${extra[0]}`;
  const { id, prefix, hash, account, name, createdAt, expiresAt, revokedAt, scopes } = value;
  if (typeof id !== 'string' || !/^key_[0-9a-f]{16}$/.test(id)) return 'id: expected key_ and 16 hex digits';
  if (typeof prefix !== 'string' || !/^pak_[0-9A-Za-z]{8}$/.test(prefix)) return 'prefix: expected pak_ and 8 base62 characters';
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return 'hash: expected 64 lowercase hex digits (SHA-256)';
  if (typeof account !== 'string' || !ACCOUNT_ID_PATTERN.test(account)) return `account: expected to match ${ACCOUNT_ID_PATTERN}`;
  if (typeof name !== 'string') return 'name: expected a string';
  const nameProblem = nameProblemOf(name);
  if (nameProblem !== undefined) return `name: ${nameProblem}`;
  if (!isIsoTime(createdAt)) return 'createdAt: expected an ISO 8601 time';
  if (expiresAt !== null && !isIsoTime(expiresAt)) return 'expiresAt: expected an ISO 8601 time or null';
  if (revokedAt !== null && !isIsoTime(revokedAt)) return 'revokedAt: expected an ISO 8601 time or null';
  const validScopes = Array.isArray(scopes) && scopes.length > 0 && new Set(scopes).size === scopes.length && scopes.every(isScope);
  if (!validScopes) return `scopes: expected distinct values from ${SCOPES.join(', ')}`;
  return undefined;
}

// Names end up in a one-line-per-key table, so control characters (newlines included) are refused.
function nameProblemOf(name: string): string | undefined {
  if (name.trim() === '' || name.length > NAME_MAX_LENGTH || /\p{Cc}/u.test(name)) {
    return `expected 1 to ${NAME_MAX_LENGTH} characters, not blank, without control characters`;
  }
  return undefined;
}

// Exactly what Date#toISOString writes, which is all this module ever writes.
function isIsoTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const time = Date.parse(value);
  return Number.isFinite(time) && new Date(time).toISOString() === value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Duck-typed rather than instanceof: errors from Node's internals can come from another realm (as under jest).
function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}

function describe(err: unknown): string {
  return typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err);
}
