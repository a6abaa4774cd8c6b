import { readFile } from 'node:fs/promises';
import { expect, type Download, type Locator, type Page } from '@playwright/test';

/** The request log as a user works it: filters, search, pages, the detail panel and export. */

export class RequestLog {
  readonly screen: Locator;
  readonly filters: Locator;
  readonly pageText: Locator;
  readonly rows: Locator;
  readonly detail: Locator;

  constructor(readonly page: Page) {
    this.screen = page.getByTestId('requests-screen');
    this.filters = page.getByTestId('request-filters');
    this.pageText = page.getByTestId('page-text');
    this.rows = page.getByTestId('request-row');
    this.detail = page.getByTestId('request-detail');
  }

  /** Waits until the page on screen answers the latest filters. */
  async settled(): Promise<void> {
    await expect(this.screen).toHaveAttribute('aria-busy', 'false');
    await expect(this.pageText).not.toHaveText('…');
  }

  /** The filter's total, read from "1–50 of 12,345". */
  async total(): Promise<number> {
    await this.settled();
    const text = (await this.pageText.textContent()) ?? '';
    if (text === 'No requests match') return 0;
    const match = /of ([\d,]+)$/.exec(text);
    if (!match) throw new Error(`no total in "${text}"`);
    return Number(match[1]!.replaceAll(',', ''));
  }

  async firstRowId(): Promise<string> {
    await this.settled();
    return (await this.rows.first().getAttribute('data-req-id')) ?? '';
  }

  async search(text: string): Promise<void> {
    const box = this.page.getByTestId('request-search');
    await box.fill(text);
    await box.press('Enter');
    await this.settled();
  }

  async choose(label: string, option: string): Promise<void> {
    await this.filters.getByLabel(label, { exact: true }).selectOption({ label: option });
    await this.settled();
  }

  /** Types a text filter (custom range, minimum cost) and applies it with Enter. */
  async enter(label: string, text: string): Promise<void> {
    const input = this.filters.getByLabel(label, { exact: true });
    await input.fill(text);
    await input.press('Enter');
    await this.settled();
  }

  /** A custom time range, typed and applied. */
  async customRange(range: string): Promise<void> {
    await this.choose('Time range', 'Custom…');
    await this.enter('Custom range', range);
  }

  async clearFilters(): Promise<void> {
    await this.page.getByTestId('clear-filters').click();
    await this.settled();
  }

  detailField(field: string): Locator {
    return this.detail.getByTestId(`detail-${field}`);
  }

  /** Exports the current filter and returns the saved file's text, once the console says it is written. */
  async export(format: 'csv' | 'json'): Promise<{ text: string; download: Download }> {
    const downloading = this.page.waitForEvent('download');
    await this.page.getByTestId(`export-${format}`).click();
    const download = await downloading;
    await expect(this.page.getByTestId('export-done')).toBeVisible();
    const path = await download.path();
    return { text: await readFile(path, 'utf8'), download };
  }
}
