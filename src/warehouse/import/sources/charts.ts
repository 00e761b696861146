import { sqlLiteral } from '../../sql';
import { csvFormat, FIRST_TIME, LAST_TIME, ndjsonFormat, outsideTimesSql, parquetFormat, timeSql } from '../formats';
import type { Accessors, Format, ImportOptions, Lines, Source } from '../source';

/**
 * Chart positions, public: a show's position in a chart into channel_ranks
 * (ChannelRanks), an episode's into episode_ranks (EpisodeRanks). A chart
 * snapshot is its platform, chart, country, category and time; one delivered
 * again replaces the one stored (Source.replaces). The fields, each format and
 * what each column gets are in docs/bringing-data.md.
 */

/** The canonical record's fields (JSON keys, CSV header names, Parquet columns). */
export const CHART_FIELDS = ['time', 'date', 'chart', 'platform', 'country', 'category', 'rank', 'podcastId', 'podcastSlug', 'episodeId', 'episodeTitle'];

/** Fields a file may leave to the command: `--category`, `--country`, `--date`. */
const GIVEN = ['category', 'country', 'date'];

/** The category of a chart that names none (Apple's top charts across genres). */
const ALL_CATEGORIES = 'All';

/** An Apple entry's `kind` of each chart. */
const APPLE_KINDS = { shows: ['podcasts', 'podcast'], episodes: ['podcast-episodes', 'podcast-episode'] };

/** The show's slug in an Apple Podcasts URL: `…/podcast/<slug>/id<digits>`. */
const APPLE_SLUG = '/podcast/([^/?#]+)/id[0-9]+';

/**
 * Apple's marketing-tools RSS API's top chart, one file a chart: `feed.country`, `feed.updated`, and its entries,
 * `feed.results[]` (`id`, `name`, `url`, `kind`, …); an entry's rank is its position there. A row is an entry
 * (`arrayJoin`), numbered by its position; a document without entries is one row, rejected.
 */
function appleAccessors(): Accessors {
  const entry = (key: string) => `JSONExtractString(apple_entry, ${sqlLiteral(key)})`;
  const fields: Record<string, string> = {
    time: `JSONExtractString(raw, 'feed', 'updated')`,
    chart: `multiIf(apple_kind IN ${sqlLiteral(APPLE_KINDS.shows)}, 'shows', apple_kind IN ${sqlLiteral(APPLE_KINDS.episodes)}, 'episodes', apple_kind = '', '', concat('kind ', apple_kind))`,
    platform: "'apple'",
    country: `JSONExtractString(raw, 'feed', 'country')`,
    rank: 'toString(apple_position)',
    podcastId: entry('id'),
    podcastSlug: `extract(${entry('url')}, ${sqlLiteral(APPLE_SLUG)})`,
    episodeId: entry('id'),
    episodeTitle: entry('name'),
  };
  return jsonAccessors(fields, {
    columns: `JSONExtractArrayRaw(raw, 'feed', 'results') AS apple_results,
      arrayJoin(if(empty(apple_results), [0], arrayEnumerate(apple_results))) AS apple_position,
      if(apple_position = 0, '', apple_results[apple_position]) AS apple_entry, ${entry('kind')} AS apple_kind`,
    isRecord: 'apple_position > 0',
    notARecord: "not an Apple chart: no entries in feed.results (Apple's marketing-tools RSS JSON)",
    line: 'if(apple_position = 0, raw, apple_entry)',
    position: 'if(apple_position = 0, line, toUInt64(apple_position))',
  });
}

/**
 * The JSON array Spotify's podcast charts page serves, one file a chart: each object an entry (`showUri`,
 * `showName`, …; an episode chart's `episodeUri`, `episodeName`), its rank its position in the array (the reader's
 * numbering of the array's objects). The file says no country, category or day: the command does.
 */
function spotifyAccessors(): Accessors {
  const key = (name: string) => `JSONExtractString(raw, ${sqlLiteral(name)})`;
  const fields: Record<string, string> = {
    chart: `multiIf(JSONHas(raw, 'episodeUri'), 'episodes', JSONHas(raw, 'showUri'), 'shows', '')`,
    platform: "'spotify'",
    rank: 'toString(line)',
    podcastId: key('showUri'),
    episodeId: key('episodeUri'),
    episodeTitle: key('episodeName'),
  };
  return jsonAccessors(fields, {
    columns: '',
    isRecord: "JSONType(raw) = 'Object'",
    notARecord: "not a JSON object (an entry of Spotify's chart)",
    line: 'raw',
  });
}

/** Accessors of a chart's own JSON, its canonical fields as `fields` gives them ('' for the others): no field of it is unknown. */
function jsonAccessors(fields: Record<string, string>, rest: Pick<Accessors, 'columns' | 'isRecord' | 'notARecord' | 'line' | 'position'>): Accessors {
  const text = (f: string) => fields[f] ?? "''";
  return { ...rest, text, raw: text, has: (f) => `${text(f)} != ''`, json: false, unknown: 'CAST([] AS Array(String))' };
}

const jsonFormat = (accessors: () => Accessors): Format => ({ reader: 'json', accessors });

/** The checked rows' columns: both tables' columns. */
const CHECKED = [
  "snapshot_ts DateTime('UTC')",
  'chart String',
  'platform String',
  'country_code String',
  'country_name String',
  'category String',
  'rank UInt16',
  'podcast_id String',
  'podcast_slug String',
  'episode_id String',
  'episode_title String',
];

/** Apple's `feed.updated`: RFC 2822 (`Mon, 05 Jan 2026 08:12:34 +0000`). */
const RFC_2822 =
  '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-2]?[0-9]|3[01]) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} ([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])? ([+-][0-9]{4}|GMT|UT|UTC|Z)$';

/** A day, `YYYY-MM-DD`, as midnight UTC; NULL when it is no day of the calendar. */
function daySql(text: string): string {
  return `parseDateTimeOrNull(${text}, '%Y-%m-%d', 'UTC')`;
}

/**
 * Each row's fields, checked. What a file does not say, the command does (`given`: --category, --country, --date);
 * where both say it, they must agree. The country's English name is the IP database's (its country list), which
 * also tells a code from none; without one loaded, a code is two letters and has no name.
 */
function checkSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  const given = (field: string) => sqlLiteral(options.given?.[field] ?? '');
  const countryName = options.derivation.places?.countryName;
  const differs = (field: string, own: string, value: string) =>
    `${given(field)} != '' AND ${own} != '' AND ${value} != ${given(field)}, concat('${field} ', ${value}, ' differs from --${field} ', ${given(field)})`;
  return `
    SELECT ${a.position ?? 'line'} AS line, ${a.line} AS line_text, ${a.columns ? `${a.columns},` : ''}
      ${a.text('time')} AS time_text,
      ${a.text('date')} AS date_text,
      if(match(time_text, ${sqlLiteral(RFC_2822)}), parseDateTime64BestEffortOrNull(time_text, 0, 'UTC'), ${timeSql('time_text', 'optional')}) AS time64,
      ${daySql('date_text')} AS date64,
      ${daySql(given('date'))} AS given64,
      multiIf(time_text != '', time64, date_text != '', date64, given64) AS snapshot64,
      toDateTime(ifNull(snapshot64, toDateTime64(0, 0, 'UTC')), 'UTC') AS snapshot_ts,
      toString(toDate(snapshot_ts)) AS own_day,
      lower(${a.text('chart')}) AS chart,
      lower(${a.text('platform')}) AS platform,
      lower(${a.text('country')}) AS own_country,
      if(own_country != '', own_country, lower(${given('country')})) AS country_code,
      ${countryName ? countryName('upper(country_code)') : "''"} AS country_name,
      ${a.text('category')} AS own_category,
      multiIf(own_category != '', own_category, ${given('category')} != '', ${given('category')}, ${sqlLiteral(ALL_CATEGORIES)}) AS category,
      ${a.text('rank')} AS rank_text,
      if(match(rank_text, '^[0-9]{1,5}$'), toUInt32(rank_text), 0) AS rank_number,
      toUInt16(least(rank_number, 65535)) AS rank,
      ${a.text('podcastId')} AS podcast_id,
      ${a.text('podcastSlug')} AS podcast_slug,
      ${a.text('episodeId')} AS episode_id,
      ${a.text('episodeTitle')} AS episode_title,
      ${options.ignoreUnknown ? 'CAST([] AS Array(String))' : a.unknown} AS unknown,
      multiIf(
        NOT (${a.isRecord}), ${sqlLiteral(a.notARecord)},
        length(unknown) > 0, concat('unknown field ', unknown[1], ' (--ignore-unknown skips unknown fields)'),
        ${given('date')} != '' AND given64 IS NULL, concat('--date ', ${given('date')}, ' is not a day (YYYY-MM-DD)'),
        time_text != '' AND time64 IS NULL, 'time is not a time (ISO 8601, or RFC 2822 as Apple''s feed.updated writes it)',
        time_text = '' AND date_text != '' AND date64 IS NULL, 'date is not a day (YYYY-MM-DD)',
        snapshot64 IS NULL, 'no time: give the row a time or date, or the file --date',
        ${outsideTimesSql('snapshot64')}, 'time is outside ${FIRST_TIME} … ${LAST_TIME}, the times the warehouse holds',
        given64 IS NOT NULL AND (time_text != '' OR date_text != '') AND own_day != toString(toDate(given64)),
          concat('the day ', own_day, ' differs from --date ', ${given('date')}),
        chart = '', 'chart is missing: shows or episodes (of an Apple entry, its kind: podcasts or podcast-episodes)',
        chart NOT IN ('shows', 'episodes'), concat('chart is ', chart, ', not shows or episodes'),
        platform = '', 'platform is missing',
        country_code = '', 'no country: give the row a country or the file --country',
        ${differs('country', 'own_country', 'own_country')},
        NOT match(country_code, '^[a-z]{2}$') ${countryName ? "OR country_name = ''" : ''}, concat('country ', country_code, ' is no ISO 3166-1 alpha-2 code'),
        ${differs('category', 'own_category', 'own_category')},
        rank_text = '', 'rank is missing',
        rank_number NOT BETWEEN 1 AND 65535, 'rank is not a whole number from 1 to 65535',
        chart = 'shows' AND podcast_id = '', 'podcastId is missing',
        chart = 'episodes' AND episode_id = '', 'episodeId is missing',
        '') AS reason,
      '' AS skip
    FROM ${lines.from}`;
}

/** The valid rows of one chart in its table's layout. */
function rowsSql(checked: string, id: string, chart: 'shows' | 'episodes', columns: string): string {
  return `SELECT ${columns}, ${sqlLiteral(id)} AS import_id FROM ${checked} WHERE reason = '' AND skip = '' AND chart = '${chart}'`;
}

export const CHARTS: Source = {
  name: 'charts',
  row: { one: 'chart position', many: 'chart positions' },
  formats: {
    ndjson: ndjsonFormat(CHART_FIELDS),
    csv: csvFormat(CHART_FIELDS),
    parquet: parquetFormat(CHART_FIELDS),
    'apple-charts': jsonFormat(appleAccessors),
    'spotify-charts': jsonFormat(spotifyAccessors),
  },
  fields: CHART_FIELDS,
  rowAccounts: false,
  public: true,
  given: GIVEN,
  target: 'channel_ranks',
  more: ['episode_ranks'],
  time: 'snapshot_ts',
  // A snapshot: both tables hold one chart each, shows and episodes.
  replaces: 'tuple(platform, country_code, category, snapshot_ts)',
  checked: CHECKED,
  check: checkSql,
  async stage({ id, checked }) {
    return {
      rows: rowsSql(checked, id, 'shows', 'snapshot_ts, platform, country_code, country_name, category, rank, podcast_id, podcast_slug'),
      more: { episode_ranks: rowsSql(checked, id, 'episodes', 'snapshot_ts, platform, country_code, category, rank, episode_id, episode_title, podcast_slug') },
    };
  },
};
