import { lineFile } from './line-file';
import { seededRandom } from './seeded-random';

/** The benchmark's charts: 50 countries (ISO codes) × 20 categories, a top 10 of shows each, daily, on two platforms. */
export const CHART_COUNTRIES = (
  'us gb ca au de fr es it nl se no dk fi ie nz br mx ar cl co pe jp kr in id ph sg my th vn ' + 'za ng ke eg ma tr il ae sa pl cz at ch be pt gr hu ro ua hr'
).split(' ');
export const CHART_CATEGORIES = [
  'All',
  'Arts',
  'Business',
  'Comedy',
  'Education',
  'Fiction',
  'Health & Fitness',
  'History',
  'Kids & Family',
  'Leisure',
  'Music',
  'News',
  'Religion & Spirituality',
  'Science',
  'Society & Culture',
  'Sports',
  'Technology',
  'True Crime',
  'TV & Film',
  'Government',
];
const PLATFORMS = ['apple', 'spotify'];
const DEPTH = 10;

/** Rows of one day: every chart of the day, DEPTH positions each. */
export const CHART_ROWS_PER_DAY = PLATFORMS.length * CHART_COUNTRIES.length * CHART_CATEGORIES.length * DEPTH;

/**
 * Chart positions in the canonical NDJSON record (src/warehouse/import/sources/charts.ts), the same for every run (a
 * seeded generator): `days` days from 2026-01-01 (a year, 365, is 7.3M rows), each day every platform's chart of
 * every country and category, its top 10 drawn from a pool of 2,000 shows. A show's ids are the platform's kind
 * (Apple's digits, Spotify's URI), its slug its name.
 */
export async function writeChartsFile(file: string, days: number): Promise<void> {
  const random = seededRandom(20261201);
  const start = Date.parse('2026-01-01T00:00:00Z');
  const out = lineFile(file);
  for (let day = 0; day < days; day++) {
    const date = new Date(start + day * 86_400_000).toISOString().slice(0, 10);
    for (const platform of PLATFORMS) {
      for (const country of CHART_COUNTRIES) {
        for (const category of CHART_CATEGORIES) {
          for (let rank = 1; rank <= DEPTH; rank++) {
            const show = Math.floor(random() * 2000);
            const podcastId = platform === 'apple' ? String(1_500_000_000 + show) : `spotify:show:bench${String(show).padStart(18, '0')}`;
            const podcastSlug = platform === 'apple' ? `bench-show-${show}` : '';
            await out.line(JSON.stringify({ date, chart: 'shows', platform, country, category, rank, podcastId, podcastSlug }));
          }
        }
      }
    }
  }
  await out.close();
}
