import OpenAI from 'openai';
import { expect, test } from './fixtures.js';
import { unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';

const ask = (client: OpenAI) =>
  client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello.' }] });

test('revoking shows what depends on a key; rotating replaces it, watches the old key’s traffic and revokes it on confirmation', async ({
  consolePage: page,
}, testInfo) => {
  const keys = await KeysPage.asDemoAdmin(page);

  const name = unique('rotating key');
  const oldSecret = await keys.create({ project: 'Support Bot', name, environment: 'testing', creditPkr: '40' });
  const gatewayUrl = await keys.gatewayUrl();
  await keys.closeSecret();

  // A caller of the old key: the official SDK, tagged as a team tags its requests.
  const caller = unique('billing-job').replace(/\W+/g, '-');
  const oldClient = new OpenAI({
    apiKey: oldSecret,
    baseURL: gatewayUrl,
    maxRetries: 0,
    defaultHeaders: { 'X-SVC-Meta-Service': caller },
  });
  await ask(oldClient);
  await ask(oldClient);

  // The revoke dialog reads the key's traffic when it opens: reopened until the gateway's telemetry has landed.
  await expect(async () => {
    const dialog = await keys.openRevoke(name);
    try {
      await expect(dialog.getByTestId('impact-24h')).toHaveText('2', { timeout: 2_000 });
    } finally {
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    }
  }).toPass({ timeout: 20_000 });
  const revoke = await keys.openRevoke(name);
  await expect(revoke.getByTestId('impact-24h')).toHaveText('2');
  await expect(revoke.getByTestId('impact-7d')).toHaveText('2');
  await expect(revoke.getByTestId('impact-last-used')).not.toHaveText('never');
  await expect(revoke.getByTestId('impact-user-agents')).toContainText('OpenAI/JS');
  await expect(revoke.getByTestId('impact-metadata')).toContainText(`X-SVC-Meta-service: ${caller} (2)`);
  await expect(revoke.getByTestId('revoke-consequence')).toContainText(
    'The gateway refuses this key from its very next request.',
  );
  await page.screenshot({ path: testInfo.outputPath('key-revoke-impact.png') });
  await revoke.getByRole('button', { name: 'Cancel' }).click();
  await expect(revoke).toHaveCount(0);

  // Rotate: a replacement with the same limits, its secret once.
  await keys.row(name).getByTestId('rotate-key').click();
  const rotate = page.getByTestId('rotate-key-dialog');
  await expect(rotate).toContainText('40.00 PKR');
  await rotate.getByTestId('confirm-rotate').click();
  const secret = page.getByTestId('secret-dialog').getByTestId('secret');
  await expect(secret).toHaveText(/^sk_svc_[A-Za-z0-9]{32}$/);
  const newSecret = (await secret.textContent())!;
  expect(newSecret).not.toBe(oldSecret);
  // The replacement carries over what the old key has left of its 40 PKR, not a fresh 40.
  const carried = (await page.getByTestId('secret-dialog').locator('dt:text-is("Credit limit") + dd').textContent())!;
  expect(carried).toMatch(/^(39\.\d+|40\.00) PKR$/);
  await keys.closeSecret();

  // Waiting for callers to move: the old key still has traffic, said live.
  const waiting = page.getByTestId('move-callers-dialog');
  await expect(waiting.getByTestId('old-key-traffic')).toHaveText(
    'Traffic still arrives on the old key: 2 requests in the last 5 minutes.',
  );
  // Both keys work meanwhile, and both are listed under the same name.
  await ask(new OpenAI({ apiKey: newSecret, baseURL: gatewayUrl, maxRetries: 0 }));
  await ask(oldClient);
  await expect(waiting.getByTestId('old-key-traffic')).toHaveText(
    'Traffic still arrives on the old key: 3 requests in the last 5 minutes.',
    { timeout: 20_000 },
  );
  await expect(waiting.getByRole('heading')).toHaveText(`Waiting for callers of “${name}” to move`);
  await page.screenshot({ path: testInfo.outputPath('key-rotate-waiting.png') });
  // Traffic still arrives: revoking asks a second time, naming it.
  await waiting.getByTestId('revoke-old').click();
  await expect(waiting.getByTestId('revoke-old-again')).toContainText(
    '3 requests arrived on the old key in the last 5 minutes',
  );
  await expect(ask(oldClient)).resolves.toBeTruthy();
  await waiting.getByTestId('revoke-old').click();
  await expect(waiting).toHaveCount(0);

  // Only the replacement is left, with the old key's limits; the old secret is refused from its next request.
  await expect(keys.row(name)).toHaveCount(1);
  await expect(keys.cell(name, 'prefix')).toHaveText(`${newSecret.slice(0, 15)}…`);
  await expect(keys.cell(name, 'credit')).toHaveText('40.00 PKR');
  // To the paisa on screen; exactly what the replacement was given underneath.
  const carriedMicro = Math.round(Number(carried.replace(/ PKR$/, '').replace(/,/g, '')) * 1e6);
  await expect(keys.cell(name, 'credit').locator('.money')).toHaveAttribute('data-micro', String(carriedMicro));
  await expect(keys.cell(name, 'environment')).toHaveText('testing');
  await expect(ask(oldClient)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  await ask(new OpenAI({ apiKey: newSecret, baseURL: gatewayUrl, maxRetries: 0 }));
});

test('bulk changes to selected keys are previewed per key by a dry run, refusals included, then applied and reported', async ({
  consolePage: page,
}, testInfo) => {
  const keys = await KeysPage.asDemoAdmin(page);
  const names = [unique('bulk a'), unique('bulk b'), unique('bulk c')];
  const secrets: string[] = [];
  let gatewayUrl = '';
  for (const name of names) {
    secrets.push(await keys.create({ project: 'Support Bot', name }));
    gatewayUrl = await keys.gatewayUrl();
    await keys.closeSecret();
  }
  const client = (secret: string) => new OpenAI({ apiKey: secret, baseURL: gatewayUrl, maxRetries: 0 });

  // Narrowed to the project, "select all" takes every key shown, no more, and can be undone.
  await keys.filterProject('Support Bot');
  await expect(keys.row(names[0]!)).toHaveCount(1);
  const shown = await page.getByTestId('key-row').count();
  expect(shown).toBeGreaterThanOrEqual(3);
  const all = page.getByTestId('select-all-keys');
  await all.check();
  await expect(page.getByTestId('selected-count')).toHaveText(`${shown} selected`);
  await page.getByTestId('clear-selection').click();
  await expect(page.getByTestId('selected-count')).toHaveText('0 selected');
  await expect(page.getByTestId('bulk-limits')).toBeDisabled();

  for (const name of names) await keys.select(name);
  await expect(page.getByTestId('selected-count')).toHaveText('3 selected');

  // A credit limit beyond the organisation's budget: every key refused in the dry run, nothing to apply.
  await page.getByTestId('bulk-limits').click();
  const dialog = keys.bulkDialog();
  await dialog.getByTestId('bulk-mode-credit').getByRole('combobox').selectOption('set');
  await dialog.getByLabel('Credit limit (PKR)').fill('1000000000');
  await dialog.getByTestId('bulk-preview').click();
  for (const name of names) {
    await expect(keys.bulkOutcome(name)).toContainText(
      /^refused: credit limits would total .* above the organisation budget/,
    );
  }
  await expect(dialog.getByTestId('bulk-apply')).toBeDisabled();
  await expect(dialog.getByTestId('bulk-apply')).toHaveText('Apply to 0 keys');
  await page.screenshot({ path: testInfo.outputPath('key-bulk-refused.png') });

  // Back to the form: a rate limit instead, kept credit and expiry.
  await dialog.getByRole('button', { name: 'Back' }).click();
  await dialog.getByTestId('bulk-mode-credit').getByRole('combobox').selectOption('keep');
  await dialog.getByTestId('bulk-mode-rate').getByRole('combobox').selectOption('set');
  await dialog.getByLabel('Rate limit (requests per minute)').fill('120');
  await dialog.getByTestId('bulk-preview').click();
  for (const name of names) await expect(keys.bulkOutcome(name)).toHaveText('will change');
  await expect(dialog.getByTestId('bulk-preview-summary')).toContainText('Dry run, nothing changed yet');
  // Nothing changed yet.
  await expect(keys.cell(names[0]!, 'rate')).toHaveText('60 rpm');
  await dialog.getByTestId('bulk-apply').click();
  await expect(dialog.getByTestId('bulk-report-summary')).toHaveText('3 changed, 0 refused or not found.');
  for (const name of names) await expect(keys.bulkOutcome(name)).toHaveText('changed');
  await dialog.getByTestId('bulk-close').click();
  for (const name of names) await expect(keys.cell(name, 'rate')).toHaveText('120 rpm');
  // The gateway enforces the new limit from the next request.
  const { response } = await ask(client(secrets[2]!)).withResponse();
  expect(response.headers.get('x-ratelimit-limit-requests')).toBe('120');

  // Revoke two of them: previewed, then revoked; the third stays.
  await page.getByTestId('clear-selection').click();
  await keys.select(names[0]!);
  await keys.select(names[1]!);
  await page.getByTestId('bulk-revoke').click();
  await expect(keys.bulkOutcome(names[0]!)).toHaveText('will be revoked');
  await expect(keys.bulkOutcome(names[1]!)).toHaveText('will be revoked');
  await expect(dialog).toContainText('The gateway refuses each revoked key from its very next request.');
  await page.screenshot({ path: testInfo.outputPath('key-bulk-revoke-preview.png') });
  // The dry run revoked nothing: the keys still work while the preview is shown.
  await ask(client(secrets[0]!));
  await ask(client(secrets[1]!));
  await dialog.getByTestId('bulk-apply').click();
  await expect(dialog.getByTestId('bulk-report-summary')).toHaveText('2 revoked, 0 refused or not found.');
  await dialog.getByTestId('bulk-close').click();
  await expect(keys.row(names[0]!)).toHaveCount(0);
  await expect(keys.row(names[1]!)).toHaveCount(0);
  await expect(keys.row(names[2]!)).toHaveCount(1);
  await expect(page.getByTestId('selected-count')).toHaveText('0 selected');
  // Refused by the gateway from the very next request; the key left alone still works.
  await expect(ask(client(secrets[0]!))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  await expect(ask(client(secrets[1]!))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  await ask(client(secrets[2]!));
});
