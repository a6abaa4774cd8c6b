import { expect, type Page } from '@playwright/test';

/** The console's look as a user sets and sees it: the theme switch, and a screen done loading. */

export type Theme = 'system' | 'light' | 'dark';

/** Picks a theme in the switch on screen (sidebar or connection screen) and waits for the page to take it. */
export async function chooseTheme(page: Page, theme: Theme): Promise<void> {
  await page.getByTestId('theme-switch').getByTestId(`theme-${theme}`).check();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

/** The palette the page paints in: its <html>'s colour scheme, as the browser resolved it. */
export async function paintedScheme(page: Page): Promise<'light' | 'dark'> {
  // The background's lightness says which palette light-dark() resolved to.
  const background = await page.evaluate<string>('getComputedStyle(document.documentElement).backgroundColor');
  const [r = 0, g = 0, b = 0] = (background.match(/\d+/g) ?? []).map(Number);
  return r + g + b > 384 ? 'light' : 'dark';
}

/** Waits until nothing on screen is loading: no busy region, no loading line. */
export async function settled(page: Page): Promise<void> {
  await expect(page.locator('[aria-busy="true"]')).toHaveCount(0);
  await expect(page.locator('.loading')).toHaveCount(0);
}
