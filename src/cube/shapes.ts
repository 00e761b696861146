/**
 * The documented response shapes (spec 2.1–2.5), built field by field from
 * what Cube returns. A whitelist on purpose: Cube adds fields of its own
 * (`public`, `type`, `description`, `meta`, `dbType`, …) that the contract
 * does not have, and a `description` written for data engineers must not
 * leak into the API.
 */

export interface Measure {
  name: string;
  title: string;
  shortTitle: string;
  format?: string;
  cumulativeTotal: boolean;
  cumulative: boolean;
  type: string;
  aggType: string;
  drillMembers: string[];
  drillMembersGrouped: { measures: string[]; dimensions: string[] };
  isVisible: boolean;
}

export interface Dimension {
  name: string;
  title: string;
  shortTitle: string;
  type: string;
  suggestFilterValues: boolean;
  isVisible: boolean;
}

export interface Segment {
  name: string;
  title: string;
  shortTitle: string;
  isVisible: boolean;
}

export interface Schema {
  name: string;
  title: string;
  connectedComponent?: number;
  measures: Measure[];
  dimensions: Dimension[];
  segments: Segment[];
}

export interface MemberAnnotation {
  title: string;
  shortTitle: string;
  type: string;
  format?: string;
  drillMembers?: string[];
  drillMembersGrouped?: { measures: string[]; dimensions: string[] };
}

export interface LoadResult {
  query: Record<string, unknown>;
  data: Record<string, unknown>[];
  lastRefreshTime: string;
  annotation: {
    measures: Record<string, MemberAnnotation>;
    dimensions: Record<string, MemberAnnotation>;
    segments: Record<string, MemberAnnotation>;
    timeDimensions: Record<string, MemberAnnotation>;
  };
  slowQuery: boolean;
  total: number | null;
}

/** The answer to `queryType: 'multi'`, the shape Cube's own clients read. */
export interface MultiLoadResult {
  queryType: string;
  results: LoadResult[];
  pivotQuery: Record<string, unknown>;
  slowQuery: boolean;
}

// Cube's own objects are loosely typed; these helpers read them defensively.
type Loose = Record<string, any>;

export function toSchema(cube: Loose): Schema {
  return {
    name: cube.name,
    title: cube.title,
    ...(cube.connectedComponent !== undefined ? { connectedComponent: cube.connectedComponent } : {}),
    measures: (cube.measures ?? []).map(toMeasure),
    dimensions: (cube.dimensions ?? []).map(toDimension),
    segments: (cube.segments ?? []).map(toSegment),
  };
}

function toMeasure(m: Loose): Measure {
  return {
    name: m.name,
    title: m.title,
    shortTitle: m.shortTitle,
    ...(m.format !== undefined ? { format: m.format } : {}),
    cumulativeTotal: m.cumulativeTotal,
    cumulative: m.cumulative,
    type: m.type,
    aggType: m.aggType,
    drillMembers: m.drillMembers ?? [],
    drillMembersGrouped: drillGroups(m.drillMembersGrouped),
    isVisible: m.isVisible,
  };
}

function toDimension(d: Loose): Dimension {
  return {
    name: d.name,
    title: d.title,
    shortTitle: d.shortTitle,
    type: d.type,
    suggestFilterValues: d.suggestFilterValues,
    isVisible: d.isVisible,
  };
}

function toSegment(s: Loose): Segment {
  return { name: s.name, title: s.title, shortTitle: s.shortTitle, isVisible: s.isVisible };
}

function drillGroups(groups: Loose | undefined): { measures: string[]; dimensions: string[] } {
  return { measures: groups?.measures ?? [], dimensions: groups?.dimensions ?? [] };
}

/** Keys of the normalized query that are always echoed (spec 4.2); others only when the client sent them. */
const ALWAYS_ECHOED = ['measures', 'dimensions', 'timeDimensions', 'timezone', 'order', 'filters'] as const;
const EMPTY_DEFAULTS: Record<(typeof ALWAYS_ECHOED)[number], unknown> = {
  measures: [],
  dimensions: [],
  timeDimensions: [],
  timezone: 'UTC',
  order: [],
  filters: [],
};

export function toLoadResult(result: Loose, sentQuery: Loose): LoadResult {
  return {
    query: echoQuery(result.query ?? {}, sentQuery),
    data: result.data ?? [],
    lastRefreshTime: result.lastRefreshTime,
    annotation: {
      measures: annotations(result.annotation?.measures, true),
      dimensions: annotations(result.annotation?.dimensions, false),
      segments: annotations(result.annotation?.segments, false),
      timeDimensions: annotations(result.annotation?.timeDimensions, false),
    },
    slowQuery: Boolean(result.slowQuery),
    total: typeof result.total === 'number' ? result.total : null,
  };
}

export function toMultiLoadResult(result: Loose, sentQuery: Loose | Loose[]): MultiLoadResult {
  const sent = (i: number): Loose => (Array.isArray(sentQuery) ? (sentQuery[i] ?? {}) : sentQuery);
  return {
    queryType: result.queryType,
    results: (result.results ?? []).map((r: Loose, i: number) => toLoadResult(r, sent(i))),
    pivotQuery: result.pivotQuery,
    slowQuery: Boolean(result.slowQuery),
  };
}

function echoQuery(normalized: Loose, sent: Loose): Record<string, unknown> {
  const echoed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(normalized)) {
    if ((ALWAYS_ECHOED as readonly string[]).includes(key) || key in sent) echoed[key] = value;
  }
  for (const key of ALWAYS_ECHOED) echoed[key] ??= EMPTY_DEFAULTS[key];
  return echoed;
}

function annotations(entries: Loose | undefined, withDrill: boolean): Record<string, MemberAnnotation> {
  const out: Record<string, MemberAnnotation> = {};
  for (const [member, a] of Object.entries(entries ?? {})) {
    out[member] = {
      title: a.title,
      shortTitle: a.shortTitle,
      type: a.type,
      ...(a.format !== undefined ? { format: a.format } : {}),
      ...(withDrill ? { drillMembers: a.drillMembers ?? [], drillMembersGrouped: drillGroups(a.drillMembersGrouped) } : {}),
    };
  }
  return out;
}
