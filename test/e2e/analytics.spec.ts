import type { Locator } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { AnalyticsPage } from './pages/analytics.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';

/**
 * The demo organisation's ~50,000 requests over 30 days, read through the analytics
 * screen: filters change the figures the server computes, the chart's series carry the
 * names of projects, keys and models, and the view is kept in the address across a reload.
 */

test('time range, project, key and model filters change the figures; one key shows its cost', async ({
  consolePage: page,
}) => {
  await signInAsDemoAdmin(page);
  const analytics = new AnalyticsPage(page);
  await analytics.open();

  // The default window is the last 24 hours; 30 days hold far more requests.
  await expect(page.getByLabel('Time range')).toHaveValue('24h');
  const day = await analytics.count('requests');
  expect(day).toBeGreaterThan(0);
  await expect(page.getByTestId('card-cost')).toHaveCount(0);

  // Away and back through the sidebar (the same view): the figures stay on screen, not busy,
  // while the summary is read again, held here until the screen has been looked at.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let reread = 0;
  await page.route('**/bridge/api.summary', async (route) => {
    reread += 1;
    await held;
    await route.continue();
  });
  await openScreen(page, 'keys');
  await openScreen(page, 'analytics');
  await expect.poll(() => reread).toBeGreaterThan(0);
  await expect(analytics.cards).toHaveAttribute('data-state', 'ready');
  await expect(page.locator('section[aria-labelledby="summary-heading"]')).toHaveAttribute('aria-busy', 'false');
  await expect(page.getByTestId('analytics-screen').locator('[aria-busy="true"]')).toHaveCount(0);
  expect(await analytics.count('requests')).toBe(day);
  const reanswered = page.waitForResponse('**/bridge/api.summary');
  release();
  await reanswered;
  await page.unroute('**/bridge/api.summary');
  await analytics.settled();
  await analytics.chooseRange('Last 30 days');
  await expect.poll(() => analytics.count('requests')).toBeGreaterThan(day * 5);
  const month = await analytics.count('requests');
  await expect(analytics.card('latency')).toHaveText(/\d/);

  // One project's share is a part of the whole.
  await analytics.chooseProject('Support Bot');
  await expect.poll(() => analytics.count('requests')).toBeLessThan(month);
  const project = await analytics.count('requests');
  expect(project).toBeGreaterThan(0);

  // One key of that project: fewer again, and now a cost in PKR.
  await analytics.chooseKey('Support bot evals');
  await expect.poll(() => analytics.count('requests')).toBeLessThan(project);
  const key = await analytics.count('requests');
  expect(key).toBeGreaterThan(0);
  await expect(analytics.card('cost')).toHaveText(/^[\d,.]+ PKR$/);

  // One model the key may use.
  await analytics.chooseModel('openai/gpt-4o-mini');
  await expect.poll(() => analytics.count('requests')).toBeLessThan(key);
  expect(await analytics.count('requests')).toBeGreaterThan(0);
  await expect(analytics.card('cost')).toHaveText(/PKR$/);

  // Back to every key: the cost card goes, since the server gives a cost only per key.
  await page.getByLabel('Key', { exact: true }).selectOption('');
  await expect(page.getByTestId('card-cost')).toHaveCount(0);
  await expect.poll(() => analytics.count('requests')).toBeGreaterThan(key);
});

test('metric and group-by name the series; a reload brings the same view back', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const analytics = new AnalyticsPage(page);
  await analytics.open();
  await analytics.chooseRange('Last 30 days');

  await analytics.groupBy('Project');
  await expect
    .poll(() => analytics.legendNames())
    .toEqual(expect.arrayContaining(['Default', 'Support Bot', 'Document Search', 'Internal Tools']));
  await expect(analytics.chart).toHaveAccessibleName(/^Requests per 6h by project$/);

  await analytics.groupBy('Model');
  await expect
    .poll(() => analytics.legendNames())
    .toEqual(expect.arrayContaining(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4']));

  await analytics.chooseMetric('Mean latency');
  await analytics.groupBy('Key');
  await expect
    .poll(() => analytics.legendNames())
    .toEqual(expect.arrayContaining(['Production backend', 'Support bot (production)', 'Indexer']));
  await expect(analytics.chart).toHaveAccessibleName(/^Mean latency per 6h by key$/);
  // Lines are drawn, never more points than the plot has pixels.
  await expect(analytics.chart.locator('.recharts-line-curve').first()).toBeVisible();

  // A fine interval over 30 days: more buckets than pixels, so points are combined, and it says so.
  await page.getByLabel('Interval').selectOption('5m');
  await expect(page.getByTestId('combined-note')).toContainText('buckets of 5m are more than the chart');
  const points = Number(await analytics.chart.getAttribute('data-points'));
  const plotWidth = ((await analytics.chart.boundingBox())?.width ?? 0) - 64 - 16;
  expect(points).toBeGreaterThan(0);
  expect(points).toBeLessThanOrEqual(Math.ceil(plotWidth));
  await page.getByLabel('Interval').selectOption('');

  await analytics.chooseProject('Default');
  await analytics.settled();
  await expect
    .poll(() => analytics.legendNames())
    .toEqual(expect.arrayContaining(['Production backend', 'Staging backend']));
  const names = await analytics.legendNames();
  // Pointing at the chart reads a bucket: its local time, the same instant in UTC, each series' value.
  await analytics.chart.locator('svg.recharts-surface').hover();
  const tooltip = page.getByTestId('chart-tooltip');
  await expect(tooltip).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
  await expect(tooltip).toContainText('Production backend: ');
  expect(names).not.toContain('Indexer');
  const requests = await analytics.count('requests');
  await page.screenshot({ path: testInfo.outputPath('analytics.png'), fullPage: true });

  await page.reload();
  await analytics.settled();
  await expect(page.getByLabel('Time range')).toHaveValue('30d');
  await expect(page.getByLabel('Project').locator('option:checked')).toHaveText('Default');
  await expect(page.getByLabel('Metric')).toHaveValue('latency');
  await expect(page.getByLabel('Group by')).toHaveValue('key');
  await expect(page.getByLabel('Interval')).toHaveValue('');
  await expect.poll(() => analytics.legendNames()).toEqual(names);
  // The window ends now, so a request may have left its far edge meanwhile; the rest is the same.
  const after = await analytics.count('requests');
  expect(Math.abs(after - requests)).toBeLessThanOrEqual(Math.max(2, requests * 0.01));
});

test('the top keys add up to the window, and a click on one narrows the whole screen to it', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const analytics = new AnalyticsPage(page);
  await analytics.open();
  await analytics.chooseRange('Last 7 days');
  await analytics.settled();
  const all = await analytics.count('requests');

  const top = page.getByTestId('top-row');
  await expect(top.first()).toBeVisible();
  // Largest spend first; the requests of the rows shown and the rest add up to the cards' count.
  const shown = (await top.locator('td:nth-child(2)').allTextContents()).map((t) => Number(t.replace(/\D/g, '')));
  const others = page.getByTestId('top-others');
  const rest = (await others.count())
    ? Number(/(\d[\d,]*) requests/.exec((await others.textContent())!)![1]!.replace(/\D/g, ''))
    : 0;
  expect(shown.reduce((a, b) => a + b, 0) + rest).toBe(all);
  // Two endpoints, one truth: the spend card is the top's spend plus the rest's, to the micro-PKR.
  const micro = async (amounts: Locator) =>
    (await amounts.evaluateAll((all) => all.map((a) => Number(a.getAttribute('data-micro'))))).reduce(
      (x, y) => x + y,
      0,
    );
  const spendCard = await micro(page.getByTestId('card-spend-value').locator('[data-micro]'));
  expect(spendCard).toBeGreaterThan(0);
  expect(
    (await micro(top.locator('td:nth-child(4) [data-micro]'))) + (await micro(others.locator('[data-micro]'))),
  ).toBe(spendCard);
  await expect(page.getByTestId('card-requests-change')).toHaveText(/ vs before$/);
  await page.screenshot({ path: testInfo.outputPath('analytics-top.png'), fullPage: true });

  const first = top.first().getByRole('button');
  const name = (await first.textContent())!;
  await first.click();
  await expect(page.getByLabel('Key', { exact: true }).locator('option:checked')).toContainText(`${name} (`);
  // The window ends now: a request may have left its far edge since the top was read.
  await expect.poll(async () => Math.abs((await analytics.count('requests')) - shown[0]!)).toBeLessThanOrEqual(1);
  // Narrowed to one key, the top shows that key alone.
  await expect(top).toHaveCount(1);
});
