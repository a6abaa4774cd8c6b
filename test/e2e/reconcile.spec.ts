import BetterSqlite3 from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { ReconcilePage } from './pages/reconcile.js';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

interface ReconcileQuery {
  from?: string;
  to?: string;
  kinds?: string;
}

/** The queries of every `api.reconcile` call the page makes from now on, as they leave it. */
function reconcileCalls(page: Page): ReconcileQuery[] {
  const asked: ReconcileQuery[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/bridge/api.reconcile')) {
      asked.push((request.postDataJSON() as { query?: ReconcileQuery }).query ?? {});
    }
  });
  return asked;
}

/**
 * Holds the `nth` day's call (1-based) until `release`, so a test sees a check half way, as it
 * would at millions of rows a day.
 */
async function holdDay(page: Page, nth: number): Promise<() => void> {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let days = 0;
  await page.route('**/bridge/api.reconcile', async (route) => {
    const { query } = route.request().postDataJSON() as { query?: ReconcileQuery };
    if (query?.kinds !== 'spend' && ++days === nth) await held;
    await route.continue();
  });
  return release;
}

/** The embedded server's control store somewhere in the shell's data folder. */
function controlStoreIn(folder: string): string {
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'control.db') return join(entry.parentPath, entry.name);
  }
  throw new Error(`no control.db under ${folder}`);
}

test('the demo reconciles, and a settled spend that lost an update is named by its key', async ({
  consolePage: page,
  shell,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const asked = reconcileCalls(page);
  await openScreen(page, 'reconcile');
  const reconcile = new ReconcilePage(page);
  // Opening the screen reads nothing: the form, ready at once, and no report until Check.
  await reconcile.ready();
  await expect(page.getByTestId('reconcile-idle')).toBeVisible();
  await expect(page.getByTestId('reconcile-from')).toHaveValue(daysAgo(1));
  await expect(page.getByTestId('reconcile-to')).toHaveValue(daysAgo(0));
  await expect(reconcile.summary).toHaveCount(0);
  expect(asked).toEqual([]);

  await reconcile.check();
  // The lifetime spend, then each of the two days.
  expect(asked.map((query) => query.kinds)).toEqual(['spend', 'totals,rollups', 'totals,rollups']);
  expect(page.url()).toContain(`from=${daysAgo(1)}`);
  await expect(reconcile.summary).toContainText('Everything agrees');
  await expect(reconcile.counts('rollups')).toContainText(/checked: [\d,]+ agree$/);
  await expect(reconcile.lines).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath('reconcile.png'), fullPage: true });

  // A spend update lost: one key's settled spend edited in the store's file, as a crash might leave it.
  const db = new BetterSqlite3(controlStoreIn(shell.dataDir));
  const key = db.prepare('SELECT id, name FROM api_keys WHERE spent_micro > 1000000 ORDER BY id LIMIT 1').get() as {
    id: string;
    name: string;
  };
  db.prepare('UPDATE api_keys SET spent_micro = spent_micro - 1000000 WHERE id = ?').run(key.id);
  db.close();

  await reconcile.check();
  await expect(reconcile.summary).toContainText('1 disagreement');
  const line = reconcile.lines.filter({ hasText: key.name });
  await expect(line).toHaveAttribute('data-check', 'settled_spend');
  await expect(line).toContainText('expected');
  await expect(line).toContainText('1.00 PKR)');
  await page.screenshot({ path: testInfo.outputPath('reconcile-disagreement.png'), fullPage: true });

  await line.getByRole('button', { name: 'Open in the request log' }).click();
  await expect(page.getByTestId('nav-requests')).toHaveAttribute('aria-current', 'page');
  expect(page.url()).toContain(`key=${key.id}`);
});

test('a window past 31 days is checked a day at a time, with its progress; Stop keeps what was checked', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'reconcile');
  const reconcile = new ReconcilePage(page);
  await reconcile.ready();
  const from = daysAgo(34);
  const to = daysAgo(0);
  await reconcile.setWindow(from, to);
  const asked = reconcileCalls(page);
  let release = await holdDay(page, 13);

  await reconcile.start();
  // Twelve days in, the thirteenth on its way: the progress, and the report so far.
  await expect(reconcile.progressText).toHaveText('12 of 35 days checked');
  await expect(reconcile.progress).toHaveAttribute('value', '12');
  await expect(reconcile.progress).toHaveAttribute('max', '35');
  await expect(reconcile.screen).toHaveAttribute('data-state', 'loading');
  await expect(reconcile.summary).toContainText('Everything checked agrees');
  await expect(reconcile.coverage).toContainText(`The report covers ${from} to ${daysAgo(23)} only (12 of 35 days)`);
  await page.screenshot({ path: testInfo.outputPath('reconcile-progress.png'), fullPage: true });
  release();

  await expect(reconcile.screen).toHaveAttribute('data-run', 'done', { timeout: 60_000 });
  await reconcile.ready();
  await expect(reconcile.progress).toHaveCount(0);
  await expect(reconcile.summary).toContainText('Everything agrees');
  await expect(reconcile.coverage).toContainText(`The report covers every day from ${from} to ${to} (35 days)`);
  await expect(reconcile.counts('totals')).toContainText(/^[\d,]+ checked: [\d,]+ agree$/);
  // The lifetime spend once, then every day of the window, each in a call of its own.
  expect(asked[0]).toEqual({ kinds: 'spend' });
  expect(asked.slice(1).map((query) => query.from)).toEqual(Array.from({ length: 35 }, (_, i) => daysAgo(34 - i)));
  expect(asked.slice(1).every((query) => query.to === query.from && query.kinds === 'totals,rollups')).toBe(true);
  expect(page.url()).toContain(`from=${from}`);

  // Stopped on the fifth day: the report covers the four before it, and says the rest was not checked.
  await page.unroute('**/bridge/api.reconcile');
  release = await holdDay(page, 5);
  await reconcile.start();
  await expect(reconcile.progressText).toHaveText('4 of 35 days checked');
  await reconcile.stop();
  await reconcile.ready();
  await expect(reconcile.stopped).toContainText(`The report covers ${from} to ${daysAgo(31)} only (4 of 35 days)`);
  await expect(reconcile.stopped).toContainText(`${daysAgo(30)} to ${to} were not checked`);
  await expect(reconcile.summary).toBeVisible();
  await expect(reconcile.counts('spend')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('reconcile-stopped.png'), fullPage: true });
  release();
  // The call on its way when stopped does not grow the report.
  await expect(reconcile.stopped).toContainText('(4 of 35 days)');
});
