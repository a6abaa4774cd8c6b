import { expect, type Locator, type Page } from '@playwright/test';

/** The Reconcile screen as an operator reads it. */
export class ReconcilePage {
  readonly screen: Locator;
  readonly summary: Locator;
  readonly coverage: Locator;
  readonly lines: Locator;
  readonly progress: Locator;
  readonly progressText: Locator;
  readonly stopped: Locator;

  constructor(readonly page: Page) {
    this.screen = page.getByTestId('reconcile-screen');
    this.summary = page.getByTestId('reconcile-summary');
    this.coverage = page.getByTestId('reconcile-coverage');
    this.lines = page.getByTestId('reconcile-line');
    this.progress = page.getByRole('progressbar', { name: 'Days checked' });
    this.progressText = page.getByTestId('reconcile-progress-text');
    this.stopped = page.getByTestId('reconcile-stopped');
  }

  /** Waits until the screen shows what it has: the form before a check, a report after one. */
  async ready(): Promise<void> {
    await expect(this.screen).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
  }

  counts(kind: 'totals' | 'spend' | 'rollups'): Locator {
    return this.page.getByTestId(`reconcile-kind-${kind}`).getByTestId('reconcile-counts');
  }

  /** Types the window (UTC days, YYYY-MM-DD) into the form. */
  async setWindow(from: string, to: string): Promise<void> {
    await this.page.getByTestId('reconcile-from').fill(from);
    await this.page.getByTestId('reconcile-to').fill(to);
  }

  /** Presses Check, and waits until the check is on its way (its first call answered). */
  async start(): Promise<void> {
    const first = this.page.waitForResponse((response) => response.url().includes('/bridge/api.reconcile'));
    await this.page.getByTestId('reconcile-run').click();
    await first;
  }

  /** Presses Check and waits for the whole window's report. */
  async check(): Promise<void> {
    await this.start();
    await expect(this.screen).toHaveAttribute('data-run', 'done', { timeout: 60_000 });
    await this.ready();
  }

  async stop(): Promise<void> {
    await this.page.getByTestId('reconcile-stop').click();
    await expect(this.screen).toHaveAttribute('data-run', 'stopped');
  }
}
