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
export const TABLES = [
  'channel_ranks',
  'episode_ranks',
  'podcast_events',
  'downloads',
  'link_views',
  'web_events',
] as const;

export type TableName = (typeof TABLES)[number];

/**
 * Tables whose rows belong to one account (a podcast network or publisher).
 * Each has an `account_id` column, first in its sort key so a query for one
 * account reads only that account's granules. Chart ranks are public.
 */
export const ACCOUNT_TABLES: readonly TableName[] = ['podcast_events', 'downloads', 'link_views', 'web_events'];

/**
 * Written as every table's comment. CREATE TABLE IF NOT EXISTS never changes
 * an existing table, so start-up compares this to find tables an older
 * version created.
 */
export const SCHEMA_VERSION = 'analytics-schema-2';

export function ddlStatements(database: string): string[] {
  const db = quoteIdentifier(database);
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,

    // One chart snapshot a day per platform, country and category.
    `CREATE TABLE IF NOT EXISTS ${db}.channel_ranks (
      snapshot_ts   DateTime('UTC'),
      platform      LowCardinality(String),
      country_code  LowCardinality(String),
      country_name  LowCardinality(String),
      category      LowCardinality(String),
      rank          UInt16,
      podcast_id    String,
      podcast_slug  String
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(snapshot_ts)
    ORDER BY (platform, country_code, category, snapshot_ts, rank)
    COMMENT '${SCHEMA_VERSION}'`,

    `CREATE TABLE IF NOT EXISTS ${db}.episode_ranks (
      snapshot_ts   DateTime('UTC'),
      platform      LowCardinality(String),
      country_code  LowCardinality(String),
      category      LowCardinality(String),
      rank          UInt16,
      episode_id    String,
      episode_title String,
      podcast_slug  String
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(snapshot_ts)
    ORDER BY (platform, country_code, category, snapshot_ts, rank)
    COMMENT '${SCHEMA_VERSION}'`,

    // Raw requests to the podcast tracking prefix, before any IAB filtering.
    `CREATE TABLE IF NOT EXISTS ${db}.podcast_events (
      account_id            LowCardinality(String),
      request_id            UUID,
      ts                    DateTime('UTC'),
      ip4                   IPv4,
      ip_blacklisted        Bool,
      url                   String,
      redirect_url          String,
      raw_ua                String,
      parsed_ua             LowCardinality(String),
      token                 LowCardinality(String),
      byte_range            String,
      byte_range_larger_one Bool,
      city                  LowCardinality(String),
      country               LowCardinality(String),
      referer               String,
      details_key           LowCardinality(String),
      details_value         String
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(ts)
    ORDER BY (account_id, token, ts)
    COMMENT '${SCHEMA_VERSION}'`,

    // IAB downloads derived from podcast_events: probes, bots and blacklisted
    // IPs dropped, one row per IP + user agent + episode URL per UTC day.
    // Both DownloadEvents and Downloads read this table.
    `CREATE TABLE IF NOT EXISTS ${db}.downloads (
      account_id  LowCardinality(String),
      ts          DateTime('UTC'),
      ip          IPv6,
      ip4         IPv4,
      token       LowCardinality(String),
      url         String,
      referer     String,
      raw_ua      String,
      parsed_ua   LowCardinality(String),
      os_name     LowCardinality(String),
      device_type LowCardinality(String),
      city        LowCardinality(String),
      country     LowCardinality(String),
      continent   LowCardinality(String),
      timezone    LowCardinality(String),
      org         LowCardinality(String)
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(ts)
    ORDER BY (account_id, token, ts)
    COMMENT '${SCHEMA_VERSION}'`,

    // Views of shareable links; the three Links cubes read this table.
    `CREATE TABLE IF NOT EXISTS ${db}.link_views (
      account_id      LowCardinality(String),
      ts              DateTime('UTC'),
      link            LowCardinality(String),
      link_viewer     String,
      is_unique       Bool,
      utm_source      LowCardinality(String),
      utm_medium      LowCardinality(String),
      utm_campaign    LowCardinality(String),
      ua_family       LowCardinality(String),
      open_param      LowCardinality(String),
      referer_domain  LowCardinality(String),
      country_code    LowCardinality(String),
      country_name    LowCardinality(String),
      language_name   LowCardinality(String)
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(ts)
    ORDER BY (account_id, link, ts)
    COMMENT '${SCHEMA_VERSION}'`,

    // Snowplow-style events tracked on podcast websites.
    `CREATE TABLE IF NOT EXISTS ${db}.web_events (
      account_id  LowCardinality(String),
      track_ts    DateTime64(3, 'UTC'),
      ingest_ts   DateTime64(3, 'UTC'),
      event_id    UUID,
      app_id      LowCardinality(String),
      origin      LowCardinality(String),
      session_id  String,
      ua          String,
      ip4         IPv4,
      page_title  String,
      page_url    String,
      se_category LowCardinality(String),
      se_action   LowCardinality(String),
      se_label    String,
      se_value    Nullable(Float64),
      latitude    Nullable(Float64),
      longitude   Nullable(Float64),
      city        LowCardinality(String),
      country     LowCardinality(String)
    ) ENGINE = MergeTree
    PARTITION BY toYYYYMM(track_ts)
    ORDER BY (account_id, app_id, track_ts)
    COMMENT '${SCHEMA_VERSION}'`,
  ];
}

export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}
