import { expect, test } from './fixtures.js';

test('the demo admin signs in with one click and signs out again', async ({ consolePage: page }, testInfo) => {
  await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
  await page.screenshot({ path: testInfo.outputPath('connect.png') });
  await page.getByTestId('demo-sign-in').click();
  await expect(page.getByTestId('session-email')).toHaveText('admin@demo.example');
  await page.getByTestId('sign-out').click();
  await expect(page.getByTestId('connect-screen')).toBeVisible();
});
