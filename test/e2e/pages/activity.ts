import { expect, type Locator, type Page } from '@playwright/test';

/** The activity screen as a user reads it. */

export interface ShownEvent {
  actor: string;
  action: string;
  target: string;
  timestamp: string;
}

export class ActivityPage {
  readonly rows: Locator;
  readonly loadMore: Locator;
  readonly count: Locator;

  constructor(readonly page: Page) {
    this.rows = page.getByTestId('activity-row');
    this.loadMore = page.getByTestId('activity-load-more');
    this.count = page.getByTestId('activity-count');
  }

  async setPageSize(size: number): Promise<void> {
    await this.page.getByLabel('Events per page').selectOption(String(size));
    await expect(this.count).toHaveText(`${size} newest events shown.`);
  }

  async refresh(): Promise<void> {
    await this.page.getByTestId('activity-refresh').click();
    await expect(this.page.getByTestId('activity-refresh')).toHaveText('Refresh');
  }

  /** Every row shown, top to bottom. */
  async events(): Promise<ShownEvent[]> {
    return this.rows.evaluateAll((rows) =>
      rows.map((row) => ({
        actor: row.querySelector('[data-testid="activity-actor"]')?.textContent ?? '',
        action: row.getAttribute('data-action') ?? '',
        target: row.querySelector('[data-testid="activity-target"]')?.textContent ?? '',
        timestamp: row.querySelector('time')?.getAttribute('datetime') ?? '',
      })),
    );
  }
}
