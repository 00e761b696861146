import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { seededRandom } from './seeded-random';
import { SNOWPLOW_FIELDS } from '../src/warehouse/import/sources/web-events';

/** Visitor n's address: one in five IPv6, the others IPv4, all distinct. */
export function visitorAddress(n: number): string {
  return n % 5 === 0
    ? `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::${(n % 7) + 1}`
    : `${10 + ((n >> 16) % 200)}.${(n >> 8) & 255}.${n & 255}.${(n % 250) + 1}`;
}

/**
 * Snowplow enriched events as its loaders write them (tab-separated, the 131
 * fields in their order, no header), `rows` of them, the same for every run
 * (a seeded generator): 30 days from 2026-01-01, a visitor per five events
 * (one in five over IPv6), sessions of page views and structured events
 * (player plays, a conversion in fifty), geo_* on half of them, the others
 * left to the IP database. Every event is of a kind the import stores and
 * has an id of its own, so an import takes every row.
 */
export async function writeWebEventsFile(file: string, rows: number): Promise<void> {
  const random = seededRandom(20261129);
  const index = new Map(SNOWPLOW_FIELDS.map((f, i) => [f, i]));
  const visitors = Math.max(1, Math.floor(rows / 5));
  const agents = [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  ];
  const places = [
    ['DE', 'Berlin', '52.52', '13.405'],
    ['FR', 'Paris', '48.857', '2.352'],
    ['US', 'Chicago', '41.878', '-87.63'],
  ];
  const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  const hex = (n: number, width: number) => Math.floor(n).toString(16).padStart(width, '0').slice(-width);
  const start = Date.parse('2026-01-01T00:00:00Z');
  const span = 30 * 86_400_000;
  const out = createWriteStream(file);
  let batch = '';
  for (let i = 0; i < rows; i++) {
    const visitor = Math.floor(random() * visitors);
    const at = start + Math.floor(random() * span);
    const r = random();
    const kind = r < 0.7 ? 'page_view' : 'struct';
    const place = visitor % 2 === 0 ? places[visitor % places.length] : undefined;
    const episode = Math.floor(random() * 25);
    const cells: string[] = new Array<string>(SNOWPLOW_FIELDS.length).fill('');
    const set = (field: string, value: string) => {
      cells[index.get(field) as number] = value;
    };
    set('app_id', `site-${visitor % 8}`);
    set('platform', 'web');
    set('etl_tstamp', time(at + 2_000));
    set('collector_tstamp', time(at + 400));
    set('dvce_created_tstamp', time(at));
    set('dvce_sent_tstamp', time(at + 150));
    set('derived_tstamp', time(at + 250));
    set('event', kind);
    set('event_id', `${hex(i, 8)}-${hex(random() * 0xffff, 4)}-4${hex(random() * 0xfff, 3)}-8${hex(random() * 0xfff, 3)}-${hex(random() * 2 ** 48, 12)}`);
    set('v_tracker', 'js-3.24.2');
    set('v_collector', 'ssc-3.2.0-kinesis');
    set('v_etl', 'snowplow-enrich-kinesis-4.2.0');
    set('user_ipaddress', visitorAddress(visitor));
    set('domain_userid', hex(visitor, 16));
    set('domain_sessionid', `${hex(visitor, 8)}-0000-4000-8000-${hex(Math.floor(at / 1_800_000), 12)}`);
    if (place) {
      set('geo_country', place[0]);
      set('geo_city', place[1]);
      set('geo_latitude', place[2]);
      set('geo_longitude', place[3]);
    }
    const host = `www.show-${visitor % 8}.example`;
    const path = kind === 'page_view' ? `/episodes/ep-${episode}` : '/shop';
    set('page_url', `https://${host}${path}`);
    set('page_title', `Episode ${episode} | Show ${visitor % 8}`);
    set('page_urlscheme', 'https');
    set('page_urlhost', host);
    set('page_urlport', '443');
    set('page_urlpath', path);
    if (kind === 'struct') {
      const converts = random() < 0.07;
      set('se_category', converts ? 'conversion' : 'player');
      set('se_action', converts ? 'purchase' : 'play');
      set('se_label', `ep-${episode}`);
      if (converts) set('se_value', (5 + Math.floor(random() * 40)).toFixed(2));
    }
    set('useragent', agents[visitor % agents.length]);
    set('event_vendor', 'com.snowplowanalytics.snowplow');
    set('event_name', kind === 'page_view' ? 'page_view' : 'event');
    set('event_format', 'jsonschema');
    set('event_version', '1-0-0');
    batch += `${cells.join('\t')}\n`;
    if (batch.length > 1 << 20) {
      if (!out.write(batch)) await once(out, 'drain');
      batch = '';
    }
  }
  out.write(batch);
  out.end();
  await once(out, 'finish');
}
