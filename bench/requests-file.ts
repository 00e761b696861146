import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { seededRandom } from './seeded-random';
import { BOT_AGENTS, LISTENER_AGENTS, MEDIA_HOSTS, TRACKING_PREFIX } from '../src/warehouse/reference-data';

export type RequestsFormat = 'ndjson' | 'csv';

/** The canonical record's columns, in the import's order (src/warehouse/import/sources/requests.ts). */
const COLUMNS = ['time', 'ip', 'method', 'status', 'url', 'userAgent', 'referer', 'range', 'account', 'requestId'] as const;

/**
 * A request log of `rows` requests in the import's canonical record, the
 * same for every run (a seeded generator): 30 days from 2026-01-01, a
 * listener per ten requests (one in five over IPv6), the demo's listener
 * and bot user agents by weight, 40 shows of 25 episodes, Range headers as
 * players send them (a fifth `bytes=0-1` probes), a few HEAD and 304.
 * With `requestIds`, each request carries an id of its own as long as
 * CloudFront's (56 characters); without, the column is left out.
 */
export async function writeRequestsFile(file: string, rows: number, format: RequestsFormat, requestIds = false): Promise<void> {
  const random = seededRandom(20261125);
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)];
  const agents = [...LISTENER_AGENTS.map((a) => ({ ua: a.ua, weight: a.weight })), ...BOT_AGENTS.map((a) => ({ ua: a.ua, weight: a.weight }))];
  const totalWeight = agents.reduce((sum, a) => sum + a.weight, 0);
  const agent = () => {
    let r = random() * totalWeight;
    for (const a of agents) if ((r -= a.weight) < 0) return a.ua;
    return agents[0].ua;
  };
  const listeners = Math.max(1, Math.floor(rows / 10));
  const ip = (n: number) =>
    n % 5 === 0
      ? `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::${(n % 7) + 1}`
      : `${10 + ((n >> 16) % 200)}.${(n >> 8) & 255}.${n & 255}.${(n % 250) + 1}`;
  const start = Date.parse('2026-01-01T00:00:00Z');
  const span = 30 * 86_400_000;
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const csvField = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  const columns = COLUMNS.filter((c) => requestIds || c !== 'requestId');
  if (format === 'csv') await write(`${columns.join(',')}\n`);
  let batch = '';
  for (let i = 0; i < rows; i++) {
    const show = Math.floor(random() * 40);
    const listener = Math.floor(random() * listeners);
    const r = random();
    const record: Record<(typeof COLUMNS)[number], string> = {
      time: new Date(start + Math.floor(random() * span)).toISOString().replace('.000Z', 'Z'),
      ip: ip(listener),
      method: r < 0.02 ? 'HEAD' : 'GET',
      status: r < 0.03 ? '304' : r < 0.4 ? '206' : '200',
      url: `${TRACKING_PREFIX}show${show}/${pick(MEDIA_HOSTS)}/show-${show}/episode-${Math.floor(random() * 25)}.mp3`,
      userAgent: agent(),
      referer: r > 0.97 ? 'https://www.example-podcast-site.com/' : '',
      range: r < 0.2 ? 'bytes=0-1' : r < 0.4 ? `bytes=${Math.floor(random() * 1e6)}-` : '',
      account: `account-${show % 4}`,
      requestId: `${i.toString(36).padStart(10, '0')}${'x'.repeat(44)}==`,
    };
    const fields = Object.fromEntries(columns.map((c) => [c, record[c]]));
    batch += format === 'csv' ? `${columns.map((c) => csvField(record[c])).join(',')}\n` : `${JSON.stringify({ ...fields, status: Number(record.status) })}\n`;
    if (batch.length > 1 << 20) {
      await write(batch);
      batch = '';
    }
  }
  await write(batch);
  out.end();
  await once(out, 'finish');
}
