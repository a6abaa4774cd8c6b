import type { Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { AnalyticsPage } from './pages/analytics.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';

/**
 * The dashboard's panels over the demo organisation's month of requests: their figures agree
 * with the cards (another endpoint over the same rows), follow the filters and a click on a top
 * row, and move into the organisation's reporting zone without changing a total.
 */

const micro = async (amounts: Locator) =>
  (await amounts.evaluateAll((all) => all.map((a) => Number(a.getAttribute('data-micro'))))).reduce((x, y) => x + y, 0);

/** The dashboard's spend over the window, micro-PKR, once the panels have an answer. */
async function dashboardSpend(page: Page): Promise<number> {
  await expect(page.getByTestId('dashboard')).toHaveAttribute('aria-busy', 'false');
  return micro(page.getByTestId('dashboard-spend-total').locator('[data-micro]'));
}

/** The spend card's micro-PKR (GET /analytics/compare, another endpoint over the same rows). */
async function cardSpend(page: Page): Promise<number> {
  return micro(page.getByTestId('card-spend-value').locator('[data-micro]'));
}

/**
 * The dashboard's figures less the cards', read at one moment: zero when they agree. The window
 * ends now, so a row may leave its far edge between two reads; a later refresh then agrees again.
 */
async function disagreement(page: Page, analytics: AnalyticsPage): Promise<number[]> {
  // Narrowed to one key, the cards show the contract's cost (rounded) instead of the spend card.
  const spend = (await page.getByTestId('card-spend').count())
    ? (await dashboardSpend(page)) - (await cardSpend(page))
    : 0;
  return [spend, (await outcomeRequests(page)) - (await analytics.count('requests'))];
}

/** The requests of every outcome, as the outcome chart's label counts them. */
async function outcomeRequests(page: Page): Promise<number> {
  const label = (await page.getByTestId('dashboard-chart-outcomes').getAttribute('aria-label')) ?? '';
  const counts = [...label.split(':')[1]!.matchAll(/([\d,]+) (?:2xx|4xx|5xx|refused by gateway)/g)];
  expect(counts).toHaveLength(4);
  return counts.reduce((all, m) => all + Number(m[1]!.replace(/,/g, '')), 0);
}

test('the panels agree with the cards, follow the filters and a top row, and move into the reporting zone', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const analytics = new AnalyticsPage(page);
  await analytics.open();
  await analytics.chooseRange('Last 7 days');
  await analytics.settled();

  for (const name of ['outcomes', 'spend', 'latency', 'tokens', 'speed', 'cache']) {
    await expect(page.getByTestId(`dashboard-panel-${name}`)).toBeVisible();
  }
  await expect(page.getByTestId('dashboard-zone').first()).toHaveText('Times in UTC');
  await expect(page.getByTestId('dashboard-latency-title')).toHaveAttribute('title', /1\s?%/);
  // Two endpoints, one truth: the outcomes add up to the requests card, the spend to the spend card.
  await expect.poll(() => disagreement(page, analytics), { timeout: 40_000 }).toEqual([0, 0]);
  // Each panel beside the week before.
  for (const name of ['outcomes', 'spend', 'latency', 'tokens', 'speed']) {
    await expect(page.getByTestId(`dashboard-${name}-versus`)).toContainText(' vs before');
  }
  await expect(page.getByTestId('dashboard-latency-versus')).toHaveText(/^p95 [\d,.]+ m?s, /);
  const spendCard = await cardSpend(page);
  expect(spendCard).toBeGreaterThan(0);
  // The demo's routes with a prompt cache show what it saved; a route without one shows "–".
  await expect(page.getByTestId('cache-row').first()).toBeVisible();
  expect(await page.getByTestId('cache-row').count()).toBeGreaterThan(3);
  await page.screenshot({ path: testInfo.outputPath('dashboard.png'), fullPage: true });

  // A project narrows every panel.
  await analytics.chooseProject('Support Bot');
  await expect.poll(() => dashboardSpend(page)).toBeLessThan(spendCard);
  await expect.poll(() => disagreement(page, analytics), { timeout: 40_000 }).toEqual([0, 0]);
  await page.getByLabel('Project').selectOption('');
  await expect.poll(() => dashboardSpend(page)).toBeGreaterThan(spendCard / 2);

  // A click on the top key narrows the dashboard to it.
  const top = page.getByTestId('top-row').first();
  const keySpend = await micro(top.locator('td:nth-child(4) [data-micro]'));
  await top.getByRole('button').click();
  await expect.poll(async () => Math.abs((await dashboardSpend(page)) - keySpend)).toBeLessThan(spendCard / 100);
  await expect.poll(() => disagreement(page, analytics), { timeout: 40_000 }).toEqual([0, 0]);
  await page.getByLabel('Key', { exact: true }).selectOption('');

  // Kathmandu's days: the buckets move to its wall clock, the window's totals stay.
  await openScreen(page, 'organisation');
  const zone = page.getByTestId('reporting-zone-input');
  await zone.fill('Asia/Kathmandu');
  await page.getByTestId('reporting-zone-save').click();
  await expect(page.getByTestId('reporting-zone-text')).toContainText('+05:45');
  await analytics.open();
  await analytics.chooseRange('Last 7 days');
  await expect(page.getByTestId('dashboard-zone').first()).toHaveText('Times in Asia/Kathmandu');
  await expect.poll(() => disagreement(page, analytics), { timeout: 40_000 }).toEqual([0, 0]);
  await page.screenshot({ path: testInfo.outputPath('dashboard-kathmandu.png'), fullPage: true });
});
