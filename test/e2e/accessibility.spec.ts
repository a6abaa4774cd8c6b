import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page, TestInfo } from '@playwright/test';
import { SCREENS, type Screen } from '../../renderer/src/state/screen-names.js';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { chooseTheme, settled, type Theme } from './pages/look.js';

/**
 * Every screen, the connection screen and the main dialogs, in both themes, checked by axe-core
 * against WCAG 2.0/2.1 A and AA: none may have a serious or critical violation. Screens are taken
 * from the navigation's own list, so a screen added later is checked without a change here.
 */

const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const BLOCKING = new Set(['serious', 'critical']);
/** Screens whose full-page picture is kept in test-results/e2e, one per theme. */
const PICTURED = new Set<Screen>(['keys', 'analytics', 'requests', 'spend']);

async function expectAccessible(page: Page, where: string): Promise<void> {
  await settled(page);
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  const blocking = violations
    .filter((violation) => BLOCKING.has(violation.impact ?? ''))
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help}\n` +
        violation.nodes
          .slice(0, 5)
          .map((node) => `    ${node.target.join(' ')}: ${node.failureSummary?.split('\n').slice(1).join(' ')}`)
          .join('\n'),
    );
  expect(blocking, `serious or critical violations on ${where}`).toEqual([]);
}

/** Opens a dialog from `opener`, checks the page with it open, and closes it with Escape (focus returns). */
async function checkDialog(page: Page, where: string, opener: Locator): Promise<void> {
  await opener.click();
  const dialog = page.locator('dialog[open]');
  await expect(dialog).toBeVisible();
  // Focus moved into the dialog, which keeps it: the page behind is inert.
  await expect(dialog.locator(':focus')).toHaveCount(1);
  await expectAccessible(page, where);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(opener).toBeFocused();
}

async function picture(page: Page, testInfo: TestInfo, theme: Theme, screen: Screen | 'connect'): Promise<void> {
  if (screen !== 'connect' && !PICTURED.has(screen)) return;
  // Beside the tests' own folders, under a name that says what it shows (theme-dark-keys.png).
  await page.screenshot({ path: join(testInfo.project.outputDir, `theme-${theme}-${screen}.png`), fullPage: true });
}

for (const theme of ['light', 'dark'] as const) {
  test(`every screen and the main dialogs pass axe's WCAG A/AA checks in the ${theme} theme`, async ({
    consolePage: page,
  }, testInfo) => {
    test.setTimeout(240_000);
    await chooseTheme(page, theme);
    await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
    await expectAccessible(page, `the connection screen (${theme})`);
    await picture(page, testInfo, theme, 'connect');

    await signInAsDemoAdmin(page);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    for (const screen of SCREENS) {
      await openScreen(page, screen);
      await expectAccessible(page, `${screen} (${theme})`);
      await picture(page, testInfo, theme, screen);
    }

    await openScreen(page, 'keys');
    await settled(page);
    await checkDialog(page, `the create-key dialog (${theme})`, page.getByTestId('create-key'));
    const firstKey = page.getByTestId('key-row').first();
    await checkDialog(page, `the edit-key dialog (${theme})`, firstKey.getByTestId('edit-key'));
    await checkDialog(page, `the revoke dialog (${theme})`, firstKey.getByTestId('revoke-key'));

    // Added with the key safety work: rotating one key, and acting on a selection of keys.
    await checkDialog(page, `the rotate-key dialog (${theme})`, firstKey.getByTestId('rotate-key'));
    await firstKey.getByTestId('select-key').check();
    await checkDialog(page, `the bulk limits dialog (${theme})`, page.getByTestId('bulk-limits'));
    await checkDialog(page, `the bulk revoke dialog (${theme})`, page.getByTestId('bulk-revoke'));
    await page.getByTestId('clear-selection').click();

    await openScreen(page, 'vault');
    await settled(page);
    await checkDialog(page, `the provider-key dialog (${theme})`, page.getByTestId('add-vault-key'));

    await checkDialog(page, `the command palette (${theme})`, page.getByTestId('open-palette'));

    await openScreen(page, 'requests');
    await settled(page);
    await checkDialog(page, `the save-view dialog (${theme})`, page.getByTestId('save-view'));
    await page.getByTestId('request-row').first().click();
    await expect(page.getByTestId('request-detail')).toBeVisible();
    await expectAccessible(page, `the request detail (${theme})`);
  });
}
