import { quoteIdentifier, sqlLiteral } from './sql';

/**
 * The tables behind the ten cubes, as ClickHouse DDL. Every statement is
 * idempotent (IF NOT EXISTS), so start-up can apply it on every run, against
 * chDB or a ClickHouse server alike.
 *
 * Layout choices, table by table, follow the queries the cubes generate:
 * every query carries a time range, so each table is partitioned by month of
 * its event time and ordered by the columns a dashboard filters on first, then
 * time. Strings with a few thousand distinct values at most are
 * LowCardinality; times are DateTime in UTC; ranks are unsigned.
 */
export const TABLES = ['channel_ranks', 'episode_ranks', 'podcast_events', 'downloads', 'link_views', 'web_events'] as const;

/**
 * Tables of raw rows no cube reads: what an import (or a pipeline) writes and a
 * derivation reads, as podcast_events is for downloads. Made with the others,
 * but no part of the demo's build (its tables are TABLES).
 */
export const RAW_TABLES = ['link_events'] as const;

export type TableName = (typeof TABLES)[number] | (typeof RAW_TABLES)[number];

/**
 * Tables whose rows belong to one account (a podcast network or publisher).
 * Each has an `account_id` column, first in its sort key so a query for one
 * account reads only that account's granules. Chart ranks are public.
 */
export const ACCOUNT_TABLES: readonly TableName[] = ['podcast_events', 'downloads', 'link_views', 'web_events', 'link_events'];

/**
 * Written as every table's comment. CREATE TABLE IF NOT EXISTS never changes
 * an existing table, so start-up compares this to find tables an older
 * version created.
 */
export const SCHEMA_VERSION = 'analytics-schema-2';

interface TableLayout {
  name: TableName;
  /** `name type` per column, in order: the one list both layouts are made from. */
  columns: readonly string[];
  partitionBy: string;
  orderBy: string;
  /**
   * The Distributed table's sharding key on a cluster. podcast_events,
   * downloads and web_events are sharded by the same hash of (account_id,
   * ip4), over columns of the same types in all three: the funnel
   * (downloads → web_events) and the PodcastEvents → WebEvents join match
   * rows on exactly these two columns, so every row one of them matches lies
   * on the shard of the row it starts from, and a shard can join its own
   * rows (distributed_product_mode = 'local') without fetching any from
   * another. Other tables join nothing: their keys only spread rows evenly
   * (charts keep one chart's ranks together).
   */
  shardingKey: string;
  /** Aggregate projections, each a `SELECT … GROUP BY …` over this table (see PROJECTIONS). */
  projections?: readonly Projection[];
  /**
   * The column holding a listener's or visitor's address whole (IPv6; an IPv4 address as ::ffff:a.b.c.d), by which
   * `forget --address` finds their rows. A table of an account without one holds no address.
   */
  address?: string;
}

export interface Projection {
  name: string;
  select: string;
}

/**
 * Aggregate projections: per account and UTC hour, the counts the dashboards
 * ask for, kept by ClickHouse in every part beside the rows and written by the
 * same INSERT, so they are as fresh as the table. ClickHouse picks one for a
 * query only when every expression the query needs can be computed from its
 * columns: account_id is a key (the security context filters on it), and time
 * is `toStartOfHour(ts)`, which the dialect (src/cube/engine/dialect.ts) filters and
 * groups on where that is exact. Counts with a condition are written
 * `count(if(…, 1, NULL))`, the form Cube's `count(CASE WHEN … THEN 1 END)`
 * takes in ClickHouse once `optimize_rewrite_aggregate_function_with_if` is
 * off (the query client turns it off; with it on, ClickHouse rewrites the
 * query's function to countIf and no longer matches the projection).
 */
const HOURLY = 'hourly';

const LAYOUTS: readonly TableLayout[] = [
  // One chart snapshot a day per platform, country and category.
  {
    name: 'channel_ranks',
    columns: [
      "snapshot_ts   DateTime('UTC')",
      'platform      LowCardinality(String)',
      'country_code  LowCardinality(String)',
      'country_name  LowCardinality(String)',
      'category      LowCardinality(String)',
      'rank          UInt16',
      'podcast_id    String',
      'podcast_slug  String',
      // Added for imported charts (addMissingColumns adds it to older tables): the import that brought the row (empty for others).
      "import_id     String DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(snapshot_ts)',
    orderBy: '(platform, country_code, category, snapshot_ts, rank)',
    shardingKey: 'cityHash64(platform, country_code, category)',
  },
  {
    name: 'episode_ranks',
    columns: [
      "snapshot_ts   DateTime('UTC')",
      'platform      LowCardinality(String)',
      'country_code  LowCardinality(String)',
      'category      LowCardinality(String)',
      'rank          UInt16',
      'episode_id    String',
      'episode_title String',
      'podcast_slug  String',
      "import_id     String DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(snapshot_ts)',
    orderBy: '(platform, country_code, category, snapshot_ts, rank)',
    shardingKey: 'cityHash64(platform, country_code, category)',
  },
  // Raw requests to the podcast tracking prefix, before any IAB filtering.
  {
    name: 'podcast_events',
    columns: [
      'account_id            LowCardinality(String)',
      'request_id            UUID',
      "ts                    DateTime('UTC')",
      'ip4                   IPv4',
      'ip_blacklisted        Bool',
      'url                   String',
      'redirect_url          String',
      'raw_ua                String',
      'parsed_ua             LowCardinality(String)',
      'token                 LowCardinality(String)',
      'byte_range            String',
      'byte_range_larger_one Bool',
      'city                  LowCardinality(String)',
      'country               LowCardinality(String)',
      'referer               String',
      'details_key           LowCardinality(String)',
      'details_value         String',
      // Added for imported logs (ensureColumns adds them to older tables):
      // the address as logged (IPv4 as ::ffff:a.b.c.d), the HTTP method and
      // status, and the import that brought the row (empty for others).
      'ip                    IPv6 DEFAULT toIPv6(ip4)',
      "method                LowCardinality(String) DEFAULT 'GET'",
      'status                UInt16 DEFAULT 200',
      "import_id             String DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(ts)',
    orderBy: '(account_id, token, ts)',
    shardingKey: 'cityHash64(account_id, ip4)',
    address: 'ip',
    // PodcastEvents.count by parsedUa; Cube counts request_id, which ClickHouse reads as count() (the column is not Nullable).
    projections: [{ name: HOURLY, select: 'SELECT account_id, toStartOfHour(ts), parsed_ua, count() GROUP BY account_id, toStartOfHour(ts), parsed_ua' }],
  },
  // IAB downloads derived from podcast_events: probes, bots and blacklisted
  // IPs dropped, one row per IP + user agent + episode URL per UTC day.
  // Both DownloadEvents and Downloads read this table.
  {
    name: 'downloads',
    columns: [
      'account_id  LowCardinality(String)',
      "ts          DateTime('UTC')",
      'ip          IPv6',
      'ip4         IPv4',
      'token       LowCardinality(String)',
      'url         String',
      'referer     String',
      'raw_ua      String',
      'parsed_ua   LowCardinality(String)',
      'os_name     LowCardinality(String)',
      'device_type LowCardinality(String)',
      'city        LowCardinality(String)',
      'country     LowCardinality(String)',
      'continent   LowCardinality(String)',
      'timezone    LowCardinality(String)',
      'org         LowCardinality(String)',
      // OP3's tags, e.g. first-two (src/warehouse/derive).
      "tags        LowCardinality(String) DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(ts)',
    orderBy: '(account_id, token, ts)',
    shardingKey: 'cityHash64(account_id, ip4)',
    address: 'ip',
    // Downloads.count by country or continent, and by time bucket.
    projections: [
      { name: HOURLY, select: 'SELECT account_id, toStartOfHour(ts), country, continent, count() GROUP BY account_id, toStartOfHour(ts), country, continent' },
    ],
  },
  // Views of shareable links; the three Links cubes read this table.
  {
    name: 'link_views',
    columns: [
      'account_id      LowCardinality(String)',
      "ts              DateTime('UTC')",
      'link            LowCardinality(String)',
      'link_viewer     String',
      'is_unique       Bool',
      'utm_source      LowCardinality(String)',
      'utm_medium      LowCardinality(String)',
      'utm_campaign    LowCardinality(String)',
      'ua_family       LowCardinality(String)',
      'open_param      LowCardinality(String)',
      'referer_domain  LowCardinality(String)',
      'country_code    LowCardinality(String)',
      'country_name    LowCardinality(String)',
      'language_name   LowCardinality(String)',
    ],
    partitionBy: 'toYYYYMM(ts)',
    orderBy: '(account_id, link, ts)',
    shardingKey: 'cityHash64(account_id, link_viewer)',
    // Views, unique views and opens (LinksAdvancedAnalytics, LinksDashboard) by UTM attribution.
    projections: [
      {
        name: HOURLY,
        select:
          "SELECT account_id, toStartOfHour(ts), utm_source, utm_medium, utm_campaign, count(), count(if(is_unique, 1, NULL)), count(if(open_param != '', 1, NULL)) " +
          'GROUP BY account_id, toStartOfHour(ts), utm_source, utm_medium, utm_campaign',
      },
    ],
  },
  // The link pages' own events (views and opens), as imported: link_views is derived from them
  // (src/warehouse/derive/link-views.ts). The address is kept here, as podcast_events keeps it, never in link_views.
  {
    name: 'link_events',
    columns: [
      'account_id      LowCardinality(String)',
      "ts              DateTime64(3, 'UTC')",
      'event           LowCardinality(String)',
      'link            LowCardinality(String)',
      'viewer          String',
      'ip              IPv6',
      'raw_ua          String',
      'url             String',
      'referer         String',
      'accept_language String',
      'target          LowCardinality(String)',
      // The event's own id, of every field: the same event delivered again, in any file or form, is recognised by it
      // (also for rows a pipeline writes without one).
      'event_id        UUID DEFAULT reinterpretAsUUID(sipHash128(account_id, ts, event, link, viewer, ip, raw_ua, url, referer, accept_language, target))',
      "import_id       String DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(ts)',
    orderBy: '(account_id, link, ts)',
    // A link's events on one shard: a viewer's views and opens of a link are derived together.
    // The visitor's address, whole: erased by forget --address, reduced after ADDRESS_RETENTION_DAYS.
    address: 'ip',
    shardingKey: 'cityHash64(account_id, link)',
  },
  // Snowplow events tracked on podcast websites (page views and structured events).
  {
    name: 'web_events',
    columns: [
      'account_id  LowCardinality(String)',
      "track_ts    DateTime64(3, 'UTC')",
      "ingest_ts   DateTime64(3, 'UTC')",
      'event_id    UUID',
      'app_id      LowCardinality(String)',
      'origin      LowCardinality(String)',
      'session_id  String',
      'ua          String',
      'ip4         IPv4',
      'page_title  String',
      'page_url    String',
      'se_category LowCardinality(String)',
      'se_action   LowCardinality(String)',
      'se_label    String',
      'se_value    Nullable(Float64)',
      'latitude    Nullable(Float64)',
      'longitude   Nullable(Float64)',
      'city        LowCardinality(String)',
      'country     LowCardinality(String)',
      // Added for imported events (ensureColumns adds them to older tables): the visitor's address whole (IPv4 as
      // ::ffff:a.b.c.d; an IPv6 visitor's ip4 is 0.0.0.0), and the import that brought the row (empty for others).
      'ip          IPv6 DEFAULT toIPv6(ip4)',
      "import_id   String DEFAULT ''",
    ],
    partitionBy: 'toYYYYMM(track_ts)',
    orderBy: '(account_id, app_id, track_ts)',
    shardingKey: 'cityHash64(account_id, ip4)',
    address: 'ip',
  },
];

/** Single node (chDB or one server): one MergeTree table per name the models read. */
export function ddlStatements(database: string): string[] {
  const db = quoteIdentifier(database);
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,
    ...LAYOUTS.map((t) =>
      [
        `CREATE TABLE IF NOT EXISTS ${db}.${t.name} ${columnList(t)}`,
        'ENGINE = MergeTree',
        `PARTITION BY ${t.partitionBy}`,
        `ORDER BY ${t.orderBy}`,
        `COMMENT '${SCHEMA_VERSION}'`,
      ].join('\n'),
    ),
  ];
}

/** A table's single-node engine clause, which a table staged in its layout is made with. */
export function mergeTreeEngineSql(table: TableName): string {
  const t = LAYOUTS.find((layout) => layout.name === table);
  if (t === undefined) throw new Error(`no layout of ${table}`);
  return `ENGINE = MergeTree PARTITION BY ${t.partitionBy} ORDER BY ${t.orderBy}`;
}

/** The local table behind a Distributed one on a cluster. */
export function localTableName(table: TableName): string {
  return `${table}_local`;
}

/**
 * A cluster from the server's remote_servers: on every node, a
 * ReplicatedMergeTree `<table>_local` (replicas of a shard share the
 * Keeper path of their {shard} macro, each under its {replica} macro) and a
 * Distributed table under the name the models read, which fans reads out to
 * one replica of every shard and sends inserts to the shard of their key.
 */
export function clusterDdlStatements(database: string, cluster: string): string[] {
  const db = quoteIdentifier(database);
  const onCluster = `ON CLUSTER ${quoteIdentifier(cluster)}`;
  return [
    `CREATE DATABASE IF NOT EXISTS ${db} ${onCluster}`,
    ...LAYOUTS.flatMap((t) => {
      const columns = `(\n  ${t.columns.join(',\n  ')}\n)`;
      const local = localTableName(t.name);
      return [
        [
          `CREATE TABLE IF NOT EXISTS ${db}.${local} ${onCluster} ${columnList(t)}`,
          "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')",
          `PARTITION BY ${t.partitionBy}`,
          `ORDER BY ${t.orderBy}`,
          `COMMENT '${SCHEMA_VERSION}'`,
        ].join('\n'),
        [
          `CREATE TABLE IF NOT EXISTS ${db}.${t.name} ${onCluster} ${columns}`,
          `ENGINE = Distributed(${sqlLiteral(cluster)}, ${sqlLiteral(database)}, ${sqlLiteral(local)}, ${t.shardingKey})`,
          `COMMENT '${SCHEMA_VERSION}'`,
        ].join('\n'),
      ];
    }),
    ...bookkeepingStatements(database, cluster),
  ];
}

/** Columns, then the table's projections: a projection lives in the table that holds the rows (on a cluster, the local one). */
function columnList(t: TableLayout): string {
  const projections = (t.projections ?? []).map((p) => `PROJECTION ${p.name} (${p.select})`);
  return `(\n  ${[...t.columns, ...projections].join(',\n  ')}\n)`;
}

/** Each table's column definitions (`name type …`), by the name the models read. */
export function columnsByTable(): { table: TableName; columns: readonly string[] }[] {
  return LAYOUTS.map((t) => ({ table: t.name, columns: t.columns }));
}

/** The projections of each table that has some, by the name the models read. */
export function projectionsByTable(): { table: TableName; projections: readonly Projection[] }[] {
  return LAYOUTS.filter((t) => t.projections?.length).map((t) => ({ table: t.name, projections: t.projections ?? [] }));
}

/**
 * Adds a projection to a table made before it existed (CREATE TABLE IF NOT
 * EXISTS leaves such a table as it was), then builds it for the parts already
 * there; new parts get it from their INSERT. MATERIALIZE is a mutation:
 * mutations_sync waits for it (2: on every replica).
 */
export function addProjectionStatements(database: string, table: string, projection: Projection, cluster?: string): string[] {
  const target = `${quoteIdentifier(database)}.${quoteIdentifier(table)}${cluster ? ` ON CLUSTER ${quoteIdentifier(cluster)}` : ''}`;
  return [
    `ALTER TABLE ${target} ADD PROJECTION IF NOT EXISTS ${projection.name} (${projection.select})`,
    `ALTER TABLE ${target} MATERIALIZE PROJECTION ${projection.name} SETTINGS mutations_sync = 2`,
  ];
}

/** The tables of a listener's or visitor's rows, with the column holding their address (see TableLayout.address). */
export function addressTables(): { table: TableName; address: string }[] {
  return LAYOUTS.flatMap((t) => (t.address !== undefined && ACCOUNT_TABLES.includes(t.name) ? [{ table: t.name, address: t.address }] : []));
}

/**
 * The warehouse's own records, which no model reads: `imports`, a row per
 * state of each file imported (import/import.ts), and `erasures`, a row per
 * erasure made (forget.ts), which names no address and no account: what was
 * removed, table by table, and for an account the SHA-256 of its id, by
 * which its keys are found (a guessable digest, but account ids are
 * operators' names for networks, not personal data).
 */
const BOOKKEEPING = {
  imports: {
    columns: [
      'id String',
      'hash String',
      'file String',
      'state LowCardinality(String)',
      'rows UInt64',
      "from_ts DateTime('UTC')",
      "to_ts DateTime('UTC')",
      "at DateTime('UTC') DEFAULT now()",
      'accounts Array(String)',
      "source LowCardinality(String) DEFAULT 'requests'",
    ],
    orderBy: '(hash, id)',
  },
  erasures: {
    columns: ['id String', "at DateTime('UTC') DEFAULT now()", 'kind LowCardinality(String)', 'account_hash String', 'removed Map(String, UInt64)'],
    orderBy: '(at, id)',
  },
} as const;

export type BookkeepingTable = keyof typeof BOOKKEEPING;

/**
 * The engine of a table every node of a cluster holds all of: one replicated table whose replicas are every node
 * (not a table per shard), by the table's UUID (which ON CLUSTER gives every node alike, and EXCHANGE TABLES keeps
 * with the data).
 */
export const EVERY_NODE_ENGINE = "ReplicatedMergeTree('/clickhouse/tables/all/{uuid}', '{replica}')";

/**
 * The bookkeeping tables. On a cluster every node holds all of each (one
 * replicated table whose replicas are every node of the cluster, not a
 * table per shard), so whichever node a command reaches sees every import
 * and erasure.
 */
export function bookkeepingStatements(database: string, cluster?: string): string[] {
  const db = quoteIdentifier(database);
  return Object.entries(BOOKKEEPING).map(([name, t]) =>
    [
      `CREATE TABLE IF NOT EXISTS ${db}.${name}${cluster ? ` ON CLUSTER ${quoteIdentifier(cluster)}` : ''} (\n  ${t.columns.join(',\n  ')}\n)`,
      `ENGINE = ${cluster ? EVERY_NODE_ENGINE : 'MergeTree'}`,
      `ORDER BY ${t.orderBy}`,
    ].join('\n'),
  );
}
