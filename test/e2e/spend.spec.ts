import { expect, test } from './fixtures.js';
import { KeysPage } from './pages/keys.js';
import { signInAsDemoAdmin } from './pages/connect.js';
import { SpendPage } from './pages/spend.js';

/**
 * The demo organisation's deposits, limits and spend on the spend screen: the budget adds up,
 * every key has its forecast, the order is the server's, and a limit changed on the keys
 * screen moves the budget's headroom by the same amount.
 */

test('the budget adds up, each key shows its spend, week and forecast, and a new limit takes headroom', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const spend = new SpendPage(page);
  await spend.open();

  const deposited = await spend.micro(spend.card('deposited'));
  const allocated = await spend.micro(spend.card('allocated'));
  const headroom = await spend.micro(spend.card('headroom'));
  const spent = await spend.micro(spend.card('spent'));
  expect(deposited).toBeGreaterThan(0);
  expect(allocated).toBeGreaterThan(0);
  expect(headroom).toBe(deposited - allocated);
  expect(await spend.micro(spend.card('remaining'))).toBe(deposited - spent);
  await expect(spend.card('forecast')).toHaveText(/Runs out|Used up|No spend|PKR/);
  // Hovering an amount gives it exactly.
  await expect(spend.card('spent').locator('.money')).toHaveAttribute('title', /^[\d.]+ PKR \([\d,]+ micro-PKR\)$/);

  // Every active key, each with a forecast (the request log is readable: none is unknown).
  const count = await spend.rows().count();
  expect(count).toBeGreaterThan(5);
  await expect(page.getByTestId('page-text')).toHaveText(`1–${count} of ${count}`);
  const kinds = await spend
    .rows()
    .getByTestId('spend-forecast')
    .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-kind')));
  expect(kinds).not.toContain('unknown');
  expect(kinds).toContain('projected');
  // Limited keys show their spend as a share of the limit.
  await expect(spend.rows().getByRole('meter').first()).toHaveAttribute('aria-valuetext', /of [\d,.]+ PKR \(\d+ %\)$/);
  await page.screenshot({ path: testInfo.outputPath('spend.png'), fullPage: true });

  await page.getByTestId('spend-sort').selectOption('name');
  await spend.settled();
  await expect.poll(() => spend.names()).toEqual([...(await spend.names())].sort((a, b) => a.localeCompare(b)));

  // A limit given on the keys screen comes out of the headroom, to the micro-PKR.
  const name = 'Staging backend';
  const row = spend.rows().filter({ has: page.locator('.key-name', { hasText: name }) });
  const keySpent = await spend.micro(row.getByTestId('spend-spent'));
  const limitPkr = Math.ceil(keySpent / 1_000_000) + 100;
  expect(limitPkr * 1_000_000).toBeLessThan(headroom);
  const keys = new KeysPage(page);
  await page.getByTestId('nav-keys').click();
  await keys.loaded();
  await keys.edit(name, { creditPkr: String(limitPkr) });
  await spend.open();
  await expect.poll(() => spend.micro(spend.card('headroom'))).toBe(headroom - limitPkr * 1_000_000);
  await expect(row.getByRole('meter')).toHaveAttribute(
    'aria-valuetext',
    new RegExp(`of ${limitPkr.toLocaleString('en-US')}\\.00 PKR`),
  );
  await expect(row.getByTestId('spend-forecast')).toHaveAttribute('data-kind', /runs_out|idle/);
});
