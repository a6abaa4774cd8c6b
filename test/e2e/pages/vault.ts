import { expect, type Locator, type Page } from '@playwright/test';

/** The provider-key vault as a user works it. */
export class VaultPage {
  constructor(readonly page: Page) {}

  row(provider: string): Locator {
    return this.page.locator(`[data-testid="vault-row"][data-provider="${provider}"]`);
  }

  hint(provider: string): Locator {
    return this.row(provider).getByTestId('cell-hint');
  }

  dialog(): Locator {
    return this.page.getByTestId('vault-key-dialog');
  }

  async openAdd(): Promise<Locator> {
    await this.page.getByTestId('add-vault-key').click();
    await expect(this.dialog()).toBeVisible();
    return this.dialog();
  }

  /** Adds (or, for a provider that has one, replaces) a key through the "add" dialog. */
  async add(provider: string, apiKey: string): Promise<void> {
    const dialog = await this.openAdd();
    await dialog.getByLabel('Provider', { exact: true }).fill(provider);
    await dialog.getByLabel('API key', { exact: true }).fill(apiKey);
    await dialog.getByTestId('submit-vault-key').click();
    await expect(dialog).toHaveCount(0);
  }

  async openRotate(provider: string): Promise<Locator> {
    await this.row(provider).getByTestId('rotate-vault-key').click();
    await expect(this.dialog()).toBeVisible();
    return this.dialog();
  }

  async remove(provider: string): Promise<void> {
    await this.row(provider).getByTestId('remove-vault-key').click();
    const confirm = this.page.getByTestId('confirm-dialog');
    await expect(confirm.getByTestId('remove-provider')).toHaveText(provider);
    await confirm.getByTestId('confirm').click();
    await expect(confirm).toHaveCount(0);
  }
}
