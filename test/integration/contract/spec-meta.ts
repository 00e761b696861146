import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Expected response of `GET /v1/data/meta/` (the `schemas` array), transcribed
 * independently from the service spec (SPEC_FILE, beside the repository):
 *   - 2.1 Schema, 2.2 Measure, 2.3 Dimension: field sets and fixed values
 *     (cumulativeTotal/cumulative false, type 'number', isVisible true,
 *     suggestFilterValues true, segments [], connectedComponent 1 only on
 *     PodcastEvents, WebEvents, WebEventsFromPodcastFunnel);
 *   - 2.4: cubes, titles, members (in spec order), aggTypes, formats,
 *     drillMembers and dimension types; abbreviated names (".countryCode")
 *     are expanded to "<Cube>.countryCode";
 *   - 4.1: order of the ten schemas.
 *
 * Conventions applied where the spec gives no value (Cube.js conventions):
 *   - shortTitle: the spec's shortTitle where given; otherwise the humanized
 *     member name (camelCase and snake_case split into words, each word
 *     capitalized: parsed_ua -> "Parsed Ua", ip4 -> "Ip4", count -> "Count").
 *   - title: "<cube title> <shortTitle>" for every measure and dimension.
 *   - drillMembersGrouped: { measures: [], dimensions: <drillMembers> }.
 *   - `format` key is omitted (not set to undefined) unless the spec says percent.
 */

/** The spec, from the repository's root: the project's shared folder lies beside the repository. */
export const SPEC_FILE = path.join('..', 'shared', 'spec', '000_b2b14efd30af8f33.txt');

/** The spec's text; a checkout without ../shared beside it fails here, naming where the spec was looked for. */
export function readSpec(): string {
  const file = path.resolve(__dirname, '..', '..', '..', SPEC_FILE);
  if (!existsSync(file)) throw new Error(`the service spec is not at ${SPEC_FILE} (${file}): put the project's shared folder beside the repository`);
  return readFileSync(file, 'utf8');
}

export interface ExpectedMeasure {
  name: string;
  title: string;
  shortTitle: string;
  format?: 'percent';
  cumulativeTotal: false;
  cumulative: false;
  type: 'number';
  aggType: 'count' | 'sum' | 'number';
  drillMembers: string[];
  drillMembersGrouped: { measures: string[]; dimensions: string[] };
  isVisible: true;
}

export interface ExpectedDimension {
  name: string;
  title: string;
  shortTitle: string;
  type: 'string' | 'number' | 'time' | 'boolean';
  suggestFilterValues: true;
  isVisible: true;
}

export interface ExpectedSchema {
  name: string;
  title: string;
  connectedComponent?: 1;
  measures: ExpectedMeasure[];
  dimensions: ExpectedDimension[];
  segments: [];
}

type AggType = ExpectedMeasure['aggType'];
type DimType = ExpectedDimension['type'];
/** A dimension as written in spec 2.4: bare name (type string) or [name, type]. */
type DimSpec = string | [string, DimType];

interface Cube {
  name: string;
  title: string;
}

/** Cube.js-style humanization: countryCode -> "Country Code", se_value_sum -> "Se Value Sum". */
function humanize(member: string): string {
  return member
    .replace(/([A-Z\d]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .split('_')
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join(' ');
}

/** Expand ".member" to "<Cube>.member"; full names are kept as written. */
function qualify(cube: Cube, member: string): string {
  return member.startsWith('.') ? `${cube.name}${member}` : member;
}

function measure(cube: Cube, member: string, aggType: AggType, shortTitle: string, drill: string[] = [], format?: 'percent'): ExpectedMeasure {
  const drillMembers = drill.map((d) => qualify(cube, d));
  return {
    name: `${cube.name}.${member}`,
    title: `${cube.title} ${shortTitle}`,
    shortTitle,
    ...(format ? { format } : {}),
    cumulativeTotal: false,
    cumulative: false,
    type: 'number',
    aggType,
    drillMembers,
    drillMembersGrouped: { measures: [], dimensions: [...drillMembers] },
    isVisible: true,
  };
}

function dimension(cube: Cube, member: string, type: DimType): ExpectedDimension {
  const shortTitle = humanize(member);
  return {
    name: `${cube.name}.${member}`,
    title: `${cube.title} ${shortTitle}`,
    shortTitle,
    type,
    suggestFilterValues: true,
    isVisible: true,
  };
}

function dimensions(cube: Cube, list: DimSpec[]): ExpectedDimension[] {
  return list.map((d) => (typeof d === 'string' ? dimension(cube, d, 'string') : dimension(cube, d[0], d[1])));
}

function schema(cube: Cube, measures: ExpectedMeasure[], dims: DimSpec[], connectedComponent?: 1): ExpectedSchema {
  return {
    name: cube.name,
    title: cube.title,
    ...(connectedComponent ? { connectedComponent } : {}),
    measures,
    dimensions: dimensions(cube, dims),
    segments: [],
  };
}

// ---------------------------------------------------------------------------
// Cubes (spec 2.4)
// ---------------------------------------------------------------------------

const channelRanks = (): ExpectedSchema => {
  const c: Cube = { name: 'ChannelRanks', title: 'Channel Ranks' };
  return schema(
    c,
    [
      measure(c, 'avgRank', 'number', 'Average Rank', ['ChannelRanks.category', '.countryCode', '.countryName', '.platform', '.podcastId']),
      measure(c, 'rankSum', 'sum', 'Rank Sum'),
      measure(c, 'count', 'count', 'Count'),
    ],
    [['rank', 'number'], 'countryCode', 'countryName', 'platform', 'podcastId', 'category', 'podcastSlug', ['timestamp', 'time'], 'date'],
  );
};

const downloadEvents = (): ExpectedSchema => {
  const c: Cube = { name: 'DownloadEvents', title: 'Download Events' };
  return schema(c, [measure(c, 'count', 'count', humanize('count'), ['DownloadEvents.ip4'])], ['ip', 'ip4', ['ts', 'time'], 'token']);
};

const downloads = (): ExpectedSchema => {
  const c: Cube = { name: 'Downloads', title: 'Downloads' };
  return schema(
    c,
    [measure(c, 'count', 'count', humanize('count'), ['Downloads.city', '.country', '.referer', '.parsed_ua'])],
    [['ts', 'time'], 'city', 'country', 'referer', 'parsed_ua', 'token', 'url', 'continent', 'os_name', 'device_type', 'org', 'timezone'],
  );
};

const episodeRanks = (): ExpectedSchema => {
  const c: Cube = { name: 'EpisodeRanks', title: 'Episode Ranks' };
  return schema(
    c,
    [
      measure(c, 'avgRank', 'number', 'Average Rank', ['EpisodeRanks.category', '.countryCode', '.episodeId']),
      measure(c, 'rankSum', 'sum', 'Rank Sum'),
      measure(c, 'count', 'count', 'Count'),
    ],
    [['rank', 'number'], 'countryCode', 'platform', 'episodeId', 'episodeTitle', 'category', 'podcastSlug', ['timestamp', 'time'], 'date'],
  );
};

/** LinksAdvancedAnalytics and LinksDashboard have identical member lists (spec 2.4). */
const linksCube = (name: string, title: string): ExpectedSchema => {
  const c: Cube = { name, title };
  return schema(
    c,
    [
      measure(c, 'count', 'count', 'Count'),
      measure(c, 'linkViewCount', 'count', 'Views'),
      measure(c, 'uniqueLinkViewCount', 'count', 'Unique Views'),
      measure(c, 'openLinkViewCount', 'count', 'Link Opens'),
      measure(c, 'conversionRate', 'number', 'Conversion Rate', [], 'percent'),
    ],
    [
      'utmSource',
      'utmMedium',
      'utmCampaign',
      'utmSourceMedium',
      'link',
      'linkViewer',
      ['isUniqueLinkView', 'boolean'],
      'uaFamily',
      'openParam',
      'refererDomain',
      'countryName',
      'countryCode',
      'languageName',
      ['timestamp', 'time'],
    ],
  );
};

const linksBasicAnalytics = (): ExpectedSchema => {
  const c: Cube = { name: 'LinksBasicAnalytics', title: 'Links Basic Analytics' };
  return schema(
    c,
    [measure(c, 'linkViewCount', 'count', 'Views'), measure(c, 'uniqueLinkViewCount', 'count', 'Unique Views')],
    ['link', ['timestamp', 'time']],
  );
};

const podcastEvents = (): ExpectedSchema => {
  const c: Cube = { name: 'PodcastEvents', title: 'Podcast Events' };
  return schema(
    c,
    [measure(c, 'count', 'count', humanize('count'), ['PodcastEvents.city', '.country'])],
    [
      'ip4',
      'ipBlacklisted',
      'url',
      'redirectUrl',
      'rawUa',
      'parsedUa',
      'token',
      'byteRangeLargerOne',
      'city',
      'country',
      'byteRange',
      'referer',
      'detailsKey',
      'detailsValue',
      ['ts', 'time'],
    ],
    1,
  );
};

const webEvents = (): ExpectedSchema => {
  const c: Cube = { name: 'WebEvents', title: 'Web Events' };
  return schema(
    c,
    [
      measure(c, 'count', 'count', 'Count', ['WebEvents.city', '.country', '.pageTitle', '.sessionId', '.appId', '.eventId']),
      measure(c, 'se_value_sum', 'sum', 'Se Value Sum'),
    ],
    [
      'ua',
      'ip4',
      'se_category',
      'se_action',
      'se_label',
      ['se_value', 'number'],
      ['latitude', 'string'],
      ['longitude', 'string'],
      'city',
      'country',
      'pageTitle',
      'sessionId',
      'pageUrl',
      'appId',
      'origin',
      'eventId',
      ['trackTs', 'time'],
      ['ingestTs', 'time'],
    ],
    1,
  );
};

const webEventsFromPodcastFunnel = (): ExpectedSchema => {
  const c: Cube = { name: 'WebEventsFromPodcastFunnel', title: 'Web Events from Podcast Funnel' };
  return schema(
    c,
    [measure(c, 'conversions', 'count', 'Conversions'), measure(c, 'conversionsPercent', 'number', 'Conversions Percent', [], 'percent')],
    [
      ['time', 'time'],
      ['step', 'string'],
    ],
    1,
  );
};

/** The `schemas` array of GET /v1/data/meta/, in the order of spec 4.1. */
export const EXPECTED_SCHEMAS: ExpectedSchema[] = [
  channelRanks(),
  downloadEvents(),
  downloads(),
  episodeRanks(),
  linksCube('LinksAdvancedAnalytics', 'Links Advanced Analytics'),
  linksBasicAnalytics(),
  linksCube('LinksDashboard', 'Links Dashboard'),
  podcastEvents(),
  webEvents(),
  webEventsFromPodcastFunnel(),
];
