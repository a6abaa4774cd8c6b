import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { VaultPage } from './pages/vault.js';

test('a provider key is added, rotated and removed, and its value never comes back', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'vault');
  const vault = new VaultPage(page);

  // The demo vault: openai and anthropic, shown by hint only.
  await expect(vault.hint('openai')).toHaveText('…5e19');
  await expect(vault.hint('anthropic')).toHaveText('…1a6c');

  // A name the server would refuse is caught at the field.
  let dialog = await vault.openAdd();
  await dialog.getByLabel('Provider').fill('Bad Name');
  await dialog.getByLabel('API key').fill('whatever-0000');
  await dialog.getByTestId('submit-vault-key').click();
  await expect(dialog.getByTestId('field-error')).toHaveText('use only lower-case letters, digits, “-” and “_”');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  const first = 'mk-e2e-first-secret-value-1111';
  await vault.add('e2e-mistral', first);
  await expect(vault.hint('e2e-mistral')).toHaveText('…1111');
  await expect(page.getByTestId('vault-notice')).toHaveText('Stored the e2e-mistral key; it now ends …1111.');
  const addedAt = await vault.row('e2e-mistral').getByTestId('cell-created').locator('time').getAttribute('datetime');

  // The value is not shown back: not on the page, not in a reopened dialog, not after a reload.
  expect(await page.content()).not.toContain(first);
  dialog = await vault.openAdd();
  await expect(dialog.getByLabel('API key')).toHaveValue('');
  await expect(dialog.getByLabel('API key')).toHaveAttribute('type', 'password');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.reload();
  await expect(vault.hint('e2e-mistral')).toHaveText('…1111');
  expect(await page.content()).not.toContain(first);

  // Rotating says it replaces the current key; the hint changes, the date added does not.
  const second = 'mk-e2e-second-secret-value-2222';
  dialog = await vault.openRotate('e2e-mistral');
  await expect(dialog.getByTestId('replace-warning')).toContainText('replaces the current e2e-mistral key (…1111)');
  await dialog.getByLabel('API key').fill(second);
  await dialog.getByRole('button', { name: 'Replace key' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(vault.hint('e2e-mistral')).toHaveText('…2222');
  await page.screenshot({ path: testInfo.outputPath('vault.png'), fullPage: true });
  await page.reload();
  await expect(vault.hint('e2e-mistral')).toHaveText('…2222');
  await expect(vault.row('e2e-mistral').getByTestId('cell-created').locator('time')).toHaveAttribute(
    'datetime',
    addedAt!,
  );
  expect(await page.content()).not.toContain(second);

  await vault.remove('e2e-mistral');
  await expect(vault.row('e2e-mistral')).toHaveCount(0);
  await page.reload();
  await expect(vault.hint('openai')).toHaveText('…5e19');
  await expect(vault.row('e2e-mistral')).toHaveCount(0);
});
