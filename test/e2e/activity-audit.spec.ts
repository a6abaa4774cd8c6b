import { parseCsv } from '../../renderer/src/lib/csv.js';
import { expect, test } from './fixtures.js';
import { ActivityPage } from './pages/activity.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';

const ADMIN = 'admin@demo.example';

test('the activity log filters, shows a key edit as before → after, exports what it shows and verifies its chain', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);

  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();
  const name = unique('audited limits');
  const prefix = (await keys.create({ project: 'Support Bot', name })).slice(0, 15);
  await keys.closeSecret();
  await keys.edit(name, { rate: '120' });
  await expect(keys.cell(name, 'rate')).toHaveText('120 rpm');

  await openScreen(page, 'activity');
  const activity = new ActivityPage(page);
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'api_key.updated');

  // Filtered on the server by action and actor; the filters live in the address.
  await activity.filterAction('api_key.updated');
  await activity.filterActor(ADMIN.toUpperCase());
  await expect(activity.rows).toHaveCount(1);
  expect(page.url()).toContain('action=api_key.updated');
  const edit = activity.rows.first();
  await expect(edit.getByTestId('activity-target')).toHaveText(prefix);

  // What changed: the rate limit before and after, the unchanged limits quieter.
  const rate = edit.locator('[data-testid="activity-change-field"][data-field="rate_limit_rpm"]');
  await expect(rate).toHaveAttribute('data-changed', 'true');
  await expect(rate.getByTestId('activity-change-before')).toHaveText('60 rpm');
  await expect(rate.getByTestId('activity-change-after')).toHaveText('120 rpm');
  await expect(
    edit
      .locator('[data-testid="activity-change-field"][data-field="credit_limit_cents"]')
      .getByTestId('activity-change-before'),
  ).toHaveText('unlimited');

  // The export holds what the filters show: that one event, with its change.
  const csv = await activity.export('csv');
  expect(csv.download.suggestedFilename()).toMatch(/^activity-.*\.csv$/);
  const rows = parseCsv(csv.text);
  const [header, line] = rows;
  const cell = (column: string) => line![header!.indexOf(column)];
  expect(rows).toHaveLength(2);
  expect([cell('actor'), cell('action'), cell('target')]).toEqual([ADMIN, 'api_key.updated', prefix]);
  expect(JSON.parse(cell('change.before')!)).toMatchObject({ rate_limit_rpm: 60 });
  expect(JSON.parse(cell('change.after')!)).toMatchObject({ rate_limit_rpm: 120 });
  expect(cell('hash')).toMatch(/^[0-9a-f]{64}$/);

  // The demo's admin created keys before: the key's prefix narrows it to this one.
  await activity.filterAction('api_key.created');
  await activity.filterTarget(prefix);
  await expect(activity.rows).toHaveCount(1);
  await expect(activity.rows.first().getByTestId('activity-target')).toHaveText(prefix);
  const ndjson = await activity.export('ndjson');
  expect(ndjson.download.suggestedFilename()).toMatch(/^activity-.*\.ndjson$/);
  const lines = ndjson.text.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({
    actor: ADMIN,
    action: 'api_key.created',
    target: prefix,
    change: { before: null, after: { name, rate_limit_rpm: 60 } },
  });

  // Clearing the filters shows the whole trail again; Verify recomputes its chain.
  await page.getByTestId('activity-clear-filters').click();
  await expect(activity.rows.first()).toHaveAttribute('data-action', 'api_key.updated');
  const verdict = await activity.verify();
  await expect(verdict).toHaveAttribute('data-testid', 'activity-verify-holds');
  await expect(verdict).toContainText(/The chain holds: all [\d,]+ events match their hashes\./);
  await page.screenshot({ path: testInfo.outputPath('activity-audit.png'), fullPage: true });
});
