import type { DownloadRules, DownloadWindow } from '../../config';
import { sqlLiteral } from '../sql';

/**
 * The per-request rules, as SQL over a podcast_events row: which requests
 * may become downloads, and the listener key that deduplicates them.
 * Published sources, summarised in ../shared/conformance/iab/rules.md and
 * op3/rules.md:
 * - IAB Tech Lab Podcast Measurement Technical Guidelines v2.3 (final
 *   2026-09-29). What v2.3 changed from v2.2 that matters here: the three
 *   windows (calendar, first-touch rolling, last-touch rolling) are named and
 *   any one may be chosen if disclosed (v2.2 asked only to disclose fixed or
 *   rolling), the 2-byte probe (`Range: bytes=0-1`) is to be disregarded
 *   always, the Apple Watch user agents are named, and safe-IP lists must be
 *   re-validated every 90 days.
 * - OP3 (skymethod/op3 at d8267547): GET only, its Range parser and
 *   more-than-2-bytes rule with the lone `bytes=0-1` kept as "first-two",
 *   per-UTC-day dedup on IP + user agent + referer per episode URL.
 */

export interface DownloadRuleSettings {
  rules: DownloadRules;
  /** IAB only: OP3 always dedups per UTC calendar day. */
  window: DownloadWindow;
}

/** A rolling window's length (IAB 5.5.1: "typically 24 hours"); a request exactly this long after the window's start is outside it. */
export const WINDOW_SECONDS = 86_400;

const SPEC = '(\\\\d+-\\\\d*|-\\\\d+)';

/**
 * OP3's Range parser (range_header.ts) in SQL: `bytes=` and comma-separated
 * specs `N-M` (M ≥ N), `N-` or `-K` (K ≥ 1), digits only, whitespace only
 * around commas, case-sensitive. Columns: range_specs (Array of [start, end]
 * as Float64, end -1 when open, start -1 for a suffix), range_valid,
 * range_max_size (largest estimated size; an open range is unbounded).
 */
export function rangeColumns(header: string): string {
  return `
    match(${header}, '^bytes=${SPEC}(\\\\s*,\\\\s*${SPEC})*$') AS range_syntax,
    arrayMap(s -> (
        if(startsWith(s, '-'), -1, toFloat64OrZero(splitByChar('-', s)[1])),
        if(endsWith(s, '-'), -1, toFloat64OrZero(splitByChar('-', s)[2]))),
      if(range_syntax, arrayMap(s -> trimBoth(s), splitByChar(',', substring(${header}, 7))), [])) AS range_specs,
    range_syntax AND arrayAll(p -> if(p.1 = -1, p.2 >= 1, p.2 = -1 OR p.2 >= p.1), range_specs) AS range_valid,
    arrayMax(arrayMap(p -> multiIf(p.1 = -1, p.2, p.2 = -1, 9007199254740991, p.2 - p.1 + 1), arrayPushBack(range_specs, (0., 0.)))) AS range_max_size,
    range_valid AND length(range_specs) = 1 AND range_specs[1].1 = 0 AND range_specs[1].2 = 1 AS range_first_two,
    NOT range_valid OR range_max_size > 2 AS range_counts`;
}

/**
 * Whether a request (with rangeColumns and the user-agent classification
 * beside it) may become a download. IAB: GET (5.5.2 Step 1.3), a status that
 * delivered the file or the redirect to it (2xx and 3xx except 304; 0 is
 * Akamai's 000 for a 206 cut short, counted if every other filter passes),
 * never a range of 2 bytes or fewer (Step 1.2 item 6 and P1's "larger than
 * 2 bytes"), no bot (item 5, and the Apple Watch duplicates of item 7), no IP
 * on the exclusion list (item 2). OP3: GET only, ranges of 2 bytes or fewer
 * dropped except the lone first-two probe, no bot type, and no answer of the
 * prefix that is an error (4xx, 5xx, or no HTTP status at all: 600 and over).
 * OP3 itself has no status rule only because its prefix always redirects
 * (op3/rules.md R1): a request the prefix refused or failed sent no listener
 * on to the file, under any rule. Its other answers (a redirect, a 304 to a
 * client holding the redirect, a 2xx of a prefix that serves the file, 0)
 * count as OP3 counts every request it takes.
 */
export function qualifiesSql(settings: DownloadRuleSettings): string {
  if (settings.rules === 'op3') return `method = 'GET' AND status < 400 AND (range_counts OR range_first_two) AND bot_type = '' AND NOT ip_blacklisted`;
  return `method = 'GET' AND (status = 0 OR (status BETWEEN 200 AND 399 AND status != 304)) AND range_counts AND bot_type = '' AND NOT ip_blacklisted`;
}

/** OP3's client parameters (client_params.ts `OTHERS`): added by apps and players, not part of the file's URL. */
const CLIENT_PARAMS = [
  'played_on',
  'source',
  'client_source',
  'referrer',
  'ref',
  'from',
  'src',
  'acid',
  'av',
  'lo',
  'consumer_key',
  'country',
  'fbclid',
  'rss_browser',
  'rn',
];
/** TuneIn's three (removed only together, with the `/;` TuneIn puts before them) and AdsWizz's names. */
const TUNEIN_PARAMS = ['DIST', 'TGT', 'maxServers'];
const ADSWIZZ_PARAMS = ['companionAds', 'calendar', 'sdkiad'];

/**
 * The request URL as the episode's file is known by, OP3's R4 (client_params.ts `computeServerUrl`), for both
 * rules: the scheme and host lower-cased (as OP3's download key, chain_estimate.ts `normalizeOrigin`), a redundant
 * `:443`/`:80` dropped, and the query parameters a client adds removed (names starting with
 * `_`, such as a player's cache-buster `_=1767600000`; `from`, `source`, `ref` and the rest of CLIENT_PARAMS;
 * `download=true`; AdsWizz's; TuneIn's three together; empty ones), the others kept as written. Without it each
 * cache-buster made a request of a new episode, counted again. Parameter names are compared as written (OP3 decodes them
 * first; a client that percent-encodes a name's letters is not seen).
 */
export function serverUrlSql(url: string): string {
  // Scheme and host lower-cased first (the port's patterns are written lower-case), the userinfo kept (RFC 3986
  // 6.2.2.1: only those two are case-insensitive).
  const lowered = `arrayMap(u -> arrayMap(g -> concat(lower(g[1]), g[2], lower(g[3]), substring(u, length(g[1]) + length(g[2]) + length(g[3]) + 1)),
      [extractGroups(u, '^((?i:https?)://)([^/?#]*@)?([^/?#]*)')])[1],
    [if(position(${url}, '?') = 0, replaceOne(${url}, '%3F_from', '?_from'), ${url})])[1]`;
  const canonical = `replaceRegexpOne(replaceRegexpOne(${lowered}, '^(https://[^/:]+):443/', '\\1/'), '^(http://[^/:]+):80/', '\\1/')`;
  const name = `if(position(p, '=') > 0, substring(p, 1, position(p, '=') - 1), p)`;
  const client = `startsWith(n, '_') OR has(${sqlLiteral(CLIENT_PARAMS)}, n) OR has(${sqlLiteral(ADSWIZZ_PARAMS)}, n) OR startsWith(n, 'aw_')
    OR p IN ('', '=', 'query', 'query=', 'download=true') OR (t AND has(${sqlLiteral(TUNEIN_PARAMS)}, n))`;
  // Lambdas bind each intermediate once (c: the canonical URL, ps: its parameters, ns: their names, t: TuneIn's three
  // present, kept), so the statement holds each expression once: written out, it planned 40 ms slower a statement.
  const rewritten = `arrayMap(c -> if(position(c, '?') = 0, c, arrayMap(path -> arrayMap(ps -> arrayMap(ns -> arrayMap(t -> arrayMap(kept ->
      concat(if(t AND endsWith(path, '/;'), substring(path, 1, length(path) - 2), path), if(empty(kept), '', concat('?', arrayStringConcat(kept, '&')))),
    [arrayFilter((p, n) -> NOT (${client}), ps, ns)])[1],
    [hasAll(ns, ${sqlLiteral(TUNEIN_PARAMS)})])[1],
    [arrayMap(p -> ${name}, ps)])[1],
    [splitByChar('&', substring(c, position(c, '?') + 1))])[1],
    [substring(c, 1, position(c, '?') - 1)])[1]), [${canonical}])[1]`;
  // Most request URLs have no query, no port, no escaped '?' and a lower-case scheme and host: they pass as they are,
  // and ClickHouse evaluates the other branch only for the rows that take it. The anchored pattern stops at the end of
  // the host: over 2.18M URLs it added 60 ms, comparing the host's bytes to their lower case (substring, lower, equals)
  // 250 ms.
  return `if(NOT multiSearchAny(${url}, ['?', ':443/', ':80/', '%3F_from']) AND match(${url}, '^https?://[^/?#A-Z]*[/?#]'), ${url}, ${rewritten})`;
}

/**
 * The listener part of the key. IAB 5.5.4: IPv4 in full, IPv6 cut to its
 * first 64 bits; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is an IPv4
 * listener and stays whole (OP3's /64 helper would zero it, see
 * ../shared/conformance/op3/ipv6-vectors.json; its downloads use the full
 * address). OP3: the full address.
 */
export function listenerIpSql(settings: DownloadRuleSettings, ip: string): string {
  if (settings.rules === 'op3') return ip;
  return `if(${ip} BETWEEN toIPv6('::ffff:0.0.0.0') AND toIPv6('::ffff:255.255.255.255'), ${ip}, toIPv6(cutIPv6(${ip}, 8, 0)))`;
}
