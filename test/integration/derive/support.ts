import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ddlStatements } from '../../../src/warehouse/ddl';
import { deriveDownloadsSql } from '../../../src/warehouse/derive/downloads';
import type { DownloadRuleSettings } from '../../../src/warehouse/derive/rules';
import { loadUserAgents, readUserAgentLists } from '../../../src/warehouse/derive/user-agents';
import type { Oracle } from '../support/service';

/** The shared conformance folder: ../shared/conformance beside the repository (one level further up from a git worktree). */
const REPOSITORY = path.resolve(__dirname, '..', '..', '..');
export const CONFORMANCE_DIR = [path.resolve(REPOSITORY, '..'), path.resolve(REPOSITORY, '..', '..')]
  .map((parent) => path.join(parent, 'shared', 'conformance'))
  .find((candidate) => existsSync(candidate))!;

export function vectors<T>(relative: string): T {
  return JSON.parse(readFileSync(path.join(CONFORMANCE_DIR, relative), 'utf8')) as T;
}

/** The OPAWG list's src/ folder, what USER_AGENTS_DIR names to override the built-in set. */
export const OPAWG_DIR = path.join(CONFORMANCE_DIR, 'user-agents-v2', 'src');
/** Its files as they are, examples included. */
export const OPAWG_LISTS = readUserAgentLists(OPAWG_DIR);
/** The set the derivation tests classify by: the OPAWG list, through the override, as the published vectors expect. */
export const USER_AGENTS = loadUserAgents(OPAWG_DIR);

/** One logged request as a pipeline would insert it into podcast_events. */
export interface Request {
  time: string;
  ip: string;
  method?: string;
  status?: number;
  url: string;
  userAgent?: string;
  referer?: string;
  range?: string;
}

export interface Download {
  ts: string;
  ip: string;
  url: string;
  raw_ua: string;
  referer: string;
  tags: string;
}

const DATABASE = `derive_${process.pid}`;
let created = false;

/** The database the derivations run in, created by the first and dropped once the suite is done with it. */
export async function dropDeriveDatabase(oracle: Oracle): Promise<void> {
  if (created) await oracle.command(`DROP DATABASE IF EXISTS ${DATABASE} SYNC`);
  created = false;
}

/**
 * Inserts the requests into podcast_events of an empty database and derives
 * downloads with the warehouse's statement, over the requests' whole span.
 * One database for all cases, emptied before each (TRUNCATE, 20 ms): creating
 * one per case was 0.2-0.7 s of each case's 1-3 s.
 */
export async function derive(oracle: Oracle, requests: Request[], settings: DownloadRuleSettings): Promise<Download[]> {
  const database = DATABASE;
  if (!created) {
    for (const statement of ddlStatements(database)) await oracle.command(statement);
    created = true;
  }
  // Emptied first, so what a failed case left is gone.
  await oracle.command(`TRUNCATE ALL TABLES FROM ${database}`);
  const rows = requests.map((r) =>
    JSON.stringify({
      account_id: 'vectors',
      request_id: '00000000-0000-4000-8000-000000000000',
      ts: Math.floor(Date.parse(r.time) / 1000),
      ip: r.ip,
      ip4: /^\d+\.\d+\.\d+\.\d+$/.test(r.ip) ? r.ip : '0.0.0.0',
      method: r.method ?? 'GET',
      status: r.status ?? 200,
      url: r.url,
      raw_ua: r.userAgent ?? 'test-agent',
      referer: r.referer ?? '',
      byte_range: r.range ?? '',
    }),
  );
  if (rows.length > 0) {
    await oracle.command(`INSERT INTO ${database}.podcast_events (account_id, request_id, ts, ip, ip4, method, status, url, raw_ua, referer, byte_range)
      FORMAT JSONEachRow ${rows.join('\n')}`);
  }
  const times = requests.map((r) => Math.floor(Date.parse(r.time) / 1000));
  await oracle.command(
    deriveDownloadsSql({
      database,
      settings,
      userAgents: USER_AGENTS,
      from: Math.min(...times),
      to: Math.max(...times) + 1,
    }),
  );
  return await oracle.rows<Download>(`
    SELECT formatDateTime(ts, '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS ts, IPv6NumToString(ip) AS ip, url, raw_ua, referer, tags
    FROM ${database}.downloads ORDER BY ts, ip, url`);
}
