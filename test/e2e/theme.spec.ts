import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, signOut } from './pages/connect.js';
import { chooseTheme, paintedScheme, settled } from './pages/look.js';

// The system prefers light: "System" must follow it, a chosen theme must not.
test.use({ colorScheme: 'light' });

test('the chosen theme survives a reload, a sign-out and a sign-in, and is the account’s own', async ({
  consolePage: page,
}) => {
  await expect(page.getByTestId('theme-system')).toBeChecked();
  expect(await paintedScheme(page)).toBe('light');
  // Chosen before sign-in: kept by the browser, so the next start paints in it at once.
  await chooseTheme(page, 'dark');
  expect(await paintedScheme(page)).toBe('dark');
  await page.reload();
  await expect(page.getByTestId('connect-screen')).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('theme-dark')).toBeChecked();

  // The choice made before sign-in becomes the account's; the sidebar's switch changes it.
  await signInAsDemoAdmin(page);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await chooseTheme(page, 'system');
  expect(await paintedScheme(page)).toBe('light');
  await page.reload();
  await expect(page.getByTestId('session-email')).toBeVisible();
  await expect(page.getByTestId('theme-system')).toBeChecked();
  await chooseTheme(page, 'dark');
  await page.reload();
  await expect(page.getByTestId('session-email')).toBeVisible();
  await expect(page.getByTestId('theme-dark')).toBeChecked();
  expect(await paintedScheme(page)).toBe('dark');

  await signOut(page);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');

  // A browser that never saw it (its storage emptied) starts in the system's theme; signing in
  // brings the account's choice back from the host.
  await page.evaluate('localStorage.clear()');
  await page.reload();
  await expect(page.getByTestId('connect-screen')).toBeVisible();
  await expect(page.getByTestId('theme-system')).toBeChecked();
  expect(await paintedScheme(page)).toBe('light');
  await signInAsDemoAdmin(page);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('theme-dark')).toBeChecked();
});

test('charts take their series colours from the theme', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'analytics');
  await settled(page);
  const line = page.locator('.recharts-line-curve').first();
  await expect(line).toBeVisible();
  // A string expression: the Node-side tsconfig has no DOM types.
  const stroke = () => page.evaluate<string>("getComputedStyle(document.querySelector('.recharts-line-curve')).stroke");

  await chooseTheme(page, 'light');
  const light = await stroke();
  await chooseTheme(page, 'dark');
  const dark = await stroke();
  expect(light).toMatch(/^rgb\(/);
  expect(dark).toMatch(/^rgb\(/);
  expect(dark).not.toBe(light);
});
