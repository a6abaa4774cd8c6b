import type { Page } from '@playwright/test';
import type { Screen } from '../../renderer/src/state/screen-names.js';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { layoutProbe, widestInEachCell } from './pages/layout-probe.js';
import { RequestLog } from './pages/requests.js';
import { settled } from './pages/look.js';
import { TERMINATION_REASONS } from '../../renderer/src/screens/requests/request-row.js';
import { formatMs } from '../../renderer/src/lib/format.js';
import { API_LABELS } from '../../renderer/src/lib/request-api.js';
import { formatMicroPkrFixed } from '../../renderer/src/lib/money.js';
import {
  rowCompactCost,
  rowCostDecimals,
  rowTimeText,
  rowTokensText,
} from '../../renderer/src/screens/requests/row-figures.js';

/**
 * Every screen with a table (keys, provider keys, request log, activity, spend, members and
 * projects, the analytics' top tables), at the smallest and largest windows the console is made
 * for: no date or identifier is cut off or broken mid-word, and no table needs sideways scrolling.
 */

// No table may scroll sideways at any of these sizes, the keys table included.
const SIZES = [
  { width: 1280, height: 800, sidewaysAllowed: [] },
  { width: 1440, height: 900, sidewaysAllowed: [] },
  { width: 2560, height: 1440, sidewaysAllowed: [] },
];
const WITH_TABLES: Screen[] = ['keys', 'vault', 'requests', 'activity', 'spend', 'organisation', 'analytics'];

const costText = (micro: number) => rowCompactCost(micro) ?? formatMicroPkrFixed(micro, rowCostDecimals(micro));

/**
 * Per column of the request log (null: left as it is), the texts its formats produce at the edges
 * of each unit and rounding: the page puts the widest of each in the first row. Times: the 28th,
 * before and after noon, in every month (names differ in width).
 */
const DURATION_EDGES = [9_999, 599_940, 5_994_000, 359_640_000, 8_631_360_000, 863_913_600_000, 1e15];
const WIDEST_CANDIDATES: (string[] | null)[] = [
  Array.from({ length: 24 }, (_, i) => rowTimeText(new Date(2026, i % 12, 28, i < 12 ? 10 : 22, 58, 58).toISOString())),
  null, // model: names are cut with an ellipsis, whole in the tooltip
  Object.values(API_LABELS),
  ['200', '504'],
  null, // key: as the model
  null, // project: as the model
  DURATION_EDGES.map(formatMs),
  DURATION_EDGES.map(formatMs),
  [999_999, 888_888, 999_949_999, 999_949_999_999].flatMap((n) => [rowTokensText(n, true), rowTokensText(n, false)]),
  [999_999_900, 99_999_999_900, 88_888_888_800, 9_999_999_000_000, 999_949_999_999_999, 50].map(costText),
  TERMINATION_REASONS.map((r) => r.label),
];

async function findings(page: Page, sidewaysAllowed: readonly string[]): Promise<string[]> {
  await settled(page);
  return page.evaluate<string[]>(layoutProbe({ sidewaysAllowed }));
}

/** A saved view in the sidebar, so that its name is read too. */
async function saveView(page: Page, name: string): Promise<void> {
  await openScreen(page, 'requests');
  await new RequestLog(page).choose('Status', '5xx');
  await page.getByTestId('save-view').click();
  const dialog = page.getByTestId('save-view-dialog');
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByTestId('view-name-submit').click();
  await expect(dialog).toHaveCount(0);
}

test('tables and the sidebar read whole from 1280×800 to 2560×1440', async ({ consolePage: page }) => {
  test.setTimeout(180_000);
  await signInAsDemoAdmin(page);
  await saveView(page, 'Server errors on the checkout service');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const screen of WITH_TABLES) {
      await openScreen(page, screen);
      await expect(page.locator('main table').first()).toBeVisible();
      expect(await findings(page, size.sidewaysAllowed), `${screen} at ${size.width}×${size.height}`).toEqual([]);
    }
    // What the demo's newest rows hold depends on its traffic, so each column's first cell is given
    // the widest text its format can produce: every one must read whole, whatever the rows are.
    await openScreen(page, 'requests');
    const log = new RequestLog(page);
    await log.settled();
    // The API column where it fits beside the rest (from 1440 wide), else in the detail alone.
    await expect(page.getByRole('columnheader', { name: 'API' })).toBeVisible({ visible: size.width >= 1440 });
    const chosen = await page.evaluate<string[]>(widestInEachCell('[data-testid="request-row"]', WIDEST_CANDIDATES));
    expect(await findings(page, size.sidewaysAllowed), `${chosen.join(' | ')} at ${size.width}×${size.height}`).toEqual(
      [],
    );
    // A request's detail: its ids, model and metadata in a narrow panel beside the log.
    await log.rows.first().click();
    await expect(log.detail).toBeVisible();
    expect(await findings(page, size.sidewaysAllowed), `request detail at ${size.width}×${size.height}`).toEqual([]);
  }
});

test('the probe finds a cut date and an id broken mid-word', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'keys');
  await settled(page);
  // Squeeze a date cell and a prefix cell the way the bugs did: the probe must see both.
  await page.evaluate(`(() => {
    const date = document.querySelector('[data-testid="cell-created"] time');
    date.style.display = 'inline-block';
    date.style.width = '4em';
    date.style.overflow = 'hidden';
    const prefix = document.querySelector('[data-testid="cell-prefix"] code');
    prefix.style.display = 'inline-block';
    prefix.style.width = '3em';
    prefix.style.whiteSpace = 'normal';
    prefix.style.overflowWrap = 'anywhere';
    // And the table wider than any window, as the keys table once was.
    document.querySelector('.keys-table').style.minWidth = '3000px';
  })()`);
  const found = await findings(page, []);
  expect(found.some((line) => line.startsWith('clipped: [cell-created] time'))).toBe(true);
  expect(found.some((line) => line.startsWith('wrapped: [cell-prefix]'))).toBe(true);
  // A table wider than its box: seen when sideways scrolling is not allowed.
  expect(found.some((line) => line.startsWith('scrolls sideways: [keys-screen]'))).toBe(true);
});

test('a table allowed to scroll sideways must still show its name and actions', async ({ consolePage: page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signInAsDemoAdmin(page);
  await openScreen(page, 'keys');
  await settled(page);
  // Wider than the window, with nothing keeping its actions at the right edge.
  await page.evaluate(`void (document.querySelector('.keys-table').style.minWidth = '3000px')`);
  const found = await findings(page, ['keys-table']);
  // Allowed to scroll, so that is no finding; its actions out of view are, its name in view is not.
  expect(found.some((line) => line.startsWith('scrolls sideways'))).toBe(false);
  expect(found.some((line) => line.startsWith('out of view: actions of [keys-table]'))).toBe(true);
  expect(found.some((line) => line.startsWith('out of view: name column'))).toBe(false);
});
