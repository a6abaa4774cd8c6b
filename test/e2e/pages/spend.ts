import { expect, type Locator, type Page } from '@playwright/test';

/** The spend screen as a user reads it. */
export class SpendPage {
  constructor(readonly page: Page) {}

  async open(): Promise<void> {
    await this.page.getByTestId('nav-spend').click();
    await expect(this.page.getByTestId('spend-screen')).toBeVisible();
    await this.settled();
  }

  /** Rows on screen, the answer to the latest question in. */
  async settled(): Promise<void> {
    await expect(this.page.getByTestId('spend-screen')).toHaveAttribute('aria-busy', 'false');
    await expect(this.rows().first()).toBeVisible();
  }

  rows(): Locator {
    return this.page.getByTestId('spend-row');
  }

  card(id: string): Locator {
    return this.page.getByTestId(`budget-${id}-value`);
  }

  async names(): Promise<string[]> {
    return this.rows().locator('.key-name').allTextContents();
  }

  /** The exact micro-PKR behind an amount on screen (the amount itself, or the one inside it). */
  async micro(amount: Locator): Promise<number> {
    const micro = await amount.evaluate((element) =>
      (element.matches('[data-micro]') ? element : element.querySelector('[data-micro]'))?.getAttribute('data-micro'),
    );
    if (micro === null || micro === undefined) throw new Error('no amount there');
    return Number(micro);
  }
}
