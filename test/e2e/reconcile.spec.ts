import BetterSqlite3 from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { ReconcilePage } from './pages/reconcile.js';

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
  await openScreen(page, 'reconcile');
  const reconcile = new ReconcilePage(page);
  await reconcile.checked();
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

  await reconcile.checkAgain();
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
