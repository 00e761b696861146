import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createHttpServer } from '../../../src/http/server';
import { expectEnvelope } from '../limits/envelope';
import { API_KEY, DATABASE, TEST_END_DATE } from '../support/constants';
import { openOracle, startService, type Oracle, type TestService } from '../support/service';
import { meta, send } from '../support/api';

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
    await page.getByLabel('Date range').selectOption('dates');
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
    const expected = (await meta(service, { key: 'not-a-key-0123456789' })).body.error;
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
    await page.getByLabel('Date range').selectOption('dates');
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

  /** The query of each load the page sends, as the request's body carries it. */
  function loadsSent(page: Page): Record<string, unknown>[] {
    const sent: Record<string, unknown>[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === `${url}/v1/data/load/`)
        sent.push((JSON.parse(req.postData() ?? 'null') as { query: Record<string, unknown> }).query);
    });
    return sent;
  }

  /** The query in a link, as the address carries it (#q= and the URL-encoded JSON). */
  const queryOfLink = (link: string) => JSON.parse(new URLSearchParams(new URL(link).hash.slice(1)).get('q') ?? 'null') as Record<string, unknown>;

  /**
   * The query the controls show, read from them as a person reads the page: the ticked members, the time
   * dimension and the range input its kind shows, each filter row (one value a line), the order, limit, offset and
   * time zone. Written apart from the page's own code, whose output it checks.
   */
  async function queryOnScreen(page: Page): Promise<Record<string, unknown>> {
    const ticked = await page.evaluate<string[][]>(
      `[...document.querySelectorAll('#member-list input[type=checkbox]:checked')].map((b) => [b.dataset.kind, b.value])`,
    );
    const value = (label: string) => page.getByLabel(label, { exact: true }).inputValue();
    const rows = await page.evaluate<{ member: string; operator: string; values: string }[]>(
      `[...document.querySelectorAll('.filter')].map((row) => ({
        member: row.querySelector('.filter-member').value,
        operator: row.querySelector('.filter-operator').value,
        values: row.querySelector('.filter-values').value,
      }))`,
    );
    const query: Record<string, unknown> = {};
    const of = (kind: string) => ticked.filter(([k]) => k === kind).map(([, name]) => name);
    if (of('measures').length) query.measures = of('measures');
    if (of('dimensions').length) query.dimensions = of('dimensions');
    const time = await value('Time dimension');
    if (time) {
      const td: Record<string, unknown> = { dimension: time };
      if (await value('Granularity')) td.granularity = await value('Granularity');
      const kind = await value('Date range');
      if (kind === 'dates') {
        expect(await page.getByLabel('From', { exact: true }).isVisible()).toBe(true);
        td.dateRange = [await value('From'), await value('To')];
      } else if (kind === 'relative') {
        expect(await page.getByLabel('Relative range').isVisible()).toBe(true);
        td.dateRange = await value('Relative range');
      }
      query.timeDimensions = [td];
    }
    if (rows.length)
      query.filters = rows.map(({ member, operator, values }) =>
        ['set', 'notSet', 'measureFilter'].includes(operator) ? { member, operator } : { member, operator, values: values.split('\n').filter(Boolean) },
      );
    if (await value('Order by')) query.order = [[await value('Order by'), await value('Direction')]];
    if (await value('Limit')) query.limit = Number(await value('Limit'));
    if (await value('Offset')) query.offset = Number(await value('Offset'));
    if (await value('Time zone')) query.timezone = await value('Time zone');
    return query;
  }

  /**
   * Opens a link in a browser context of its own (no storage shared with the page that made it), enters the key,
   * and checks that the page shows the link's query whole, as JSON too, and that Run sends it; returns what it sent.
   */
  async function reopen(link: string): Promise<{ page: Page; sent: Record<string, unknown>[] }> {
    const page = await openPage(1280, 900);
    const sent = loadsSent(page);
    await page.goto(link);
    // Before the key the page cannot know the members: it waits, and keeps the link as it came.
    await page.locator('#notice').getByText('enter an API key').waitFor();
    expect(page.url()).toBe(link);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    // "<n> cubes." once the key's meta is in; the status before it ("… list the cubes.") must not match.
    await page
      .locator('#status')
      .getByText(/^\d+ cubes\.$/)
      .waitFor();
    return { page, sent };
  }

  it('a link carries the whole query: in a fresh context, once the key is entered, the page shows every part and Run sends it', async () => {
    const [from, to] = [day(6), day(0)];
    const made: { link: string; expected: Record<string, unknown> }[] = [];

    // A measure by a dimension over days of a fixed range, three filters (two values, a value with a comma, no value),
    // ascending order, a limit, an offset and a time zone, built with the page's controls.
    let page = await openPage(1280, 900);
    let sent = loadsSent(page);
    await withKey(page);
    await page.getByLabel('Search').fill('downloads.co');
    await page.getByLabel('Downloads.count (measure)', { exact: true }).check();
    await page.getByLabel('Downloads.country', { exact: true }).check();
    await page.getByLabel('Time dimension').selectOption('Downloads.ts');
    await page.getByLabel('Granularity').selectOption('day');
    await page.getByLabel('Date range').selectOption('dates');
    await page.getByLabel('From', { exact: true }).fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
    for (const [n, member, operator, values] of [
      [1, 'Downloads.country', 'equals', 'Germany\nFrance'],
      [2, 'Downloads.parsed_ua', 'notContains', 'KHTML, like Gecko'],
      [3, 'Downloads.city', 'set', ''],
    ] as const) {
      await page.getByRole('button', { name: 'Add filter' }).click();
      await page.locator(`#filter-member-${n}`).selectOption(member);
      await page.locator(`#filter-operator-${n}`).selectOption(operator);
      await page.locator(`#filter-values-${n}`).fill(values);
    }
    await page.getByLabel('Order by').selectOption('Downloads.count');
    await page.getByLabel('Direction').selectOption('asc');
    await page.getByLabel('Limit').fill('50');
    await page.getByLabel('Offset').fill('5');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await runQuery(page);
    made.push({
      link: page.url(),
      expected: {
        measures: ['Downloads.count'],
        dimensions: ['Downloads.country'],
        timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'day', dateRange: [from, to] }],
        filters: [
          { member: 'Downloads.country', operator: 'equals', values: ['Germany', 'France'] },
          { member: 'Downloads.parsed_ua', operator: 'notContains', values: ['KHTML, like Gecko'] },
          { member: 'Downloads.city', operator: 'set' },
        ],
        order: [['Downloads.count', 'asc']],
        limit: 50,
        offset: 5,
        timezone: 'Europe/Berlin',
      },
    });
    expect(sent).toEqual([made[0].expected]);
    await page.context().close();

    // A range-only time dimension over a relative range, in another zone, without a limit.
    page = await openPage(1280, 900);
    sent = loadsSent(page);
    await withKey(page);
    await page.getByLabel('Search').fill('linksadvancedanalytics');
    await page.getByLabel('LinksAdvancedAnalytics.linkViewCount (measure)', { exact: true }).check();
    await page.getByLabel('LinksAdvancedAnalytics.utmSource', { exact: true }).check();
    await page.getByLabel('Time dimension').selectOption('LinksAdvancedAnalytics.timestamp');
    await page.getByLabel('Granularity').selectOption('');
    await page.getByLabel('Date range').selectOption('relative');
    await page.getByLabel('Relative range').fill('last 30 days');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Member', { exact: true }).selectOption('LinksAdvancedAnalytics.utmMedium');
    await page.getByLabel('Values', { exact: true }).fill('social');
    await page.getByLabel('Order by').selectOption('LinksAdvancedAnalytics.utmSource');
    await page.getByLabel('Direction').selectOption('asc');
    await page.getByLabel('Limit').fill('');
    await page.getByLabel('Time zone').fill('America/New_York');
    await runQuery(page);
    made.push({
      link: page.url(),
      expected: {
        measures: ['LinksAdvancedAnalytics.linkViewCount'],
        dimensions: ['LinksAdvancedAnalytics.utmSource'],
        timeDimensions: [{ dimension: 'LinksAdvancedAnalytics.timestamp', dateRange: 'last 30 days' }],
        filters: [{ member: 'LinksAdvancedAnalytics.utmMedium', operator: 'equals', values: ['social'] }],
        order: [['LinksAdvancedAnalytics.utmSource', 'asc']],
        timezone: 'America/New_York',
      },
    });
    expect(sent).toEqual([made[1].expected]);
    await page.context().close();

    for (const { link, expected } of made) {
      expect(queryOfLink(link)).toEqual(expected);
      const opened = await reopen(link);
      await expect(queryOnScreen(opened.page)).resolves.toEqual(expected);
      expect(JSON.parse((await opened.page.locator('#json-query').textContent())!)).toEqual(expected);
      await expect(opened.page.locator('#notice').isHidden()).resolves.toBe(true);
      expect(opened.page.url()).toBe(link);
      await runQuery(opened.page);
      expect(opened.sent).toEqual([expected]);
      expect((opened.page as Page & { problems: string[] }).problems).toEqual([]);
      await opened.page.context().close();
    }
  });

  it('a link naming members that no longer exist, or parts the page cannot show, says so, and Run sends what the page shows', async () => {
    const link = `${url}/explore#q=${encodeURIComponent(
      JSON.stringify({
        measures: ['Downloads.count', 'Downloads.retired'],
        dimensions: ['Gone.country'],
        timeDimensions: [
          { dimension: 'Downloads.ts', granularity: 'week', dateRange: ['2026-01-05', '2026-02-01'] },
          { dimension: 'Downloads.ts', dateRange: 'last 7 days' },
        ],
        filters: [
          { member: 'Downloads.country', operator: 'equals', values: ['Germany'] },
          { member: 'Old.member', operator: 'equals', values: ['x'] },
          { or: [{ member: 'Downloads.city', operator: 'set' }] },
        ],
        order: { 'Downloads.count': 'desc', 'Downloads.retired': 'asc' },
      }),
    )}`;
    const shown = {
      measures: ['Downloads.count'],
      timeDimensions: [{ dimension: 'Downloads.ts', granularity: 'week', dateRange: ['2026-01-05', '2026-02-01'] }],
      filters: [{ member: 'Downloads.country', operator: 'equals', values: ['Germany'] }],
      order: [['Downloads.count', 'desc']],
    };
    const { page, sent } = await reopen(link);
    const notice = (await page.locator('#notice').textContent()) ?? '';
    expect(notice).toContain('The link names members that no longer exist: Downloads.retired, Gone.country, Old.member.');
    expect(notice).toContain("This page cannot show these parts of the link's query: timeDimensions, filters.");
    await expect(queryOnScreen(page)).resolves.toEqual(shown);
    expect(JSON.parse((await page.locator('#json-query').textContent())!)).toEqual(shown);
    expect(queryOfLink(page.url())).toEqual(shown);
    await runQuery(page);
    expect(sent).toEqual([shown]);
    await page.context().close();
  });

  it('serves the page without a key, under a CSP without unsafe-inline for scripts', async () => {
    const res = await send(service, 'get', '/explore', { key: null }).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*unsafe-inline/);
    await send(service, 'get', '/explore/explorer.js', { key: null })
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
    expectEnvelope(await send(service, 'get', '/explore', { key: null }), 'not_found');
    expectEnvelope(await send(service, 'get', '/explore/explorer.js', { key: null }), 'not_found');
  });
});
