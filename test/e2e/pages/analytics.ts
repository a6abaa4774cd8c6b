import { expect, type Locator, type Page } from '@playwright/test';
import { openScreen } from './connect.js';

/** The analytics screen as a user works it: filters, the figures on the cards, the chart's legend. */
export class AnalyticsPage {
  readonly cards: Locator;
  readonly chart: Locator;
  readonly legend: Locator;

  constructor(readonly page: Page) {
    this.cards = page.getByTestId('summary-cards');
    this.chart = page.getByTestId('series-chart');
    this.legend = page.getByTestId('series-name');
  }

  async open(): Promise<void> {
    await openScreen(this.page, 'analytics');
    await this.settled();
  }

  /** Both the cards and the chart show an answer (not a loading one). */
  async settled(): Promise<void> {
    await expect(this.cards).toHaveAttribute('data-state', 'ready');
    await expect(this.chart).toHaveAttribute('data-state', 'ready');
  }

  card(id: 'requests' | 'latency' | 'ttft' | 'tok-s' | 'tokens' | 'cost'): Locator {
    return this.page.getByTestId(`card-${id}-value`);
  }

  /** A count card as a number, once the cards have an answer. */
  async count(id: 'requests' | 'tokens'): Promise<number> {
    await expect(this.cards).toHaveAttribute('data-state', 'ready');
    const text = (await this.card(id).textContent()) ?? '';
    return Number(text.replace(/[^\d]/g, ''));
  }

  async chooseRange(label: string): Promise<void> {
    await this.page.getByLabel('Time range').selectOption({ label });
  }

  async chooseProject(name: string): Promise<void> {
    await this.page.getByLabel('Project').selectOption({ label: name });
  }

  /** Options read "name (prefix)": the key is chosen by its name. */
  async chooseKey(name: string): Promise<void> {
    const select = this.page.getByLabel('Key', { exact: true });
    const value = await select.locator('option', { hasText: `${name} (` }).getAttribute('value');
    expect(value, `a key named ${name}`).toBeTruthy();
    await select.selectOption(value!);
  }

  async chooseModel(model: string): Promise<void> {
    await this.page.getByLabel('Model', { exact: true }).selectOption(model);
  }

  async chooseMetric(label: string): Promise<void> {
    await this.page.getByLabel('Metric').selectOption({ label });
  }

  async groupBy(label: 'None' | 'Project' | 'Key' | 'Model'): Promise<void> {
    await this.page.getByLabel('Group by').selectOption({ label });
  }

  async legendNames(): Promise<string[]> {
    return this.legend.allTextContents();
  }
}
