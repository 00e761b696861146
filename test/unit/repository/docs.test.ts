import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The docs are reference a reader can follow, and history lives in git: a page of docs/ (or the README) names no
 * commit and no run's date or time, stays short enough to read, and every relative link it holds leads somewhere.
 * CHANGELOG.md and the decision records (docs/decisions/) tell history by design, so they may name commits and
 * dates; their links are checked all the same.
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAX_LINES = 400;
const README_MAX_LINES = 200;

/** Every markdown file under docs/, as paths from the repository root. */
const docsPages = (): string[] =>
  readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join('docs', file).split(path.sep).join('/'))
    .sort();

const tellsHistory = (page: string) => page === 'CHANGELOG.md' || page.startsWith('docs/decisions/');

/**
 * A git commit as prose names it: 7 to 40 lower-case hex digits, at least one a letter and one a digit (a word such
 * as "decade" or a number such as 20261122 is none), standing alone. The characters of an identifier, `-` and `_`
 * included, do not end the run, so a UUID, a longer digest, `cityHash64` or `0x…` are no commit.
 */
const COMMIT = /(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])/g;

/** When something ran: a calendar date, an ISO instant, or a clock time in UTC (`03:13 UTC`, `03:13–03:16 UTC`). */
const RUN_TIME = /\b(?:19|20)\d\d-[01]\d-[0-3]\d(?!\d)|\b[0-2]\d:[0-5]\d(?::[0-5]\d)?(?:\s*[–-]\s*[0-2]\d:[0-5]\d(?::[0-5]\d)?)?\s*UTC\b/g;

/** The page's prose: fenced blocks and inline code spans blanked out (examples of dates are code), lines kept in place. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/** Findings of `pattern` in the page (or only its prose), with their line numbers. */
function findIn(page: string, pattern: RegExp, where: 'text' | 'prose'): string[] {
  const text = readFileSync(path.join(ROOT, page), 'utf8');
  return (where === 'prose' ? prose(text) : text.split('\n')).flatMap((line, i) => [...line.matchAll(pattern)].map((match) => `${page}:${i + 1}: ${match[0]}`));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (letters, digits, spaces, `-` and `_` stay), spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page offers: its headings' (a repeat gets `-1`, `-2`, … as on GitHub; code spans count) and explicit `id`s. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = anchorOf(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const [, id] of prose(text)
    .join('\n')
    .matchAll(/\b(?:id|name)="([^"]+)"/g))
    anchors.add(id);
  return anchors;
}

/** Relative links of a page (markdown links and images, HTML `href`/`src`) that lead to no file or no anchor. */
function brokenLinks(page: string): string[] {
  const lines = prose(readFileSync(path.join(ROOT, page), 'utf8'));
  const targets = lines.flatMap((line, i) =>
    [...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|\b(?:href|src)="([^"]+)"/g)].map((match) => ({ line: i + 1, target: match[1] ?? match[2] })),
  );
  return targets.flatMap(({ line, target }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
    const [file, anchor] = target.split('#', 2);
    const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURI(file));
    if (!existsSync(resolved)) return [`${page}:${line}: ${target} (no such file)`];
    if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) return [];
    return anchorsOf(resolved).has(decodeURIComponent(anchor)) ? [] : [`${page}:${line}: ${target} (no such anchor)`];
  });
}

const lineCount = (page: string) => readFileSync(path.join(ROOT, page), 'utf8').replace(/\n$/, '').split('\n').length;

describe('the docs', () => {
  const pages = docsPages();
  const reference = [...pages, 'README.md'].filter((page) => !tellsHistory(page));

  it('are found, and the CHANGELOG beside them', () => {
    expect(pages).toEqual(expect.arrayContaining(['docs/README.md', 'docs/architecture.md', 'docs/benchmarks.md']));
    expect(existsSync(path.join(ROOT, 'CHANGELOG.md'))).toBe(true);
  });

  // A commit is history wherever it stands, code spans and blocks included; a date there is an example (a query's range).
  it('name no commit outside the CHANGELOG and the decision records', () => {
    expect(reference.flatMap((page) => findIn(page, COMMIT, 'text'))).toEqual([]);
  });

  it("hold no run's date or time in their prose outside the CHANGELOG and the decision records", () => {
    expect(reference.flatMap((page) => findIn(page, RUN_TIME, 'prose'))).toEqual([]);
  });

  it(`are at most ${MAX_LINES} lines a page, and the README at most ${README_MAX_LINES}`, () => {
    const long = [
      ...pages.filter((page) => lineCount(page) > MAX_LINES).map((page) => `${page}: ${lineCount(page)} lines`),
      ...(lineCount('README.md') > README_MAX_LINES ? [`README.md: ${lineCount('README.md')} lines`] : []),
    ];
    expect(long).toEqual([]);
  });

  it('link only to files and anchors that exist', () => {
    const all = [...pages, 'README.md', 'CHANGELOG.md'].filter((page) => existsSync(path.join(ROOT, page)));
    expect(all.flatMap(brokenLinks)).toEqual([]);
  });
});

describe('the rules themselves', () => {
  it.each([
    ['a short hash', 'measured on `e165ca0`', true],
    ['a hash in prose', 'since 062fb3a the cache', true],
    ['a full hash', 'commit 3f2c9a1b4d5e6f708192a3b4c5d6e7f8091a2b3c', true],
    ['a UUID', '`123e4567-e89b-12d3-a456-426614174000`', false],
    ['a SHA-256 digest', 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9', false],
    ['a word of hex letters', 'a decade of façades, deadbeef', false],
    ['a number', 'DEMO_SEED 20261122', false],
    ['an identifier', 'cityHash64(account_id) and 0x1f2e3d4c', false],
  ])('a commit: %s', (_what, text, found) => {
    expect([...text.matchAll(COMMIT)].length > 0).toBe(found);
  });

  it.each([
    ['a dated run', 'a run of 2026-11-27, load 2', true],
    ['an instant', 'at 2026-11-27T03:13:00Z', true],
    ['a clock time in UTC', 'alternating, 03:13–03:16 UTC', true],
    ['a month and year', 'end of life in April 2026', false],
    ['a duration', 'built in 16:35 minutes', false],
  ])("a run's time: %s", (_what, text, found) => {
    expect([...text.matchAll(RUN_TIME)].length > 0).toBe(found);
  });

  it('keep code spans and blocks out of the prose', () => {
    expect(prose('a `2026-11-01` b\n```\n"lastRefreshTime": "2026-11-22T12:19:56.933Z"\n```\nc')).toEqual(['a  b', '', '', '', 'c']);
  });

  it.each([
    ['Query admission', 'query-admission'],
    ['Cube clients: GET and `queryType: "multi"`', 'cube-clients-get-and-querytype-multi'],
    ['The result cache (`src/cube/cache-front.ts`)', 'the-result-cache-srccubecache-frontts'],
    ['Issue 18 §2', 'issue-18-2'],
  ])('the anchor of "%s" is %s', (heading, anchor) => {
    expect(anchorOf(heading)).toBe(anchor);
  });
});
