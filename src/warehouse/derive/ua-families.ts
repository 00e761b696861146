import { readFileSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { load } from 'js-yaml';
import { EVERY_NODE_ENGINE } from '../ddl';
import { onClusterSql, type Layout } from '../layout';
import { quoteIdentifier, sqlLiteral } from '../sql';

/**
 * Browser families (uaFamily of the Links cubes) by uap-core's user-agent
 * parsers, in a ClickHouse regexp_tree dictionary: the same on chDB and a
 * server, evaluated where the rows are. uap-core's rules are ordered (the
 * first that matches names the family) and their family may name a group
 * of the match (`$1`), as regexp_tree's nodes are and do.
 */
const UAP_FILE = require.resolve('uap-core/regexes.yaml');
const UAP_VERSION = (JSON.parse(readFileSync(require.resolve('uap-core/package.json'), 'utf8')) as { version: string }).version;

interface UapParser {
  regex: string;
  regex_flag?: string;
  family_replacement?: string;
}

const TABLE = 'ua_family_rules';
const DICTIONARY = 'ua_families';

/** The family of a user agent (SQL over `ua`): uap-core's name, `Other` when no rule matches. */
export function uaFamilySql(database: string, ua: string): string {
  return `dictGetOrDefault(${sqlLiteral(`${database}.${DICTIONARY}`)}, 'family', ${ua}, 'Other')`;
}

/**
 * Makes the rules table and its dictionary of the installed uap-core's
 * rules, unless they are there already (the table's comment names the
 * version): the rules are written once per warehouse and version; each
 * derivation asks again (two small statements), since a database can be
 * dropped and made anew under a running process. On a cluster every node
 * holds the rules and the dictionary: a query over the Distributed tables
 * looks families up on the shards.
 */
export async function ensureUaFamilies(client: ClickHouseClient, layout: Layout): Promise<void> {
  const { database } = layout;
  const db = quoteIdentifier(database);
  const onCluster = onClusterSql(layout);
  const version = `uap-core ${UAP_VERSION}`;
  const found = await (
    await client.query({
      query: 'SELECT comment FROM system.tables WHERE database = {database:String} AND name = {table:String}',
      query_params: { database, table: TABLE },
      format: 'JSONEachRow',
    })
  ).json<{ comment: string }>();
  if (found[0]?.comment !== version) {
    const parsers = (load(readFileSync(UAP_FILE, 'utf8')) as { user_agent_parsers: UapParser[] }).user_agent_parsers;
    const rows = parsers.map(
      (p, i) => `(${i + 1}, 0, ${sqlLiteral(`${p.regex_flag === 'i' ? '(?i)' : ''}${p.regex}`)}, ['family'], [${sqlLiteral(p.family_replacement ?? '$1')}])`,
    );
    await client.command({ query: `DROP DICTIONARY IF EXISTS ${db}.${DICTIONARY}${onCluster}` });
    await client.command({ query: `DROP TABLE IF EXISTS ${db}.${TABLE}${onCluster} SYNC` });
    await client.command({
      query: `CREATE TABLE ${db}.${TABLE}${onCluster} (id UInt64, parent_id UInt64, regexp String, keys Array(String), values Array(String))
        ENGINE = ${layout.cluster === undefined ? 'MergeTree' : EVERY_NODE_ENGINE} ORDER BY id COMMENT ${sqlLiteral(version)}`,
    });
    await client.command({ query: `INSERT INTO ${db}.${TABLE} VALUES ${rows.join(', ')}` });
    // Every node's dictionary loads its rules once (LIFETIME 0): they are on every node before it can.
    if (layout.cluster !== undefined) await client.command({ query: `SYSTEM SYNC REPLICA${onCluster} ${db}.${TABLE}` });
  }
  await client.command({
    query: `CREATE DICTIONARY IF NOT EXISTS ${db}.${DICTIONARY}${onCluster} (regexp String, family String DEFAULT 'Other') PRIMARY KEY regexp
      SOURCE(CLICKHOUSE(DB ${sqlLiteral(database)} TABLE ${sqlLiteral(TABLE)})) LIFETIME(0) LAYOUT(regexp_tree)`,
  });
}
