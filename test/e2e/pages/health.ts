import { expect, type Locator, type Page } from '@playwright/test';

/** The health screen as a user reads it: providers, their models, and each one's status strip. */
export class HealthPage {
  readonly screen: Locator;

  constructor(readonly page: Page) {
    this.screen = page.getByTestId('health-screen');
  }

  async open(): Promise<void> {
    await this.page.getByTestId('nav-health').click();
    await expect(this.screen).toBeVisible();
    await this.settled();
  }

  /** The answer to the latest window on screen. */
  async settled(): Promise<void> {
    await expect(this.screen).toHaveAttribute('data-state', 'ready');
    await expect(this.screen).toHaveAttribute('aria-busy', 'false');
  }

  providers(): Locator {
    return this.page.getByTestId('health-provider');
  }

  model(name: string): Locator {
    return this.page.locator(`[data-testid="health-model"][data-model="${name}"]`);
  }

  models(): Locator {
    return this.page.getByTestId('health-model');
  }
}
