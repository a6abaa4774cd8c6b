import { expect, test } from './fixtures.js';
import { signInAsDemoAdmin } from './pages/connect.js';
import { HealthPage } from './pages/health.js';
import { layoutProbe } from './pages/layout-probe.js';
import { settled } from './pages/look.js';
import { RequestLog } from './pages/requests.js';

/**
 * The health screen on the embedded demo: each provider with its models, their figures and a
 * status strip of five-minute cells with a text alternative; a model's cell opens the request
 * log filtered to that model from that cell on (and to its errors when it had some).
 */

test('providers and models with their strips; a cell opens the request log filtered to it', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const health = new HealthPage(page);
  await health.open();

  // The demo's traffic names several providers of the catalogue, each with its models under it.
  expect(await health.providers().count()).toBeGreaterThan(1);
  expect(await health.models().count()).toBeGreaterThan(3);
  const model = health.models().first();
  const name = (await model.getAttribute('data-model'))!;
  await expect(model.getByTestId('health-status')).toHaveText(/^(ok|degraded|down|no traffic)$/);
  // The last hour is twelve cells, said in words too.
  const strip = model.getByTestId('status-strip');
  await expect(strip.getByTestId('strip-cell')).toHaveCount(12);
  await expect(strip).toHaveAttribute('aria-label', new RegExp(`^${name.replace('/', '\\/')}: By 5 minutes from `));
  await page.screenshot({ path: testInfo.outputPath('health.png'), fullPage: true });
  // At 1280 wide nothing is cut, no model name breaks, and the table needs no sideways scrolling.
  await page.setViewportSize({ width: 1280, height: 800 });
  await settled(page);
  expect(await page.evaluate<string[]>(layoutProbe({ sidewaysAllowed: [] }))).toEqual([]);

  // A day is 288 cells in the same width.
  await page.getByTestId('health-window').selectOption('24h');
  await health.settled();
  await expect(health.models().first().getByTestId('strip-cell')).toHaveCount(288);
  await page.screenshot({ path: testInfo.outputPath('health-24h.png'), fullPage: true });
  await page.getByTestId('health-window').selectOption('1h');
  await health.settled();

  // The newest cell of a model with traffic opens the request log on exactly that cell's five
  // minutes and that model: the log counts the same requests as the square.
  const busy = health
    .models()
    .filter({ has: page.locator('[data-testid="strip-cell"]:not([data-status="no_traffic"])') });
  const row = busy.first();
  const busyName = (await row.getAttribute('data-model'))!;
  const cell = row.locator('[data-testid="strip-cell"]:not([data-status="no_traffic"])').last();
  const status = await cell.getAttribute('data-status');
  const start = (await cell.getAttribute('data-start'))!;
  const requests = Number(await cell.getAttribute('data-requests'));
  await cell.click({ force: true });
  const log = new RequestLog(page);
  await expect(log.screen).toBeVisible();
  await log.settled();
  const hash = () => new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
  expect(hash().get('model')).toBe(busyName);
  expect(hash().get('from')).toBe(start);
  expect(hash().get('to')).toBe(new Date(Date.parse(start) + 300_000).toISOString());
  if (status === 'ok') {
    expect(hash().get('status')).toBeNull();
    expect(await log.total()).toBe(requests);
  } else expect(await log.total()).toBeGreaterThan(0);
  await expect(log.filters.getByLabel('Model', { exact: true })).toHaveValue(busyName);
  await expect(log.filters.getByTestId('filter-range')).toHaveValue('between');
  await expect(log.filters.getByTestId('filter-from')).not.toHaveValue('');
  await page.screenshot({ path: testInfo.outputPath('health-to-requests.png'), fullPage: true });

  // A provider's name opens the log of all its models over the window: as many as its row counts.
  await page.goBack();
  await health.settled();
  const provider = page.locator('[data-testid="health-provider"]:not([data-provider=""])').first();
  const providerName = (await provider.getAttribute('data-provider'))!;
  const providerRequests = Number(((await provider.locator('td').nth(1).textContent()) ?? '').replaceAll(',', ''));
  await provider.getByRole('button', { name: providerName }).click();
  await log.settled();
  expect(hash().get('provider')).toBe(providerName);
  await expect(log.filters.getByTestId('filter-provider')).toHaveValue(providerName);
  expect(await log.total()).toBe(providerRequests);
});

test('a window in the past: a day ending when asked, read as of then, and back to now', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const health = new HealthPage(page);
  await health.open();
  await page.getByTestId('health-window').selectOption('24h');
  await health.settled();
  // Two days back, at a whole hour in the user's zone (the demo holds weeks of traffic).
  const end = new Date(Date.now() - 2 * 86_400_000);
  end.setMinutes(0, 0, 0);
  const local = (d: Date) =>
    `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:00`;
  await page.getByTestId('health-to').fill(local(end));
  await health.settled();
  const first = health.models().first().getByTestId('strip-cell').first();
  await expect(first).toHaveAttribute('data-start', new Date(end.getTime() - 86_400_000).toISOString());
  await expect(page.getByTestId('health-as-of')).toContainText('Up to');
  await expect(health.models().first().getByTestId('strip-cell')).toHaveCount(288);
  expect(await page.locator('[data-testid="strip-cell"]:not([data-status="no_traffic"])').count()).toBeGreaterThan(0);
  await page.screenshot({ path: testInfo.outputPath('health-past-day.png'), fullPage: true });
  await page.getByTestId('health-now').click();
  await health.settled();
  await expect(page.getByTestId('health-as-of')).toContainText('As of');
});
