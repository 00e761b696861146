import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { createHttpServer } from '../../../src/http/server';
import { expectEnvelope } from '../limits/envelope';
import { API_KEY, DATABASE, TEST_END_DATE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';

const CHROMIUM = '/usr/bin/chromium';
// The README's pictures are rewritten only when asked (UPDATE_SCREENSHOTS=1): they hold a port and dates.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '..', '..', '..', 'docs', 'img') : mkdtempSync(path.join(os.tmpdir(), 'explorer-'));
// Debian's package, not a downloaded build; CI installs it (.ci/run), so there a missing one fails the test.
const haveChromium = existsSync(CHROMIUM);
const describeBrowser = haveChromium || process.env.CI === 'true' ? describe : describe.skip;

const day = (offset: number) => new Date(TEST_END_DATE.getTime() - offset * 86_400_000).toISOString().slice(0, 10);

describeBrowser('the explorer page in Chromium', () => {
  let service: TestService;
  let server: Server;
  let url: string;
  let browser: Browser;
  let oracle: Oracle;
  beforeAll(async () => {
    service = await startService();
    server = createHttpServer(service.app, service.config.http, service.logger, service.metrics);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    oracle = openOracle();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await oracle?.close();
    await service?.close();
  });

  async function openPage(width: number, height: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    const page = await context.newPage();
    // The page loads nothing from anywhere else, and breaks no CSP rule (a violation is a console error).
    const problems: string[] = [];
    page.on('request', (req) => req.url().startsWith(url) || problems.push(`request to ${req.url()}`));
    page.on('console', (msg) => msg.type() === 'error' && !/status of 401/.test(msg.text()) && problems.push(msg.text()));
    page.on('pageerror', (err) => problems.push(String(err)));
    (page as Page & { problems: string[] }).problems = problems;
    return page;
  }

  /** The page opened, with the test key entered. */
  async function withKey(page: Page): Promise<void> {
    await page.goto(`${url}/explore`);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
  }

  /** Picks a measure (found by searching for it) over a time dimension by a granularity, from one day to another. */
  async function measureOverTime(page: Page, measure: string, time: string, granularity: string, [from, to]: [string, string]): Promise<void> {
    await page.getByLabel('Search').fill(measure.toLowerCase());
    await page.getByLabel(`${measure} (measure)`, { exact: true }).check();
    await page.getByLabel('Time dimension').selectOption(time);
    await page.getByLabel('Granularity').selectOption(granularity);
    await page.getByLabel('From', { exact: true }).fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
  }

  /** Runs the query built on the page and waits for its rows. */
  async function runQuery(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Run query' }).click();
    await page
      .locator('#status')
      .getByText(/rows in/)
      .waitFor();
  }

  it("shows the error envelope's message for a bad key", async () => {
    const page = await openPage(1280, 900);
    await page.goto(`${url}/explore`);
    await page.getByLabel('API key').fill('not-a-key-0123456789');
    await page.getByRole('button', { name: 'Use key' }).click();
    const expected = (await request(service.app).get('/v1/data/meta').set('x-api-key', 'not-a-key-0123456789')).body.error;
    expect(expected).toMatch(/key/i);
    await page.locator('#error').getByText(expected).waitFor();
    await page.context().close();
  });

  it('runs a measure by day over a date range: rows as direct SQL counts them, a line, the JSON it sent, a link that reopens it', async () => {
    const [from, to] = [day(6), day(0)];
    const expected = await oracle.rows<{ day: string; n: string }>(
      `SELECT toString(toDate(ts)) AS day, toString(count()) AS n FROM ${DATABASE}.downloads
       WHERE toDate(ts) BETWEEN '${from}' AND '${to}' GROUP BY day ORDER BY day`,
    );
    expect(expected.length).toBeGreaterThan(0);

    for (const [width, height, file] of [
      [1280, 900, 'explorer-desktop.png'],
      [390, 844, 'explorer-mobile.png'],
    ] as const) {
      const page = await openPage(width, height);
      const sent: unknown[] = [];
      page.on('request', (req) => {
        if (req.method() === 'POST' && req.url() === `${url}/v1/data/load/`) sent.push(JSON.parse(req.postData() ?? 'null'));
      });
      await page.goto(`${url}/explore`);
      await page.getByLabel('API key').fill(API_KEY);
      await page.keyboard.press('Enter');
      await measureOverTime(page, 'Downloads.count', 'Downloads.ts', 'day', [from, to]);
      await runQuery(page);

      const cells = await page.locator('#table tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
      expect(cells.map(([time, n]) => ({ day: time!.slice(0, 10), n }))).toEqual(expected);
      const line = await page.locator('#chart svg path.series').getAttribute('d');
      expect(line?.match(/L/g)?.length).toBe(expected.length - 1);

      expect(sent).toHaveLength(1);
      const query = (sent[0] as { query: unknown }).query;
      expect(query).toEqual({
        measures: ['Downloads.count'],
        timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [from, to] }],
        limit: 1000,
      });
      expect(JSON.parse((await page.locator('#json-query').textContent())!)).toEqual(query);
      await page.getByRole('button', { name: 'Copy JSON' }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      expect(JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'))).toEqual(query);
      await page
        .locator('#sql')
        .getByText(/SELECT/i)
        .waitFor();

      // The export button downloads the same query as CSV: a header row, then the rows direct SQL counts.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      expect(download.suggestedFilename()).toMatch(/^downloads-.*\.csv$/);
      const csv = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split(/\r?\n/);
      expect(csv.slice(1).map((line) => line.split(',')[1])).toEqual(expected.map((row) => row.n));

      await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true });
      expect((page as Page & { problems: string[] }).problems).toEqual([]);

      // The link reopened in the same tab (which holds the key in its sessionStorage): the query comes back.
      const link = page.url();
      expect(link).toContain('#q=');
      await page.reload();
      expect(page.url()).toBe(link);
      await expect(page.getByLabel('Downloads.count (measure)', { exact: true }).isChecked()).resolves.toBe(true);
      await expect(page.getByLabel('Time dimension').inputValue()).resolves.toBe('Downloads.ts');
      await expect(page.getByLabel('From', { exact: true }).inputValue()).resolves.toBe(from);
      await page.context().close();
    }
  });

  it('draws bars without a time dimension, and says when the limit cut the answer', async () => {
    const countries = await oracle.value(`SELECT uniqExact(country) FROM ${DATABASE}.downloads`);
    expect(countries).toBeGreaterThan(2);
    const page = await openPage(1280, 900);
    await withKey(page);
    await page.getByLabel('Search').fill('downloads.co');
    await page.getByLabel('Downloads.count (measure)', { exact: true }).check();
    await page.getByLabel('Downloads.country', { exact: true }).check();
    await page.getByLabel('Limit').fill('2');
    await runQuery(page);
    await expect(page.locator('#table tbody tr').count()).resolves.toBe(2);
    await expect(page.locator('#chart svg rect.bar').count()).resolves.toBe(2);
    await expect(page.locator('#truncated').isVisible()).resolves.toBe(true);
    await page.context().close();
  });

  it('sends a filter value with a comma as one value, and refuses a date range with one end', async () => {
    const value = 'KHTML, like Gecko';
    const expected = await oracle.value(`SELECT count() FROM ${DATABASE}.downloads WHERE positionCaseInsensitiveUTF8(parsed_ua, 'KHTML') = 0`);
    const page = await openPage(1280, 900);
    const sent: { query: Record<string, unknown> }[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === `${url}/v1/data/load/`) sent.push(JSON.parse(req.postData() ?? 'null'));
    });
    await withKey(page);
    await page.getByLabel('Search').fill('downloads.count');
    await page.getByLabel('Downloads.count (measure)', { exact: true }).check();
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Member', { exact: true }).selectOption('Downloads.parsed_ua');
    await page.getByLabel('Operator', { exact: true }).selectOption('notContains');
    await page.getByLabel('Values', { exact: true }).fill(`${value}\nKHTML`);
    await runQuery(page);
    expect(sent.map((body) => body.query.filters)).toEqual([[{ member: 'Downloads.parsed_ua', operator: 'notContains', values: [value, 'KHTML'] }]]);
    await expect(page.locator('#table tbody td').allTextContents()).resolves.toEqual([String(expected)]);

    // The same query reopened from its link keeps the two values.
    await page.reload();
    await expect(page.getByLabel('Values', { exact: true }).inputValue()).resolves.toBe(`${value}\nKHTML`);

    await page.getByLabel('Time dimension').selectOption('Downloads.ts');
    await page.getByLabel('From', { exact: true }).fill(day(3));
    await page.getByRole('button', { name: 'Run query' }).click();
    await page.locator('#error').getByText('Give both From and To for a date range, or neither.').waitFor();
    // Reopening the link does not run the query, and the refused one was not sent.
    expect(sent).toHaveLength(1);

    // On a phone the filter stays on the screen, and the values' box shows both lines.
    await page.setViewportSize({ width: 390, height: 844 });
    const fits = await page.evaluate<boolean>(
      `document.querySelector('.filter-member').getBoundingClientRect().right <= document.documentElement.clientWidth && document.querySelector('.filter-values').rows >= 2`,
    );
    expect(fits).toBe(true);
    await page.context().close();
  });

  it('breaks the line where the answer has no bucket: hours without conversions are gaps, not joined', async () => {
    // A day of sparse conversions, and its hours as direct SQL finds them: each run of consecutive hours is one piece
    // of line (a lone hour a dot).
    const [{ d }] = await oracle.rows<{ d: string }>(`
      SELECT toString(d) AS d FROM (
        SELECT d, groupArray(h) AS hs FROM (
          SELECT DISTINCT toDate(track_ts) AS d, toHour(track_ts) AS h FROM ${DATABASE}.web_events WHERE se_category = 'conversion')
        GROUP BY d)
      WHERE arrayCount((h) -> NOT has(hs, h - 1), hs) >= 2 ORDER BY length(hs) DESC, d DESC LIMIT 1`);
    const hours = (
      await oracle.rows<{ h: number }>(
        `SELECT DISTINCT toHour(track_ts) AS h FROM ${DATABASE}.web_events WHERE se_category = 'conversion' AND toDate(track_ts) = '${d}' ORDER BY h`,
      )
    ).map((r) => Number(r.h));
    const runs: number[][] = [];
    for (const h of hours) (runs.length && runs.at(-1)!.at(-1) === h - 1 ? runs.at(-1)! : runs[runs.push([]) - 1]).push(h);
    expect(runs.length).toBeGreaterThan(1);

    const page = await openPage(1280, 900);
    await withKey(page);
    await measureOverTime(page, 'WebEvents.count', 'WebEvents.trackTs', 'hour', [d, d]);
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Member', { exact: true }).selectOption('WebEvents.se_category');
    await page.getByLabel('Values', { exact: true }).fill('conversion');
    await runQuery(page);
    const line = (await page.locator('#chart svg path.series').getAttribute('d')) ?? '';
    expect([line.match(/M/g)?.length, line.match(/L/g)?.length ?? 0]).toEqual([runs.length, hours.length - runs.length]);
    await expect(page.locator('#chart svg circle.point').count()).resolves.toBe(runs.filter((run) => run.length === 1).length);
    await page.context().close();
  });

  it('draws one line a series, each with every hour the answer has, past the rows the table shows', async () => {
    const [from, to] = [day(29), day(0)];
    // Each continent's hours with downloads, as direct SQL finds them, largest total first (the legend's order).
    const expected = await oracle.rows<{ continent: string; hours: string }>(
      `SELECT continent, toString(uniqExact(toStartOfHour(ts))) AS hours FROM ${DATABASE}.downloads
       WHERE toDate(ts) BETWEEN '${from}' AND '${to}' GROUP BY continent ORDER BY count() DESC, continent`,
    );
    expect(expected.length).toBeGreaterThan(1);
    expect(expected.length).toBeLessThanOrEqual(8);
    expect(expected.reduce((n, c) => n + Number(c.hours), 0)).toBeGreaterThan(1000);

    const page = await openPage(1280, 900);
    await withKey(page);
    await measureOverTime(page, 'Downloads.count', 'Downloads.ts', 'hour', [from, to]);
    await page.getByLabel('Search').fill('downloads.continent');
    await page.getByLabel('Downloads.continent', { exact: true }).check();
    await page.getByLabel('Limit').fill('5000');
    await runQuery(page);
    await expect(page.locator('#table tbody tr').count()).resolves.toBe(1000);
    const lines = await page.evaluate<{ name: string; points: number }[]>(
      `[...document.querySelectorAll('#chart svg path.series')].map((p) => ({ name: p.textContent, points: (p.getAttribute('d') ?? '').match(/[ML]/g)?.length ?? 0 }))`,
    );
    const names = expected.map((c) => c.continent || '(empty)');
    expect(lines).toEqual(expected.map((c, i) => ({ name: names[i], points: Number(c.hours) })));
    await expect(page.locator('#chart .legend li').allTextContents()).resolves.toEqual(names);
    await page.context().close();
  });

  it('serves the page without a key, under a CSP without unsafe-inline for scripts', async () => {
    const res = await request(service.app).get('/explore').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*unsafe-inline/);
    await request(service.app)
      .get('/explore/explorer.js')
      .expect(200)
      .expect('content-type', /javascript/);
  });
});

describe('EXPLORER=false', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ EXPLORER: 'false' });
  });
  afterAll(() => service.close());

  it('answers 404 on /explore and its files', async () => {
    expectEnvelope(await request(service.app).get('/explore'), 'not_found');
    expectEnvelope(await request(service.app).get('/explore/explorer.js'), 'not_found');
  });
});
