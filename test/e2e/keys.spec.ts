import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';

// A zone east of UTC, so an expiry typed as local time must reach the server with its offset.
test.use({ timezoneId: 'Asia/Karachi' });

test('a key is created with its secret shown once, edited into each server error and then for real, and revoked', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();

  const name = unique('e2e key');
  const secret = await keys.create({ project: 'Support Bot', name, environment: 'testing', creditPkr: '25.5' });
  const prefix = secret.slice(0, 15);
  const secretDialog = page.getByTestId('secret-dialog');
  await expect(secretDialog.getByTestId('secret-warning')).toContainText('only time it is shown');
  await secretDialog.getByTestId('copy-secret').click();
  await expect(secretDialog.getByTestId('copy-secret')).toHaveText('Copied');
  // A string expression: the Node-side tsconfig has no DOM types.
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
  await page.screenshot({ path: testInfo.outputPath('keys-secret.png') });
  // Stray Escapes do not close it and lose the only copy: only its own button does.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Escape');
  await expect(secretDialog.getByTestId('secret')).toBeVisible();
  await expect(secretDialog.getByTestId('secret')).toHaveText(secret);
  await keys.closeSecret();

  // Gone once closed: not on the page, not in the row, not back after a reload or in the edit dialog.
  await expect(keys.cell(name, 'prefix')).toHaveText(`${prefix}…`);
  await expect(page.getByText(secret)).toHaveCount(0);
  await page.reload();
  await keys.loaded();
  await expect(keys.row(name)).toHaveCount(1);
  await expect(page.getByTestId('secret-dialog')).toHaveCount(0);
  expect(await page.content()).not.toContain(secret);
  await expect(keys.cell(name, 'credit')).toHaveText('25.50 PKR');
  await expect(keys.cell(name, 'spend')).toHaveText('0.00 PKR');
  await expect(keys.cell(name, 'expiry')).toHaveText('no expiry');
  await expect(keys.cell(name, 'last-used')).toHaveText('never');
  await expect(keys.cell(name, 'models')).toHaveText('any');

  const dialog = await keys.openEdit(name);
  expect(await page.content()).not.toContain(secret);
  await expect(dialog.getByLabel('Credit limit (PKR)')).toHaveValue('25.50');

  // Each of the server's 400s, at its field.
  await keys.submitLimits({ rate: '10001' });
  await expect(keys.fieldError('rate')).toHaveText('rate limit 10001 rpm is above the platform ceiling of 10000 rpm');

  await keys.submitLimits({ rate: '120', expires: '2020-01-01T00:00' });
  await expect(keys.fieldError('expiry')).toHaveText('expires_at must be in the future');
  await expect(keys.fieldError('rate')).toHaveCount(0);

  await keys.submitLimits({ expires: '', creditPkr: '1000000000' });
  await expect(keys.fieldError('credit')).toContainText(
    /^credit limits would total [\d.]+ PKR, above the organisation budget of [\d.]+ PKR$/,
  );
  await expect(keys.fieldError('expiry')).toHaveCount(0);

  // Finer than a micro-PKR: caught before it is sent.
  await keys.submitLimits({ creditPkr: '0.0000001' });
  await expect(keys.fieldError('credit')).toContainText('the smallest credit limit is 0.000001 PKR');

  // And then a change the server takes.
  await keys.submitLimits({ rate: '250', creditPkr: '40', expires: '2031-01-15T10:30' });
  await expect(keys.editDialog()).toHaveCount(0);
  await expect(keys.cell(name, 'rate')).toHaveText('250 rpm');

  await page.reload();
  await keys.loaded();
  await expect(keys.cell(name, 'rate')).toHaveText('250 rpm');
  await expect(keys.cell(name, 'credit')).toHaveText('40.00 PKR');
  // 10:30 in Karachi (UTC+5) is 05:30 UTC.
  await expect(keys.cell(name, 'expiry').locator('time')).toHaveAttribute('datetime', '2031-01-15T05:30:00.000Z');

  await keys.revoke(name, prefix);
  await expect(keys.row(name)).toHaveCount(0);
  await page.reload();
  await keys.loaded();
  await expect(keys.row(name)).toHaveCount(0);
});

test('a demo key with spend refuses a credit limit below it; filters and sort survive a reload', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();

  // Spend comes from usage-throttling; this demo key carries traffic and has no limit or expiry.
  const demo = 'Staging backend';
  await expect(keys.cell(demo, 'spend')).toHaveText(/PKR$/);
  const spent = (await keys.cell(demo, 'spend').textContent())!;
  expect(Number(spent.replace(/[^\d.]/g, ''))).toBeGreaterThan(0);
  await page.screenshot({ path: testInfo.outputPath('keys.png'), fullPage: true });

  await keys.openEdit(demo);
  await keys.submitLimits({ creditPkr: '0.000001' });
  await expect(keys.fieldError('credit')).toContainText(
    `credit limit 0.000001 PKR is below this key's spend so far of`,
  );
  await keys.editDialog().getByRole('button', { name: 'Cancel' }).click();
  await expect(keys.editDialog()).toHaveCount(0);

  // Filter by project and environment, sort by spend: all in the address, all back after a reload.
  await page.getByTestId('filter-project').getByLabel('Project').selectOption({ label: 'Default' });
  await page.getByTestId('filter-environment').getByLabel('Environment').selectOption('development');
  await page.getByTestId('sort-spend').click();
  const names = () => page.getByTestId('key-row').getByTestId('cell-name').locator('strong').allTextContents();
  await expect(page.getByTestId('key-row')).toHaveCount(2);
  expect((await names()).sort()).toEqual(['Local development', 'Staging backend']);
  const sorted = await names();
  await expect(page.locator('th', { has: page.getByTestId('sort-spend') })).toHaveAttribute('aria-sort', 'ascending');

  await page.reload();
  await keys.loaded();
  await expect(page.getByTestId('key-row')).toHaveCount(2);
  expect(await names()).toEqual(sorted);
  await expect(page.getByTestId('filter-environment').getByLabel('Environment')).toHaveValue('development');
  await expect(page.locator('th', { has: page.getByTestId('sort-spend') })).toHaveAttribute('aria-sort', 'ascending');
});
