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

  // The newest cell of a model with traffic opens the request log on that model, from the cell's start.
  const busy = health
    .models()
    .filter({ has: page.locator('[data-testid="strip-cell"]:not([data-status="no_traffic"])') });
  const row = busy.first();
  const busyName = (await row.getAttribute('data-model'))!;
  const cell = row.locator('[data-testid="strip-cell"]:not([data-status="no_traffic"])').last();
  const status = await cell.getAttribute('data-status');
  await cell.click({ force: true });
  const log = new RequestLog(page);
  await expect(log.screen).toBeVisible();
  await log.settled();
  const hash = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
  expect(hash.get('model')).toBe(busyName);
  expect(hash.get('range')).toMatch(/^\d+m$/);
  if (status === 'ok') expect(hash.get('status')).toBeNull();
  await expect(log.filters.getByLabel('Model', { exact: true })).toHaveValue(busyName);
  expect(await log.total()).toBeGreaterThan(0);
  await page.screenshot({ path: testInfo.outputPath('health-to-requests.png'), fullPage: true });
});
