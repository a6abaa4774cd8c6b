import OpenAI from 'openai';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';

/** Wraps the page's own Notification constructor so that the test sees each one raised (`raised`). */
const RECORD_NOTIFICATIONS = `
  globalThis.raised = [];
  globalThis.Notification = new Proxy(globalThis.Notification, {
    construct(target, [title, options]) {
      globalThis.raised.push({ title, body: (options && options.body) || '' });
      return new target(title, options);
    },
  });
`;

// The host checks alert rules every second here rather than every minute.
test.use({ shellEnv: { GC_ALERT_CHECK_MS: '1000' } });

test('a rule set in the console fires a desktop notification when live traffic crosses it, and opens its screen', async ({
  consolePage: page,
  context,
}, testInfo) => {
  await context.grantPermissions(['notifications']);
  await page.addInitScript({ content: RECORD_NOTIFICATIONS });
  await page.reload();
  await signInAsDemoAdmin(page);

  // A key with a limit of a tenth of a paisa: its first answered request (on a route the service
  // pays for, so its whole cost is settled) spends past half of it.
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();
  const name = unique('alerted key');
  const secret = await keys.create({ project: 'Support Bot', name, creditPkr: '0.001' });
  const gatewayUrl = (await page.getByTestId('secret-dialog').getByTestId('gateway-url').textContent())!;
  await keys.closeSecret();

  await openScreen(page, 'alerts');
  await page.getByTestId('rule-kind').selectOption('limit_share');
  await page.getByTestId('rule-figure').fill('50');
  await page.getByTestId('add-rule').click();
  await expect(page.getByTestId('alert-rule')).toHaveText(/A key has spent 50% of its credit limit/);
  await expect(page.getByTestId('alert-check')).toContainText('Last checked');
  // The demo's own keys may hold already; this one does not yet.
  const mine = async () =>
    ((await page.evaluate('globalThis.raised')) as { title: string; body: string }[]).filter((raised) =>
      raised.title.startsWith(name),
    );
  expect(await mine()).toEqual([]);

  const client = new OpenAI({ apiKey: secret, baseURL: gatewayUrl, maxRetries: 0 });
  await client.chat.completions.create({
    model: 'svc/fast',
    messages: [{ role: 'user', content: 'Spend.' }],
  });

  await expect.poll(mine, { timeout: 20_000 }).toEqual([
    {
      title: expect.stringMatching(new RegExp(`^${name} has spent \\d+% of its credit limit$`)),
      body: expect.stringContaining('of 0.001 PKR'),
    },
  ]);
  const row = page.getByTestId('fired-alert').filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await page.screenshot({ path: testInfo.outputPath('alerts.png'), fullPage: true });
  await row.getByRole('button', { name: 'Open API keys' }).click();
  await expect(page.getByTestId('keys-table')).toBeVisible();
});
