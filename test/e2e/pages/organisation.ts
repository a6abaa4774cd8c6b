import { expect, type Locator, type Page } from '@playwright/test';

/** The organisation screen as a user works it. */
export class OrganisationPage {
  readonly nameInput: Locator;
  readonly renameButton: Locator;
  readonly refusal: Locator;
  readonly members: Locator;
  readonly projects: Locator;

  constructor(readonly page: Page) {
    this.nameInput = page.getByLabel('Organisation name');
    this.renameButton = page.getByRole('button', { name: 'Rename', exact: true });
    this.refusal = page.getByTestId('rename-refused');
    this.members = page.getByTestId('member-row');
    this.projects = page.getByTestId('project-row');
  }

  async rename(name: string): Promise<void> {
    await this.nameInput.fill(name);
    await this.renameButton.click();
    await expect(this.page.getByTestId('rename-done')).toHaveText(`Renamed to ${name}.`);
  }

  memberRow(email: string): Locator {
    return this.members.filter({ hasText: email });
  }
}
