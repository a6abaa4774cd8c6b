import { expect, type Locator, type Page } from '@playwright/test';
import { openScreen, signInAsDemoAdmin } from './connect.js';

/** The keys screen as a user works it: the table, the create, secret, edit, revoke and rotate dialogs, bulk actions. */

export interface NewKey {
  project: string;
  name: string;
  environment?: 'production' | 'development' | 'testing';
  creditPkr?: string;
  /** A datetime-local value, in the browser's zone. */
  expires?: string;
}

export interface Limits {
  rate?: string;
  creditPkr?: string;
  expires?: string;
}

export class KeysPage {
  constructor(readonly page: Page) {}

  /** Signs in to the demo as its admin and opens the keys screen, its table read. */
  static async asDemoAdmin(page: Page): Promise<KeysPage> {
    await signInAsDemoAdmin(page);
    await openScreen(page, 'keys');
    const keys = new KeysPage(page);
    await keys.loaded();
    return keys;
  }

  table(): Locator {
    return this.page.getByTestId('keys-table');
  }

  row(name: string): Locator {
    return this.page.getByTestId('key-row').filter({ has: this.page.getByText(name, { exact: true }) });
  }

  cell(name: string, column: string): Locator {
    return this.row(name).getByTestId(`cell-${column}`);
  }

  /** Waits for the table, and for spend (read separately) to have arrived. */
  async loaded(): Promise<void> {
    await expect(this.table()).toBeVisible();
    await expect(this.page.getByTestId('key-row').first()).toBeVisible();
  }

  /** Creates a key and returns the secret from the dialog that shows it, leaving that dialog open. */
  async create(key: NewKey): Promise<string> {
    await this.page.getByTestId('create-key').click();
    const dialog = this.page.getByTestId('create-key-dialog');
    await dialog.getByLabel('Project').selectOption({ label: key.project });
    await dialog.getByLabel('Name').fill(key.name);
    if (key.environment) await dialog.getByLabel('Environment').selectOption(key.environment);
    if (key.creditPkr !== undefined) await dialog.getByLabel('Credit limit (PKR)').fill(key.creditPkr);
    if (key.expires !== undefined) await dialog.getByLabel('Expires').fill(key.expires);
    await dialog.getByTestId('submit-create').click();
    const secret = this.page.getByTestId('secret-dialog').getByTestId('secret');
    await expect(secret).toHaveText(/^sk_svc_[A-Za-z0-9]{32}$/);
    return (await secret.textContent())!;
  }

  /** The embedded gateway's address, as the open secret dialog gives it. */
  async gatewayUrl(): Promise<string> {
    const url = this.page.getByTestId('secret-dialog').getByTestId('gateway-url');
    await expect(url).toHaveText(/^http/);
    return (await url.textContent())!;
  }

  async closeSecret(): Promise<void> {
    await this.page.getByTestId('close-secret').click();
    await expect(this.page.getByTestId('secret-dialog')).toHaveCount(0);
  }

  editDialog(): Locator {
    return this.page.getByTestId('edit-key-dialog');
  }

  async openEdit(name: string): Promise<Locator> {
    await this.row(name).getByTestId('edit-key').click();
    await expect(this.editDialog()).toBeVisible();
    return this.editDialog();
  }

  /** Fills the edit dialog's fields that are given (empty string clears one) and saves. */
  async submitLimits(limits: Limits): Promise<void> {
    const dialog = this.editDialog();
    if (limits.rate !== undefined) await dialog.getByLabel('Rate limit (requests per minute)').fill(limits.rate);
    if (limits.creditPkr !== undefined) await dialog.getByLabel('Credit limit (PKR)').fill(limits.creditPkr);
    if (limits.expires !== undefined) await dialog.getByLabel('Expires').fill(limits.expires);
    await dialog.getByTestId('submit-edit').click();
  }

  /** Opens a key's edit dialog, saves these limits, and waits for the server to take them. */
  async edit(name: string, limits: Limits): Promise<void> {
    await this.openEdit(name);
    await this.submitLimits(limits);
    await expect(this.editDialog()).toHaveCount(0);
  }

  /** The error shown at one field of the edit dialog: 'rate', 'credit' or 'expiry'. */
  fieldError(field: 'rate' | 'credit' | 'expiry'): Locator {
    return this.editDialog().getByTestId(`field-${field}`).getByTestId('field-error');
  }

  /** Opens a key's revoke dialog, which reads what depends on the key, and returns it. */
  async openRevoke(name: string): Promise<Locator> {
    await this.row(name).getByTestId('revoke-key').click();
    const dialog = this.page.getByTestId('confirm-dialog');
    await expect(dialog.getByTestId('revoke-name')).toHaveText(name);
    return dialog;
  }

  /** Shows only the keys of one project, as the filter above the table does. */
  async filterProject(project: string): Promise<void> {
    await this.page.getByTestId('filter-project').getByRole('combobox').selectOption({ label: project });
  }

  /** Ticks a key's checkbox from the keyboard, as someone tabbing through the table would. */
  async select(name: string): Promise<void> {
    const box = this.row(name).getByTestId('select-key');
    await box.focus();
    await this.page.keyboard.press('Space');
    await expect(box).toBeChecked();
  }

  bulkDialog(): Locator {
    return this.page.getByTestId('bulk-keys-dialog');
  }

  /** The outcome cell of one key in the bulk dialog's dry run or report. */
  bulkOutcome(name: string): Locator {
    return this.bulkDialog()
      .getByTestId('bulk-result')
      .filter({ has: this.page.getByText(name, { exact: true }) })
      .getByTestId('bulk-outcome');
  }

  async revoke(name: string, prefix: string): Promise<void> {
    await this.row(name).getByTestId('revoke-key').click();
    const confirm = this.page.getByTestId('confirm-dialog');
    await expect(confirm.getByTestId('revoke-name')).toHaveText(name);
    await expect(confirm.getByTestId('revoke-prefix')).toHaveText(`${prefix}…`);
    await confirm.getByTestId('confirm').click();
    await expect(confirm).toHaveCount(0);
  }
}
