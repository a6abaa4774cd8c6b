import { expect, test } from './fixtures.js';
import { openScreen } from './pages/connect.js';
import { RequestLog } from './pages/requests.js';

/**
 * A new user's first launch: the demo admin gets in as soon as the organisation and its keys
 * exist, while the demo's history is still being written, newest rows first, with its progress
 * shown on the connect screen and above every screen until it is whole.
 */

// Enough rows that the history is still being written while the test signs in and looks.
test.use({ firstLaunch: true, shellEnv: { GC_DEMO_ROWS: '300000' } });

test('the demo admin signs in before the history is written, and sees it land newest first', async ({
  consolePage: page,
}) => {
  test.setTimeout(120_000);
  await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
  const signIn = page.getByTestId('demo-sign-in');
  await expect(signIn).toBeEnabled();
  await expect(page.getByTestId('demo-history')).toContainText(/of 300,000 requests/);

  await signIn.click();
  await expect(page.getByTestId('session-email')).toHaveText('admin@demo.example');
  const note = page.getByTestId('demo-history');
  await expect(note).toContainText(/Writing the demo's history, newest first: [\d,]+ of 300,000 requests/);
  const written = async () =>
    Number((/: ([\d,]+) of/.exec((await note.textContent()) ?? '')?.[1] ?? '').replace(/,/g, ''));
  const first = await written();
  await expect.poll(written, { timeout: 60_000 }).toBeGreaterThan(first);

  // The newest part lands first: the last hour's requests are in the log while older ones are not yet.
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await expect(log.rows.first()).toBeVisible({ timeout: 60_000 });
  await expect(note).toBeVisible();
});
