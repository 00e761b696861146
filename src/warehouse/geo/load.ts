import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../log';
import type { Warehouse } from '../connection';
import { EVERY_NODE_ENGINE } from '../ddl';
import { layoutOf, onClusterSql, type Layout } from '../layout';
import { quoteIdentifier, settingsSql, sqlLiteral } from '../sql';
import { mmdbNetworks } from './mmdb';
import { geoFiles, geoFingerprint, type GeoFiles } from './sources';

/**
 * The IP database in the warehouse: three dictionaries that ClickHouse
 * builds from tables it filled from the database's files, so every lookup
 * (derivation, refresh, demo) is a dictGet inside a statement.
 *
 * - geo_city: IP_TRIE over the city database's networks (prefixes in the
 *   IPv6 space, IPv4 as ::ffff:a.b.c.d/96+n, which is where IP_TRIE looks up
 *   an IPv4 key) → a record number; geo_city_record: record → ISO country
 *   code, city, time zone.
 * - geo_asn: IP_TRIE over the AS ranges, cut into prefixes by ClickHouse
 *   (rangePrefixesSql) → AS number and organisation.
 * - geo_country: ISO code → English name and continent.
 *
 * IP_TRIE is exact for prefixes and answers both families from one
 * dictionary; RANGE_HASHED, the layout for ranges, takes no 128-bit bounds.
 */
export const GEO_TABLES = {
  city: 'geo_city_networks',
  cityRecords: 'geo_city_records',
  asn: 'geo_asn_networks',
  country: 'geo_countries',
  source: 'geo_source',
} as const;
export const GEO_DICTIONARIES = { city: 'geo_city', cityRecords: 'geo_city_record', asn: 'geo_asn', country: 'geo_country' } as const;

/** The tables a load replaces (all but the load log). */
const LOADED_TABLES = ['city', 'cityRecords', 'asn', 'country'] as const;

export interface GeoLoad {
  /** False when the tables already held these files' places (the usual start). */
  loaded: boolean;
  fingerprint: string;
  seconds: number;
  cityNetworks: number;
  asnNetworks: number;
}

const TABLE_DDL: Record<keyof typeof GEO_TABLES, string> = {
  // A prefix names its place by number (record): the trie holds 2.5M prefixes but only about 100,000 distinct places.
  // leaf: a network of the file, no prefix inside it (addresses.ts).
  city: '(prefix String, record UInt64, leaf UInt8) ENGINE = MergeTree ORDER BY tuple()',
  cityRecords: '(record UInt64, country_code LowCardinality(String), city String, timezone LowCardinality(String)) ENGINE = MergeTree ORDER BY record',
  asn: '(prefix String, asn UInt32, org LowCardinality(String)) ENGINE = MergeTree ORDER BY tuple()',
  country: '(Code String, Name String, Continent LowCardinality(String)) ENGINE = MergeTree ORDER BY Code',
  source: "(fingerprint String, loaded_at DateTime('UTC'), city_networks UInt64, asn_networks UInt64) ENGINE = MergeTree ORDER BY tuple()",
};

/**
 * Makes the geo tables and dictionaries hold the places of the configured
 * files. Loading (7 s on a quiet machine, a minute on a busy one) happens
 * only when the files differ from the last load, found by the fingerprint
 * the load recorded; otherwise this costs two statements. `npm start` on
 * chDB and every warehouse command that gives rows places call it first.
 * The dictionaries themselves are built in memory by ClickHouse on their
 * first use after a start (see docs for the figures).
 */
export async function ensureGeo(warehouse: Warehouse, dir: string | undefined, logger?: Logger): Promise<GeoLoad> {
  const files = geoFiles(dir);
  const fingerprint = geoFingerprint(files);
  const client = warehouse.client();
  const db = quoteIdentifier(warehouse.config.database);
  const layout = await layoutOf(client, warehouse.config.database);
  for (const statement of geoObjectStatements(layout)) await client.command({ query: statement });
  const recorded = await client.query({
    query: `SELECT fingerprint, city_networks, asn_networks FROM ${db}.${GEO_TABLES.source} ORDER BY loaded_at DESC LIMIT 1`,
    format: 'JSONEachRow',
  });
  const last = (await recorded.json<{ fingerprint: string; city_networks: string | number; asn_networks: string | number }>())[0];
  if (last?.fingerprint === fingerprint) {
    return { loaded: false, fingerprint, seconds: 0, cityNetworks: Number(last.city_networks), asnNetworks: Number(last.asn_networks) };
  }
  logger?.info('loading the IP database: once per warehouse and version of its files', { files: Object.values(files) });
  const started = performance.now();
  const counts = await loadGeo(client, layout, files, logger);
  await client.command({
    query: `INSERT INTO ${db}.${GEO_TABLES.source} SELECT {fingerprint:String}, now(), {city:UInt64}, {asn:UInt64}`,
    query_params: { fingerprint, city: counts.cityNetworks, asn: counts.asnNetworks },
  });
  const seconds = Math.round(performance.now() - started) / 1000;
  logger?.info('IP database loaded', { seconds, ...counts });
  return { loaded: true, fingerprint, seconds, ...counts };
}

/** Whether a load has filled the geo tables of `database` (ensureGeo records each in geo_source). */
export async function geoLoaded(client: ClickHouseClient, database: string): Promise<boolean> {
  const result = await client.query({
    query: 'SELECT count() AS n FROM system.tables WHERE database = {database:String} AND name = {table:String}',
    query_params: { database, table: GEO_TABLES.source },
    format: 'JSONEachRow',
  });
  if (Number((await result.json<{ n: string | number }>())[0].n) === 0) return false;
  const loads = await client.query({ query: `SELECT count() AS n FROM ${quoteIdentifier(database)}.${GEO_TABLES.source}`, format: 'JSONEachRow' });
  return Number((await loads.json<{ n: string | number }>())[0].n) > 0;
}

/**
 * Builds the IP database's dictionaries in this process's engine now rather
 * than at their first use: ClickHouse builds a dictionary lazily
 * (`dictionaries_lazy_load`), and building geo_city's trie of 2.5M prefixes
 * takes 6 s on a quiet machine (13-45 s for the 5.7M networks it held before), a wait the first import after a start (or any statement
 * reading places) would hold chDB's one statement lane for. The service's
 * start waits for it before it reports ready (docs/guides/operating.md, "After a
 * start"). Nothing is built when no load filled the tables. Resolves with the
 * seconds it took, or undefined when there was nothing to build (no load, or
 * every dictionary already built).
 */
export async function warmGeo(client: ClickHouseClient, database: string): Promise<number | undefined> {
  if (!(await geoLoaded(client, database)) || (await allBuilt(client, database))) return undefined;
  const started = performance.now();
  const name = (dictionary: string) => sqlLiteral(`${database}.${dictionary}`);
  const ip = "tuple(toIPv6('::'))";
  // A lookup of any key makes ClickHouse build the whole dictionary (and wait for it); one that is built answers at once.
  await client
    .query({
      query: `SELECT dictHas(${name(GEO_DICTIONARIES.city)}, ${ip}), dictHas(${name(GEO_DICTIONARIES.cityRecords)}, toUInt64(0)),
      dictHas(${name(GEO_DICTIONARIES.asn)}, ${ip}), dictHas(${name(GEO_DICTIONARIES.country)}, tuple(''))`,
      format: 'JSONEachRow',
    })
    .then((result) => result.json());
  return Math.round(performance.now() - started) / 1000;
}

/** Whether this engine has built every dictionary of the IP database (a start through src/index.ts builds them before the service's own warm-up). */
async function allBuilt(client: ClickHouseClient, database: string): Promise<boolean> {
  const result = await client.query({
    query: "SELECT count() AS n FROM system.dictionaries WHERE database = {database:String} AND name IN {names:Array(String)} AND status = 'LOADED'",
    query_params: { database, names: Object.values(GEO_DICTIONARIES) },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string | number }>())[0].n) === Object.keys(GEO_DICTIONARIES).length;
}

/** warmGeo during a start, logged: a failure is only logged, and the first statement that reads places builds them then. */
export async function warmGeoAtStart(warehouse: Warehouse, logger: Logger): Promise<void> {
  const client = warehouse.client();
  try {
    const seconds = await warmGeo(client, warehouse.config.database);
    if (seconds !== undefined) logger.info('IP database dictionaries built', { seconds });
  } catch (err) {
    logger.error('building the IP database dictionaries at start failed; the first statement that reads places builds them', {
      error: err instanceof Error ? err.message : String(err),
    });
  } finally {
    await client.close();
  }
}

/** A geo table's definition: on a cluster every node holds all of it, so that each node's dictionaries read their own copy. */
function geoTableSql(layout: Layout, ddl: string): string {
  return layout.cluster === undefined ? ddl : ddl.replace('ENGINE = MergeTree', `ENGINE = ${EVERY_NODE_ENGINE}`);
}

/** The geo tables and dictionaries, each made if missing (on a cluster, on every node). */
export function geoObjectStatements(layout: Layout): string[] {
  const { database } = layout;
  const db = quoteIdentifier(database);
  const on = onClusterSql(layout);
  // LIFETIME(0): a dictionary changes only when a load says so (SYSTEM RELOAD DICTIONARY).
  const source = (table: string) => `SOURCE(CLICKHOUSE(DB ${sqlLiteral(database)} TABLE ${sqlLiteral(table)})) LIFETIME(0)`;
  return [
    ...(Object.entries(GEO_TABLES) as [keyof typeof GEO_TABLES, string][]).map(
      ([key, table]) => `CREATE TABLE IF NOT EXISTS ${db}.${table}${on} ${geoTableSql(layout, TABLE_DDL[key])}`,
    ),
    `CREATE DICTIONARY IF NOT EXISTS ${db}.${GEO_DICTIONARIES.city}${on} (prefix String, record UInt64 DEFAULT 0) PRIMARY KEY prefix ${source(GEO_TABLES.city)} LAYOUT(IP_TRIE)`,
    `CREATE DICTIONARY IF NOT EXISTS ${db}.${GEO_DICTIONARIES.cityRecords}${on} (record UInt64, country_code String DEFAULT '', city String DEFAULT '', timezone String DEFAULT '') PRIMARY KEY record ${source(GEO_TABLES.cityRecords)} LAYOUT(HASHED)`,
    `CREATE DICTIONARY IF NOT EXISTS ${db}.${GEO_DICTIONARIES.asn}${on} (prefix String, asn UInt32 DEFAULT 0, org String DEFAULT '') PRIMARY KEY prefix ${source(GEO_TABLES.asn)} LAYOUT(IP_TRIE)`,
    `CREATE DICTIONARY IF NOT EXISTS ${db}.${GEO_DICTIONARIES.country}${on} (Code String, Name String DEFAULT '', Continent String DEFAULT '') PRIMARY KEY Code ${source(GEO_TABLES.country)} LAYOUT(COMPLEX_KEY_HASHED)`,
  ];
}

/**
 * Fills new tables beside the live ones, swaps them in with one EXCHANGE per
 * table and reloads the dictionaries already built, so a lookup never sees
 * half a load.
 */
async function loadGeo(client: ClickHouseClient, layout: Layout, files: GeoFiles, logger?: Logger): Promise<{ cityNetworks: number; asnNetworks: number }> {
  const { database } = layout;
  const on = onClusterSql(layout);
  let stepStarted = performance.now();
  const step = (name: string) => {
    logger?.info('IP database load step', { step: name, seconds: Math.round(performance.now() - stepStarted) / 1000 });
    stepStarted = performance.now();
  };
  const db = quoteIdentifier(database);
  const next = (table: string) => `${db}.${quoteIdentifier(`${table}_next`)}`;
  const stage = (name: string) => `${db}.${quoteIdentifier(`geo_stage_${name}`)}`;
  const stages = {
    networks: '(start UInt128, prefix UInt8, record UInt32, leaf UInt8) ENGINE = MergeTree ORDER BY tuple()',
    records: '(record UInt32, country_code String, city String, timezone String) ENGINE = MergeTree ORDER BY record',
    asn4: '(first UInt32, last UInt32, asn UInt32, org String) ENGINE = MergeTree ORDER BY tuple()',
    asn6: '(first UInt128, last UInt128, asn UInt32, org String) ENGINE = MergeTree ORDER BY tuple()',
  };
  const dropScratch = async () => {
    for (const name of Object.keys(stages)) await client.command({ query: `DROP TABLE IF EXISTS ${stage(name)}${on} SYNC` });
    for (const table of LOADED_TABLES.map((key) => GEO_TABLES[key])) await client.command({ query: `DROP TABLE IF EXISTS ${next(table)}${on} SYNC` });
  };
  await dropScratch();
  // The stages are this node's (filled and read here only; on a cluster the other nodes' stay empty).
  for (const [name, ddl] of Object.entries(stages)) await client.command({ query: `CREATE TABLE ${stage(name)}${on} ${ddl}` });
  for (const key of LOADED_TABLES) await client.command({ query: `CREATE TABLE ${next(GEO_TABLES[key])}${on} ${geoTableSql(layout, TABLE_DDL[key])}` });

  for (const [index, file] of [files.cityIpv4, files.cityIpv6].entries()) {
    const { networkChunks, places } = await mmdbNetworks(await readFile(file));
    // Places are numbered from 1 in each file: the file's index above 32 bits keeps the two files' apart. Place 0 (an
    // address the file has no network for, below a prefix that has one) stays 0, which geo_city_record does not hold.
    const id = `if(record = 0, toUInt64(0), toUInt64(${index}) * 4294967296 + record)`;
    for await (const chunk of networkChunks) await insertText(client, `${stage('networks')} (start, prefix, record, leaf)`, 'TabSeparated', chunk);
    step(`walk and insert ${file}`);
    await client.command({
      query: `INSERT INTO ${next(GEO_TABLES.city)} SELECT concat(toString(toIPv6(start)), '/', toString(prefix)), ${id}, leaf FROM ${stage('networks')}`,
    });
    const lines = [...places].map(([record, r]) => [record, tsv(r.country_code), tsv(r.city), tsv(r.timezone)].join('\t'));
    await insertText(client, `${stage('records')} (record, country_code, city, timezone)`, 'TabSeparated', `${lines.join('\n')}\n`);
    await client.command({ query: `INSERT INTO ${next(GEO_TABLES.cityRecords)} SELECT ${id}, country_code, city, timezone FROM ${stage('records')}` });
    await client.command({ query: `TRUNCATE TABLE ${stage('networks')}${on}` });
    await client.command({ query: `TRUNCATE TABLE ${stage('records')}${on}` });
    step(`prefixes and records of ${file}`);
  }

  await insertText(client, `${stage('asn4')} (first, last, asn, org)`, 'CSV', await readFile(files.asnIpv4, 'utf8'));
  await insertText(client, `${stage('asn6')} (first, last, asn, org)`, 'CSV', await readFile(files.asnIpv6, 'utf8'));
  await client.command({
    query: `INSERT INTO ${next(GEO_TABLES.asn)} ${rangePrefixesSql(
      `SELECT toUInt128(first) + ${IPV4_MAPPED} AS first, toUInt128(last) + ${IPV4_MAPPED} AS last, 32 AS bits, asn, org FROM ${stage('asn4')}
       UNION ALL SELECT first, last, 128 AS bits, asn, org FROM ${stage('asn6')}`,
      ['asn', 'org'],
    )}`,
  });
  step('AS ranges to prefixes');
  await insertText(client, `${next(GEO_TABLES.country)} (Code, Name, Continent)`, 'CSVWithNames', await readFile(files.countries, 'utf8'), {
    input_format_skip_unknown_fields: 1,
  });

  if (layout.cluster !== undefined) {
    // Every node's copy whole before any node swaps it in.
    for (const key of LOADED_TABLES) await client.command({ query: `SYSTEM SYNC REPLICA${on} ${next(GEO_TABLES[key])}` });
  }
  await client.command({
    query: `EXCHANGE TABLES ${LOADED_TABLES.map((key) => GEO_TABLES[key])
      .map((t) => `${db}.${quoteIdentifier(t)} AND ${next(t)}`)
      .join(', ')}${on}`,
  });
  await dropScratch();
  // Only a dictionary this engine has built holds the old tables (LIFETIME(0): until told). One not built reads the
  // new tables at its first use; reloading it here would build it now, and a load is often all a process does
  // (`npm run warehouse -- init`, then exit): geo_city's trie took 17.5 s of a 34.8 s first load on a quiet machine.
  // On a cluster, what the other nodes have built is not known here: every node reloads every dictionary.
  const built =
    layout.cluster !== undefined
      ? Object.values(GEO_DICTIONARIES).map((name) => ({ name }))
      : await client
          .query({
            query: "SELECT name FROM system.dictionaries WHERE database = {database:String} AND name IN {names:Array(String)} AND status != 'NOT_LOADED'",
            query_params: { database, names: Object.values(GEO_DICTIONARIES) },
            format: 'JSONEachRow',
          })
          .then((result) => result.json<{ name: string }>());
  for (const { name } of built) await client.command({ query: `SYSTEM RELOAD DICTIONARY${on} ${db}.${quoteIdentifier(name)}` });
  step('swap, and reload the dictionaries already built');
  const count = async (table: string) => {
    const result = await client.query({ query: `SELECT count() AS n FROM ${db}.${quoteIdentifier(table)}`, format: 'JSONEachRow' });
    return Number((await result.json<{ n: string | number }>())[0].n);
  };
  return { cityNetworks: await count(GEO_TABLES.city), asnNetworks: await count(GEO_TABLES.asn) };
}

/** ::ffff:0.0.0.0 as a number: IPv4 addresses live here in the IPv6 space. */
const IPV4_MAPPED = '0xffff00000000';

/**
 * Cuts inclusive ranges [first, last] (UInt128 in the IPv6 space; `bits`
 * is 32 for IPv4-mapped ranges, 128 for IPv6) into the fewest prefixes that
 * cover exactly them: for each block size 2^k, only the first and the last
 * aligned block inside the range can have a parent block that is not
 * inside it, and those that do are the cover. Only sizes from the
 * alignment of the range's ends (trailing zero bits of first and last + 1)
 * up to its length can occur, a few per range. Arithmetic in UInt256, where
 * `last + 1` of the whole space and the parent of a /0 fit.
 */
export function rangePrefixesSql(rangesQuery: string, carried: readonly string[]): string {
  const keep = carried.join(', ');
  const trailingZeros = (x: string) => `(bitCount(bitXor(${x}, ${x} - 1)) - 1)`;
  return `
SELECT concat(toString(toIPv6(toUInt128(block))), '/', toString(128 - k)) AS prefix, ${keep}
FROM (
  SELECT ${keep}, k, arrayJoin(arrayFilter(
      x -> x >= s AND x + size <= t AND NOT (intDiv(x, size * 2) * size * 2 >= s AND intDiv(x, size * 2) * size * 2 + size * 2 <= t),
      arrayDistinct([intDiv(s + size - 1, size) * size, if(t >= size, intDiv(t, size) * size - size, s)]))) AS block
  FROM (
    SELECT ${keep}, s, t, arrayJoin(range(k_min, least(bits, toUInt16(ceil(log2(toFloat64(t - s))))) + 1)) AS k, bitShiftLeft(toUInt256(1), k) AS size
    FROM (
      SELECT ${keep}, bits, toUInt256(first) AS s, toUInt256(last) + 1 AS t, toUInt16(least(${trailingZeros('s')}, ${trailingZeros('t')}, bits)) AS k_min
      FROM (${rangesQuery})
      WHERE first <= last
    )
  )
)`;
}

async function insertText(client: ClickHouseClient, target: string, format: string, body: string, settings: Record<string, number> = {}): Promise<void> {
  const clause = Object.keys(settings).length > 0 ? settingsSql(settings) : '';
  const result = await client.exec({ query: `INSERT INTO ${target}${clause} FORMAT ${format}`, values: Readable.from([body]) });
  // A server's answer must be read to the end before its connection is reused.
  for await (const _ of result.stream) void _;
}

function tsv(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
}
