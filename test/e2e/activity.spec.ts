import { expect, test } from './fixtures.js';
import { ActivityPage } from './pages/activity.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';
import { OrganisationPage } from './pages/organisation.js';
import { VaultPage } from './pages/vault.js';

const ADMIN = 'admin@demo.example';

test('the activity log shows each change the admin made, newest first, and pages back to the start', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);

  // The changes, made as the signed-in admin by clicking through the screens.
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();
  const name = unique('audited key');
  const prefix = (await keys.create({ project: 'Support Bot', name })).slice(0, 15);
  await keys.closeSecret();
  await keys.edit(name, { rate: '120' });
  await expect(keys.cell(name, 'rate')).toHaveText('120 rpm');
  await keys.revoke(name, prefix);
  await expect(keys.row(name)).toHaveCount(0);

  await openScreen(page, 'vault');
  const vault = new VaultPage(page);
  await vault.add('mistral', 'mk-audit-test-0001');
  await expect(vault.hint('mistral')).toHaveText('…0001');
  await vault.remove('mistral');
  await expect(vault.row('mistral')).toHaveCount(0);

  await openScreen(page, 'organisation');
  const newName = unique('Demo renamed');
  await new OrganisationPage(page).rename(newName);

  await openScreen(page, 'activity');
  const activity = new ActivityPage(page);
  await activity.setPageSize(10);

  const first = await activity.events();
  expect(first).toHaveLength(10);
  expect(first.slice(0, 7).map(({ actor, action, target }) => ({ actor, action, target }))).toEqual([
    { actor: ADMIN, action: 'org.renamed', target: newName },
    { actor: ADMIN, action: 'vault_key.revoked', target: 'mistral' },
    { actor: ADMIN, action: 'vault_key.set', target: 'mistral' },
    { actor: ADMIN, action: 'api_key.revoked', target: prefix },
    { actor: ADMIN, action: 'api_key.updated', target: prefix },
    { actor: ADMIN, action: 'api_key.created', target: prefix },
    // The demo sign-in itself.
    { actor: ADMIN, action: 'user.login', target: 'none' },
  ]);
  // Each action reads as words with its code beside them.
  await expect(activity.rows.first().getByTestId('activity-action')).toHaveText('Organisation renamed org.renamed');
  await expect(activity.rows.nth(3).getByTestId('activity-action')).toHaveText('API key revoked api_key.revoked');
  await page.screenshot({ path: testInfo.outputPath('activity.png'), fullPage: true });

  // Older pages follow the first, down to the demo organisation's first events.
  await activity.loadMore.click();
  await expect(activity.count).toHaveText('20 newest events shown.');
  const twenty = await activity.events();
  expect(twenty.slice(0, 10)).toEqual(first);

  while (await activity.loadMore.isVisible()) {
    const before = await activity.rows.count();
    await activity.loadMore.click();
    await expect(activity.rows).not.toHaveCount(before);
  }
  await expect(activity.count).toHaveText(/^All \d+ events shown: this is the start of the trail\.$/);
  const all = await activity.events();
  expect(all.length).toBeGreaterThan(20);
  expect(all.slice(0, 20)).toEqual(twenty);
  // Newest first, to the very first: the owner founding the demo organisation.
  const times = all.map((e) => Date.parse(e.timestamp));
  expect(times).toEqual([...times].sort((a, b) => b - a));
  expect(all.at(-1)).toMatchObject({
    actor: 'owner@demo.example',
    action: 'member.joined',
    target: 'owner@demo.example',
  });
  // The operator's deposits have no account behind them.
  const deposits = all.filter((e) => e.action === 'budget.deposited');
  expect(deposits.length).toBeGreaterThan(0);
  for (const deposit of deposits) expect(deposit.actor).toBe('system');

  // A page size change survives a reload, since it lives in the address.
  await page.reload();
  await expect(activity.count).toHaveText('10 newest events shown.');
  await expect(page.getByLabel('Events per page')).toHaveValue('10');
});

test('a change made in another window while the log is open shows after a refresh', async ({
  consolePage: page,
  shell,
}) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'activity');
  const activity = new ActivityPage(page);
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'user.login');

  // A second window of the same console, signed in as the same admin, stores a provider key.
  const other = await page.context().newPage();
  await other.goto(shell.url);
  await expect(other.getByTestId('session-email')).toHaveText(ADMIN);
  await openScreen(other, 'vault');
  await new VaultPage(other).add('groq', 'gk-audit-test-0002');
  await other.close();

  // The open log is what it was read as, until refreshed.
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'user.login');
  await activity.refresh();
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'vault_key.set');
  await expect(activity.rows.first().getByTestId('activity-target')).toHaveText('groq');
  await expect(activity.rows.first().getByTestId('activity-actor')).toHaveText(ADMIN);
});
