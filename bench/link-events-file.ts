import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { seededRandom } from './seeded-random';
import { visitorAddress } from './web-events-file';

/**
 * The link pages' events as NDJSON (the canonical fields), `rows` of them,
 * the same for every run (a seeded generator): 30 days from 2026-01-01, 500
 * links, a viewer per four events (half with a cookie id, half known by
 * address and agent only, one in five over IPv6), a view in three followed
 * by an open 1 to 40 minutes later (so most match, some come too late), a
 * bot's view in twenty, UTM parameters on half the views and an
 * Accept-Language on most. Every row is valid, so an import takes every row.
 */
export async function writeLinkEventsFile(file: string, rows: number): Promise<void> {
  const random = seededRandom(20261130);
  const viewers = Math.max(1, Math.floor(rows / 4));
  const agents = [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 334.0.0.34.96',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  ];
  const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
  const languages = ['en-US,en;q=0.9', 'de-DE,de;q=0.9,en;q=0.8', 'fr-FR,fr;q=0.9', 'es', ''];
  const sources = ['newsletter', 'instagram', 'twitter', 'podnews'];
  const targets = ['apple-podcasts', 'spotify', 'overcast', 'pocket-casts'];
  const start = Date.parse('2026-01-01T00:00:00Z');
  const span = 30 * 86_400_000;
  const out = createWriteStream(file);
  let batch = '';
  const write = async (event: Record<string, string>) => {
    batch += `${JSON.stringify(event)}\n`;
    if (batch.length > 1 << 20) {
      if (!out.write(batch)) await once(out, 'drain');
      batch = '';
    }
  };
  for (let i = 0; i < rows; i++) {
    const n = Math.floor(random() * viewers);
    const link = `link-${n % 500}`;
    const at = start + Math.floor(random() * span);
    const isBot = random() < 0.05;
    const base = {
      account: 'bench',
      link,
      viewer: n % 2 === 0 ? `cookie-${n}` : '',
      ip: isBot ? '66.249.66.1' : visitorAddress(n),
      userAgent: isBot ? bot : agents[n % agents.length],
      acceptLanguage: languages[n % languages.length],
      referer: n % 3 === 0 ? 'https://www.instagram.com/' : '',
    };
    const utm = random() < 0.5 ? `?utm_source=${sources[n % sources.length]}&utm_medium=social&utm_campaign=spring%20${n % 4}` : '';
    await write({ time: new Date(at).toISOString(), event: 'view', url: `https://links.example/${link}${utm}`, ...base });
    if (!isBot && i + 1 < rows && random() < 1 / 3) {
      i += 1;
      const later = at + 60_000 + Math.floor(random() * 39 * 60_000);
      await write({ time: new Date(later).toISOString(), event: 'open', url: `https://links.example/${link}`, target: targets[n % targets.length], ...base });
    }
  }
  out.end(batch);
  await once(out, 'finish');
}
