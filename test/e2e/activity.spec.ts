import { expect, test } from './fixtures.js';
import { ActivityPage, bridgeCall } from './pages/activity.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';

const ADMIN = 'admin@demo.example';

test('the activity log shows each change the admin made, newest first, and pages back to the start', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);

  // The changes, made as the signed-in admin through the bridge the screens use.
  const { projects } = await bridgeCall(page, 'api.projects', {});
  const created = await bridgeCall(page, 'api.createKey', {
    body: { project_id: projects[0]!.id, name: unique('audited key') },
  });
  await bridgeCall(page, 'api.updateKey', { params: { key_id: created.id }, body: { rate_limit_rpm: 120 } });
  await bridgeCall(page, 'api.revokeKey', { params: { key_id: created.id } });
  await bridgeCall(page, 'api.storeVaultKey', { body: { provider: 'mistral', api_key: 'mk-audit-test-0001' } });
  await bridgeCall(page, 'api.removeVaultKey', { params: { provider: 'mistral' } });
  const newName = unique('Demo renamed');
  await bridgeCall(page, 'api.renameOrganization', { body: { name: newName } });

  await openScreen(page, 'activity');
  const activity = new ActivityPage(page);
  await activity.setPageSize(10);

  const first = await activity.events();
  expect(first).toHaveLength(10);
  expect(first.slice(0, 7).map(({ actor, action, target }) => ({ actor, action, target }))).toEqual([
    { actor: ADMIN, action: 'org.renamed', target: newName },
    { actor: ADMIN, action: 'vault_key.revoked', target: 'mistral' },
    { actor: ADMIN, action: 'vault_key.set', target: 'mistral' },
    { actor: ADMIN, action: 'api_key.revoked', target: created.key_prefix },
    { actor: ADMIN, action: 'api_key.updated', target: created.key_prefix },
    { actor: ADMIN, action: 'api_key.created', target: created.key_prefix },
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

test('a change made while the log is open shows after a refresh', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'activity');
  const activity = new ActivityPage(page);
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'user.login');

  await bridgeCall(page, 'api.storeVaultKey', { body: { provider: 'groq', api_key: 'gk-audit-test-0002' } });
  await activity.refresh();
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'vault_key.set');
  await expect(activity.rows.first().getByTestId('activity-target')).toHaveText('groq');
  await expect(activity.rows.first().getByTestId('activity-actor')).toHaveText(ADMIN);
});
