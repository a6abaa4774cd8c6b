import { expect, type Locator, type Page } from '@playwright/test';

/** The Reconcile screen as an operator reads it. */
export class ReconcilePage {
  readonly summary: Locator;
  readonly lines: Locator;

  constructor(readonly page: Page) {
    this.summary = page.getByTestId('reconcile-summary');
    this.lines = page.getByTestId('reconcile-line');
  }

  /** Waits until a check has answered. */
  async checked(): Promise<void> {
    await expect(this.page.getByTestId('reconcile-screen')).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
  }

  counts(kind: 'totals' | 'spend' | 'rollups'): Locator {
    return this.page.getByTestId(`reconcile-kind-${kind}`).getByTestId('reconcile-counts');
  }

  async checkAgain(): Promise<void> {
    await this.page.getByTestId('reconcile-run').click();
    await this.checked();
  }
}
