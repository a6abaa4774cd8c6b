import { join } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';
import { RequestLog } from './pages/requests.js';

/**
 * Finding things fast, against the embedded demo organisation: saved views kept with the
 * connection profile by the host, and the command palette (Ctrl+K) with the shortcuts of the
 * console's actions.
 */

const savedView = (page: Page, name: string): Locator =>
  page.getByTestId('saved-views').getByRole('link', { name, exact: true });

/** The sidebar's entry of a saved view: its link and its rename and remove buttons. */
const savedViewItem = (page: Page, name: string): Locator =>
  page.getByTestId('saved-view').filter({ has: page.getByRole('link', { name, exact: true }) });

async function palette(page: Page): Promise<Locator> {
  await page.keyboard.press('Control+k');
  const dialog = page.getByTestId('command-palette');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('combobox')).toBeFocused();
  return dialog;
}

test('a request-log filter saved under a name, renamed, opened after a reload, and removed', async ({
  consolePage: page,
}) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.choose('Time range', 'Last 7 days');
  await log.choose('Status', '5xx');
  await expect(page).toHaveURL(/status=5xx/);

  await page.getByTestId('save-view').click();
  const dialog = page.getByTestId('save-view-dialog');
  await dialog.getByLabel('Name').fill('Server errors');
  await dialog.getByTestId('view-name-submit').click();
  await expect(dialog).toHaveCount(0);
  await expect(savedView(page, 'Server errors')).toHaveAttribute('aria-current', 'true');

  // A second view may not take the name in another case: said at the name field.
  await page.getByTestId('save-view').click();
  await dialog.getByLabel('Name').fill('SERVER ERRORS');
  await dialog.getByTestId('view-name-submit').click();
  await expect(dialog.getByTestId('field-error')).toHaveText('there is already a saved view named "SERVER ERRORS"');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await savedViewItem(page, 'Server errors').getByTestId('rename-view').click();
  const rename = page.getByTestId('rename-view-dialog');
  await rename.getByLabel('Name').fill('Failing requests this week');
  await rename.getByLabel('Name').press('Enter');
  await expect(rename).toHaveCount(0);
  await expect(savedView(page, 'Failing requests this week')).toBeVisible();
  await expect(savedView(page, 'Server errors')).toHaveCount(0);

  // Elsewhere, then a reload: the host kept the view with the profile.
  await openScreen(page, 'keys');
  await page.reload();
  await expect(page.getByTestId('keys-screen')).toBeVisible();
  const kept = savedView(page, 'Failing requests this week');
  await expect(kept).not.toHaveAttribute('aria-current', 'true');
  await kept.click();
  await log.settled();
  await expect(page).toHaveURL(/#\/requests\?range=7d&status=5xx$/);
  await expect(log.filters.getByLabel('Status', { exact: true })).toHaveValue('5xx');
  await expect(kept).toHaveAttribute('aria-current', 'true');

  await savedViewItem(page, 'Failing requests this week').getByTestId('remove-view').click();
  await page.getByTestId('confirm-dialog').getByTestId('confirm').click();
  await expect(kept).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('saved-views')).toContainText('None yet');
});

test('Ctrl+K jumps to a screen, a key by its prefix and a request by its id; an action runs by its shortcut', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const keys = new KeysPage(page);
  await keys.loaded();
  const firstKey = page.getByTestId('key-row').first();
  const keyName = (await firstKey.getByTestId('cell-name').locator('strong').textContent())!;
  const prefix = (await firstKey.getByTestId('cell-prefix').textContent())!.replace('…', '');

  // A screen, by a word of its name.
  let dialog = await palette(page);
  await page.screenshot({ path: join(testInfo.project.outputDir, 'palette.png') });
  await page.keyboard.type('analyt');
  await expect(dialog.getByRole('option').first()).toContainText('Go to Analytics');
  await expect(dialog.getByRole('option').first()).toContainText('Alt+3');
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('nav-analytics')).toHaveAttribute('aria-current', 'page');

  // A key, by its prefix: the keys screen narrowed to it.
  dialog = await palette(page);
  await page.keyboard.type(prefix);
  await expect(dialog.getByRole('option').first()).toContainText(keyName);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('filter-key')).toContainText(keyName);
  await expect(page.getByTestId('key-row')).toHaveCount(1);
  await expect(keys.row(keyName)).toBeVisible();

  // A request, by its id, opened in the request log's detail from another screen.
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  const requestId = (await log.rows.nth(5).getAttribute('data-req-id'))!;
  await openScreen(page, 'activity');
  dialog = await palette(page);
  await page.keyboard.type(requestId);
  await expect(dialog.getByRole('option').first()).toHaveText(new RegExp(`Open request ${requestId}`));
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('nav-requests')).toHaveAttribute('aria-current', 'page');
  await expect(log.detail.getByTestId('detail-req-id')).toHaveText(requestId);
  // Kept in the address: a reload opens it again.
  await page.reload();
  await expect(log.detail.getByTestId('detail-req-id')).toHaveText(requestId);

  // A request older than the request log's default window (24 h), whose id its newer
  // neighbours may mention: the last row of 30 days, looked up by its exact id.
  await page.evaluate(`window.location.hash = '#/requests?range=30d&size=10'`);
  await log.settled();
  const lastPage = Math.ceil((await log.total()) / 10);
  await page.evaluate(`window.location.hash = '#/requests?range=30d&size=10&page=${lastPage}'`);
  await log.settled();
  const oldId = (await log.rows.last().getAttribute('data-req-id'))!;
  await openScreen(page, 'keys');
  dialog = await palette(page);
  await page.keyboard.type(oldId);
  await page.keyboard.press('Enter');
  await expect(log.detail.getByTestId('detail-req-id')).toHaveText(oldId);
  await expect(page.getByTestId('request-open-error')).toHaveCount(0);

  // Escape closes the palette, and the focus is back where it was.
  const search = page.getByTestId('request-search');
  await search.focus();
  await palette(page);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('command-palette')).toHaveCount(0);
  await expect(search).toBeFocused();

  // An action by its shortcut, outside the palette and any field: a new key's dialog, on the keys screen.
  await search.blur();
  await page.keyboard.press('Alt+Shift+KeyK');
  await expect(page.getByTestId('create-key-dialog')).toBeVisible();
  await expect(page.getByTestId('nav-keys')).toHaveAttribute('aria-current', 'page');
});
