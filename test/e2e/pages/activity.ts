import { readFile } from 'node:fs/promises';
import { expect, type Download, type Locator, type Page } from '@playwright/test';

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

  /** Chooses an action in the Action filter; the list reads again. */
  async filterAction(action: string): Promise<void> {
    await this.page.getByTestId('activity-filter-action').selectOption(action);
  }

  /** Types an actor's email into its filter and applies it (Enter). */
  async filterActor(email: string): Promise<void> {
    const input = this.page.getByTestId('activity-filter-actor').getByRole('textbox');
    await input.fill(email);
    await input.press('Enter');
  }

  /** Types the start of a target (a key prefix, a provider) into its filter and applies it. */
  async filterTarget(start: string): Promise<void> {
    const input = this.page.getByTestId('activity-filter-target').getByRole('textbox');
    await input.fill(start);
    await input.press('Enter');
  }

  /** Exports what the filters show; returns the saved file's text and the download. */
  async export(format: 'csv' | 'ndjson'): Promise<{ text: string; download: Download }> {
    const downloading = this.page.waitForEvent('download');
    await this.page.getByTestId(`activity-export-${format}`).click();
    const download = await downloading;
    await expect(this.page.getByTestId('activity-export-done')).toBeVisible();
    return { text: await readFile(await download.path(), 'utf8'), download };
  }

  /** Runs Verify and waits for its verdict. */
  async verify(): Promise<Locator> {
    await this.page.getByTestId('activity-verify-button').click();
    const verdict = this.page.getByTestId('activity-verify-holds').or(this.page.getByTestId('activity-verify-broken'));
    await expect(verdict).toBeVisible();
    return verdict;
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
