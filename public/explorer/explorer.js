// The explorer: builds a load query from /v1/data/meta/, runs it, shows rows, a chart and the query's other forms.
// The key stays in this tab's sessionStorage; the query lives in the URL (#q=) so a link reopens it. The controls
// are the query: the JSON shown, the link and what Run sends are all built from them (buildQuery), and a link is
// applied to them once the cubes are known, saying what of it they cannot show.
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v;
    else if (v !== false && v !== undefined) node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children);
  return node;
};
/** Every filter operator the API takes (docs/reference/query-language.md), so a link's filter keeps its operator. */
const OPERATORS = (
  'equals notEquals contains notContains startsWith notStartsWith endsWith notEndsWith in notIn gt gte lt lte set notSet ' +
  'inDateRange notInDateRange onTheDate beforeDate beforeOrOnDate afterDate afterOrOnDate measureFilter'
).split(' ');
/** Operators that take no values. */
const WITHOUT_VALUES = new Set(['set', 'notSet', 'measureFilter']);
const MAX_ROWS_SHOWN = 1000;
/** Lines a chart draws at most; more are unreadable. */
const SERIES_SHOWN = 8;
const picked = { measures: new Set(), dimensions: new Set() };
/** The spec calls the cubes `schemas` (GET /v1/data/meta/ answers `{ schemas }`). */
let cubes = [];
let metaLoaded = false;
/** The query of the link the page was opened with, until the cubes are known and it is applied (or why it cannot be). */
let linked = readLink();

const key = () => sessionStorage.getItem('explorer-key') ?? '';

async function api(path, body) {
  const res = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key(), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) throw new Error(json?.error ?? `${res.status} ${res.statusText}`);
  return { json, res };
}

function showError(message) {
  $('error').hidden = !message;
  $('error').textContent = message ? `Error: ${message}` : '';
}

async function loadMeta() {
  if (!key()) {
    $('status').textContent = 'Enter an API key to list the cubes.';
    return;
  }
  try {
    cubes = (await api('/v1/data/meta/')).json.schemas;
    metaLoaded = true;
    showError('');
    $('status').textContent = `${cubes.length} cubes.`;
  } catch (err) {
    cubes = [];
    metaLoaded = false;
    showError(err.message);
  }
  renderMembers();
}

function allMembers() {
  return cubes.flatMap((c) => [...c.measures.map((m) => ({ ...m, kind: 'measures' })), ...c.dimensions.map((d) => ({ ...d, kind: 'dimensions' }))]);
}

function renderMembers() {
  const term = $('search').value.trim().toLowerCase();
  const list = $('member-list');
  list.replaceChildren();
  for (const cube of cubes) {
    const members = [...cube.measures.map((m) => ['measures', m]), ...cube.dimensions.map((d) => ['dimensions', d])].filter(
      ([, m]) => !term || `${m.name} ${m.title ?? ''}`.toLowerCase().includes(term),
    );
    if (members.length === 0) continue;
    const group = el('fieldset', {}, el('legend', { text: cube.title ?? cube.name }));
    for (const [kind, m] of members) {
      const id = `m-${m.name}`;
      const box = el('input', { type: 'checkbox', id, 'data-kind': kind, value: m.name, checked: picked[kind].has(m.name) });
      box.addEventListener('change', () => {
        if (box.checked) picked[kind].add(m.name);
        else picked[kind].delete(m.name);
        refreshSelects();
        showQuery();
      });
      group.append(
        el(
          'div',
          { class: 'member' },
          box,
          el('label', { for: id, title: m.description ?? '', text: `${m.name}${kind === 'measures' ? ' (measure)' : m.type === 'time' ? ' (time)' : ''}` }),
        ),
      );
    }
    list.append(group);
  }
  refreshSelects();
}

function fillSelect(select, values, first) {
  const current = select.value;
  select.replaceChildren(el('option', { value: '', text: first }), ...values.map((v) => el('option', { value: v, text: v })));
  select.value = values.includes(current) ? current : '';
}

function refreshSelects() {
  const members = allMembers();
  fillSelect(
    $('time-dimension'),
    members.filter((m) => m.type === 'time').map((m) => m.name),
    'none',
  );
  fillSelect($('order-member'), [...picked.measures, ...picked.dimensions, $('time-dimension').value].filter(Boolean), 'default');
  for (const select of document.querySelectorAll('.filter-member'))
    fillSelect(
      select,
      members.map((m) => m.name),
      'member…',
    );
}

function addFilter(filter = { member: '', operator: 'equals', values: [] }) {
  const n = $('filters').children.length + 1;
  const member = el('select', { class: 'filter-member', id: `filter-member-${n}` });
  fillSelect(
    member,
    allMembers().map((m) => m.name),
    'member…',
  );
  member.value = filter.member;
  const operator = el('select', { class: 'filter-operator', id: `filter-operator-${n}` }, ...OPERATORS.map((o) => el('option', { text: o })));
  operator.value = filter.operator;
  // One value a line: values hold commas ("KHTML, like Gecko"), which a comma-separated field split into two.
  const values = el('textarea', {
    class: 'filter-values',
    id: `filter-values-${n}`,
    placeholder: 'one value a line',
  });
  values.value = (filter.values ?? []).join('\n');
  // As tall as its lines, so no value scrolls out of sight.
  const fit = () => {
    values.rows = Math.max(2, values.value.split('\n').length);
  };
  values.addEventListener('input', fit);
  fit();
  const remove = el('button', { type: 'button', text: 'Remove', 'aria-label': `Remove filter ${n}` });
  const row = el(
    'div',
    { class: 'filter' },
    el('label', { for: member.id, text: 'Member' }),
    member,
    el('label', { for: operator.id, text: 'Operator' }),
    operator,
    el('label', { for: values.id, text: 'Values' }),
    values,
    remove,
  );
  remove.addEventListener('click', () => {
    row.remove();
    showQuery();
  });
  row.addEventListener('change', showQuery);
  $('filters').append(row);
}

function buildQuery() {
  const query = {};
  if (picked.measures.size) query.measures = [...picked.measures];
  if (picked.dimensions.size) query.dimensions = [...picked.dimensions];
  const time = $('time-dimension').value;
  if (time) {
    const td = { dimension: time };
    if ($('granularity').value) td.granularity = $('granularity').value;
    const range = rangeOnScreen();
    if (range !== undefined) td.dateRange = range;
    query.timeDimensions = [td];
  }
  const filters = [...document.querySelectorAll('.filter')]
    .map((row) => ({
      member: row.querySelector('.filter-member').value,
      operator: row.querySelector('.filter-operator').value,
      values: row
        .querySelector('.filter-values')
        .value.split(/\r?\n/)
        .map((v) => v.trim())
        .filter(Boolean),
    }))
    .filter((f) => f.member)
    .map((f) => (WITHOUT_VALUES.has(f.operator) ? { member: f.member, operator: f.operator } : f));
  if (filters.length) query.filters = filters;
  if ($('order-member').value) query.order = [[$('order-member').value, $('order-dir').value]];
  if ($('limit').value) query.limit = Number($('limit').value);
  if ($('offset').value) query.offset = Number($('offset').value);
  if ($('timezone').value.trim()) query.timezone = $('timezone').value.trim();
  return query;
}

/** The date range the controls show: two ends, a phrase, or none (all time); both ends only when both are given. */
function rangeOnScreen() {
  const kind = $('range-kind').value;
  if (kind === 'relative') return $('date-relative').value.trim() || undefined;
  if (kind === 'dates' && $('date-from').value.trim() && $('date-to').value.trim()) return [$('date-from').value.trim(), $('date-to').value.trim()];
  return undefined;
}

/** Shows the inputs of the picked kind of date range only. */
function showRangeInputs() {
  for (const span of document.querySelectorAll('.range')) span.hidden = span.dataset.range !== $('range-kind').value;
}

/** The link's query (#q=), or why it cannot be read; null without one. */
function readLink() {
  const text = new URLSearchParams(location.hash.slice(1)).get('q');
  if (text === null) return null;
  try {
    const query = JSON.parse(text);
    if (typeof query !== 'object' || query === null || Array.isArray(query)) throw new Error('not an object');
    return { query: canonical(query) };
  } catch {
    return { error: 'The query in the link is not a JSON object.' };
  }
}

/**
 * The query in the one form the page builds, where the API takes two: order as [member, direction] pairs, a
 * filter's `member` (not `dimension`), values as text, digits of limit and offset as numbers. Anything else is kept
 * as it is, so what the page cannot show stays visible as a difference.
 */
function canonical(query) {
  const q = { ...query };
  if (q.order && typeof q.order === 'object' && !Array.isArray(q.order)) q.order = Object.entries(q.order);
  if (Array.isArray(q.filters)) q.filters = q.filters.map((f) => (f && typeof f === 'object' && !('or' in f) && !('and' in f) ? canonicalFilter(f) : f));
  for (const key of ['limit', 'offset']) if (typeof q[key] === 'string' && /^\d+$/.test(q[key])) q[key] = Number(q[key]);
  return q;
}

function canonicalFilter({ dimension, member = dimension, operator, values, ...rest }) {
  if (WITHOUT_VALUES.has(operator) && (values === undefined || (Array.isArray(values) && values.length === 0))) return { ...rest, member, operator };
  return { ...rest, member, operator, values: Array.isArray(values) ? values.map((v) => (typeof v === 'number' ? String(v) : v)) : values };
}

/** JSON with every object's keys in order, so two queries compare by content. */
const stable = (value) =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );

/** The names a query gives its members, each where it stands in the query. */
function namesIn(query) {
  const list = (v) => (Array.isArray(v) ? v : []);
  const filterNames = (filters) => list(filters).flatMap((f) => ((f?.or ?? f?.and) ? filterNames(f.or ?? f.and) : [f?.member]));
  return [
    ...list(query.measures),
    ...list(query.dimensions),
    ...list(query.timeDimensions).map((t) => t?.dimension),
    ...filterNames(query.filters),
    ...list(query.order).map((o) => o?.[0]),
  ].filter((name) => typeof name === 'string');
}

/** The query without the parts that name a member of `gone`. */
function without(query, gone) {
  const q = { ...query };
  const keep = (name) => !gone.has(name);
  for (const key of ['measures', 'dimensions']) if (Array.isArray(q[key])) q[key] = q[key].filter(keep);
  if (Array.isArray(q.timeDimensions)) q.timeDimensions = q.timeDimensions.filter((t) => keep(t?.dimension));
  if (Array.isArray(q.filters)) q.filters = q.filters.filter((f) => !('member' in (f ?? {})) || keep(f.member));
  if (Array.isArray(q.order)) q.order = q.order.filter((o) => keep(o?.[0]));
  for (const [key, value] of Object.entries(q)) if (Array.isArray(value) && value.length === 0) delete q[key];
  return q;
}

/**
 * Puts a link's query on the controls, then says what of it they do not show: the members that no longer exist,
 * and each part the page cannot show (a second time dimension or order entry, an or/and filter, a key it has no
 * control for), found by comparing the query the controls now build with the link's. Run sends what they show.
 */
function applyLink(query) {
  const names = new Set(allMembers().map((m) => m.name));
  const gone = new Set(namesIn(query).filter((name) => !names.has(name)));
  const wanted = without(query, gone);
  applyQuery(wanted);
  const built = buildQuery();
  const differ = [...new Set([...Object.keys(wanted), ...Object.keys(built)])].filter((key) => stable(wanted[key]) !== stable(built[key]));
  const notes = [];
  if (gone.size) notes.push(`The link names members that no longer exist: ${[...gone].join(', ')}. They are left out.`);
  if (differ.length) notes.push(`This page cannot show these parts of the link's query: ${differ.join(', ')}. They are left out or shown as the page can.`);
  if (notes.length) notes.push('Run sends the query as it is shown.');
  showNotice(notes.join(' '));
}

function showNotice(message) {
  $('notice').hidden = !message;
  $('notice').textContent = message;
}

function applyQuery(query) {
  const names = (kind) => (Array.isArray(query[kind]) ? query[kind].filter((n) => typeof n === 'string') : []);
  picked.measures = new Set(names('measures'));
  picked.dimensions = new Set(names('dimensions'));
  renderMembers();
  const td = Array.isArray(query.timeDimensions) ? query.timeDimensions[0] : undefined;
  $('time-dimension').value = td?.dimension ?? '';
  $('granularity').value = td ? (td.granularity ?? '') : 'day';
  const range = td?.dateRange;
  $('range-kind').value = Array.isArray(range) ? 'dates' : typeof range === 'string' ? 'relative' : '';
  [$('date-from').value, $('date-to').value] = Array.isArray(range) ? [range[0] ?? '', range[1] ?? ''] : ['', ''];
  $('date-relative').value = typeof range === 'string' ? range : '';
  showRangeInputs();
  $('filters').replaceChildren();
  for (const f of Array.isArray(query.filters) ? query.filters : []) if (f && typeof f === 'object' && 'member' in f) addFilter(f);
  refreshSelects();
  const [order] = Array.isArray(query.order) ? query.order : [];
  $('order-member').value = order?.[0] ?? '';
  $('order-dir').value = order?.[1] ?? 'desc';
  $('limit').value = query.limit ?? '';
  $('offset').value = query.offset ?? '';
  $('timezone').value = typeof query.timezone === 'string' ? query.timezone : '';
}

/**
 * Puts the link's query on the page once the cubes are known, which needs a key: a link opened in a new tab waits
 * for one, and until then keeps the address as it came (applied to no cubes, its members would be dropped).
 */
function openLink() {
  if (linked?.error) {
    showError(linked.error);
    linked = null;
  } else if (linked && metaLoaded) {
    applyLink(linked.query);
    linked = null;
  }
  if (linked) showNotice('The query in the link opens once the cubes are listed: enter an API key.');
  showQuery();
}

const shellQuote = (s) => `'${s.replaceAll("'", `'\\''`)}'`;

function showQuery() {
  const query = buildQuery();
  if (!linked) history.replaceState(null, '', `#q=${encodeURIComponent(JSON.stringify(query))}`);
  $('json-query').textContent = JSON.stringify(query, null, 2);
  $('curl').textContent =
    `curl -X POST -H ${shellQuote(`x-api-key: ${key() || 'YOUR_KEY'}`)} ${shellQuote(`${location.origin}/v1/data/load/`)} \\\n  -d ${shellQuote(JSON.stringify({ query }))}`;
  return query;
}

/** Why the date range on screen cannot run, if it cannot: one end only would run over all time and look filtered. */
function rangeProblem() {
  if (!$('time-dimension').value) return '';
  const kind = $('range-kind').value;
  if (kind === 'dates' && !$('date-from').value.trim() !== !$('date-to').value.trim()) return 'Give both From and To for a date range, or neither.';
  if (kind === 'relative' && !$('date-relative').value.trim()) return 'Give a relative range (e.g. last 7 days), or pick all time.';
  return '';
}

async function run() {
  const query = showQuery();
  if (rangeProblem()) {
    showError(rangeProblem());
    return;
  }
  showError('');
  $('truncated').hidden = true;
  $('status').textContent = 'Running…';
  const started = performance.now();
  const sql = api('/cubejs-api/v1/sql', { query }).then(
    ({ json }) => {
      $('sql').textContent = json.sql?.sql?.[0] ?? JSON.stringify(json, null, 2);
    },
    (err) => {
      $('sql').textContent = `(no SQL: ${err.message})`;
    },
  );
  try {
    const { json, res } = await api('/v1/data/load/', { query });
    const rows = json.data;
    $('truncated').hidden = res.headers.get('Result-Truncated') !== 'true';
    $('status').textContent =
      `${rows.length} rows in ${Math.round(performance.now() - started)} ms${rows.length > MAX_ROWS_SHOWN ? `; the table shows the first ${MAX_ROWS_SHOWN}` : ''}.`;
    renderTable(rows, query);
    renderChart(rows, query);
  } catch (err) {
    $('status').textContent = 'The query failed.';
    showError(err.message);
    $('table').replaceChildren();
    $('chart').replaceChildren();
  }
  await sql;
}

function columnsOf(query) {
  const td = query.timeDimensions?.[0];
  const time = td?.granularity ? [`${td.dimension}.${td.granularity}`] : [];
  return [...time, ...(query.dimensions ?? []), ...(query.measures ?? [])];
}

function renderTable(rows, query) {
  const columns = columnsOf(query);
  $('table').replaceChildren(
    el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col', text: c })))),
    el('tbody', {}, ...rows.slice(0, MAX_ROWS_SHOWN).map((row) => el('tr', {}, ...columns.map((c) => el('td', { text: row[c] ?? '' }))))),
  );
}

const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag, attrs) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};

/** The label of the bucket after `label` (the answer's local 'YYYY-MM-DDTHH:mm:ss.sss', read as UTC: only steps are compared). */
function nextBucket(label, granularity) {
  const t = new Date(`${label.slice(0, 23)}Z`);
  const steps = { second: [0, 1e3], minute: [0, 6e4], hour: [0, 36e5], day: [0, 864e5], week: [0, 7 * 864e5], month: [1, 0], quarter: [3, 0], year: [12, 0] };
  const [months, ms] = steps[granularity] ?? [0, 0];
  if (months) t.setUTCMonth(t.getUTCMonth() + months);
  return new Date(t.getTime() + ms).toISOString().slice(0, 19);
}

/**
 * A line over time when the query has a granularity, bars otherwise; the first measure only. The answer has no row
 * for a bucket without data, so a line breaks there (and at a null value) and each point sits at its time: joined
 * across the gap, the line would show a value where there is none. Other dimensions beside the time split the rows
 * into series, one line each: drawn as one, the line would zigzag between series within a bucket. Every row of the
 * answer is drawn, not only the rows the table shows; what is left out (series past SERIES_SHOWN, bars past
 * MAX_ROWS_SHOWN) is said in the caption.
 */
function renderChart(rows, query) {
  const chart = $('chart');
  chart.replaceChildren();
  const measure = query.measures?.[0];
  if (!measure || rows.length === 0) return;
  const td = query.timeDimensions?.[0];
  const timeKey = td?.granularity ? `${td.dimension}.${td.granularity}` : null;
  const dimensions = query.dimensions ?? [];
  const nameOf = (row) => dimensions.map((d) => (row[d] === null || row[d] === undefined ? '(null)' : String(row[d]) || '(empty)')).join(' · ');
  const valueOf = (row) => (row[measure] === null || row[measure] === undefined ? null : Number(row[measure]));
  const W = 640,
    H = 240,
    pad = 36;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${timeKey ? 'Line' : 'Bar'} chart of ${measure}` });
  root.append(svg('line', { x1: pad, y1: H - pad, x2: W - pad, y2: H - pad, class: 'axis' }));
  const scale = (values) => {
    const max = Math.max(...values, 0) || 1;
    const maxLabel = svg('text', { x: 2, y: pad, class: 'tick' });
    maxLabel.textContent = max.toLocaleString();
    root.append(maxLabel);
    return (v) => H - pad - (v / max) * (H - 2 * pad);
  };
  const notes = [];
  const legend = el('ul', { class: 'legend' });
  if (timeKey) {
    const series = new Map();
    for (const row of rows) {
      const name = nameOf(row);
      if (!series.has(name)) series.set(name, []);
      series.get(name).push({ label: String(row[timeKey]), value: valueOf(row) });
    }
    const total = (points) => points.reduce((sum, p) => sum + (p.value ?? 0), 0);
    const shown = [...series].sort((a, b) => total(b[1]) - total(a[1])).slice(0, SERIES_SHOWN);
    if (series.size > shown.length) notes.push(`the ${shown.length} of ${series.size} series with the largest totals`);
    for (const [, points] of shown) points.sort((a, b) => a.label.localeCompare(b.label));
    const at = (p) => Date.parse(`${p.label.slice(0, 23)}Z`);
    const times = shown.flatMap(([, points]) => points.map(at));
    const [first, last] = [Math.min(...times), Math.max(...times)];
    const x = (p) => pad + (last === first ? (W - 2 * pad) / 2 : ((at(p) - first) * (W - 2 * pad)) / (last - first));
    const y = scale(shown.flatMap(([, points]) => points.map((p) => p.value ?? 0)));
    shown.forEach(([name, points], s) => {
      const drawn = (i) => i >= 0 && i < points.length && points[i].value !== null;
      const joined = (i) => drawn(i) && drawn(i - 1) && points[i].label.slice(0, 19) === nextBucket(points[i - 1].label, td.granularity);
      const path = points.map((p, i) => (drawn(i) ? `${joined(i) ? 'L' : 'M'}${x(p).toFixed(1)},${y(p.value).toFixed(1)}` : '')).join('');
      const line = svg('path', { d: path, class: `series s${s}` });
      const title = svg('title', {});
      title.textContent = name || measure;
      line.append(title);
      root.append(line);
      // A point joined to neither neighbour would draw nothing on its own.
      points.forEach((p, i) => {
        if (drawn(i) && !joined(i) && !joined(i + 1))
          root.append(svg('circle', { cx: x(p).toFixed(1), cy: y(p.value).toFixed(1), r: 2.5, class: `point s${s}` }));
      });
      if (dimensions.length > 0) legend.append(el('li', { class: `s${s}`, text: name }));
    });
    for (const [time, anchor] of [
      [first, 'start'],
      [last, 'end'],
    ]) {
      const t = svg('text', { x: anchor === 'start' ? pad : W - pad, y: H - pad + 16, class: 'tick', 'text-anchor': anchor });
      t.textContent = new Date(time).toISOString().slice(0, 10);
      root.append(t);
    }
  } else {
    const bars = rows.slice(0, MAX_ROWS_SHOWN);
    if (rows.length > bars.length) notes.push(`the first ${bars.length} of ${rows.length} rows`);
    const y = scale(bars.map((row) => valueOf(row) ?? 0));
    const w = (W - 2 * pad) / bars.length;
    bars.forEach((row, i) => {
      const value = valueOf(row);
      if (value === null) return;
      const bar = svg('rect', { x: pad + i * w + 1, y: y(value), width: Math.max(w - 2, 1), height: H - pad - y(value), class: 'bar' });
      const title = svg('title', {});
      title.textContent = `${nameOf(row) || measure}: ${value}`;
      bar.append(title);
      root.append(bar);
    });
  }
  const by = timeKey ?? dimensions.join(', ');
  chart.append(root, el('figcaption', { text: `${measure}${by ? ` by ${by}` : ''}${notes.length ? `; the chart shows ${notes.join('; ')}` : ''}` }), legend);
}

async function download(format) {
  // The query shown, as Run sends it, not the last one run: the controls may have changed since.
  const query = showQuery();
  if (rangeProblem()) {
    showError(rangeProblem());
    return;
  }
  showError('');
  const res = await fetch(`/v1/data/export?format=${format}`, { method: 'POST', headers: { 'x-api-key': key() }, body: JSON.stringify({ query }) });
  if (!res.ok) {
    showError((await res.json().catch(() => undefined))?.error ?? `${res.status} ${res.statusText}`);
    return;
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? `export.${format}`;
  const url = URL.createObjectURL(await res.blob());
  const link = el('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

$('key').value = key();
$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem('explorer-key', $('key').value.trim());
  loadMeta().then(openLink);
});
$('forget-key').addEventListener('click', () => {
  sessionStorage.removeItem('explorer-key');
  $('key').value = '';
  showQuery();
});
$('search').addEventListener('input', renderMembers);
$('add-filter').addEventListener('click', () => addFilter());
$('builder').addEventListener('change', () => {
  showRangeInputs();
  refreshSelects();
  showQuery();
});
$('run').addEventListener('click', run);
for (const button of document.querySelectorAll('[data-copy]')) {
  button.addEventListener('click', async () => {
    const label = button.textContent;
    try {
      await navigator.clipboard.writeText($(button.dataset.copy).textContent);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed: select the text instead';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
}
for (const button of document.querySelectorAll('[data-export]')) button.addEventListener('click', () => download(button.dataset.export));

$('timezones').append(...Intl.supportedValuesOf('timeZone').map((zone) => el('option', { value: zone })));
await loadMeta();
openLink();
