import { expect, type Locator, type Page } from '@playwright/test';
import type { CallArgs, CallName, CallResult } from '../../../main/core/contract.js';

/** The activity screen as a user reads it, and a way to act on the server as the signed-in user. */

type ApiCall = Extract<CallName, `api.${string}`>;

/**
 * Makes a bridge call from the page, as the signed-in profile, exactly as the renderer
 * would (the web shell's token from the tab's storage, the profile the console remembers).
 * For preparing what a test then checks through the screens.
 */
export async function bridgeCall<K extends ApiCall>(
  page: Page,
  name: K,
  args: Omit<CallArgs<K>, 'profileId'>,
): Promise<CallResult<K>> {
  return page.evaluate(
    async ({ name, args }) => {
      // Runs in the page; the e2e code is typed without the DOM library.
      const tab = globalThis as unknown as Record<
        'sessionStorage' | 'localStorage',
        { getItem(key: string): string | null }
      >;
      const token = tab.sessionStorage.getItem('gateway-console-token');
      const profileId = tab.localStorage.getItem('gateway-console-profile');
      if (!token || !profileId) throw new Error('no console token or profile in this tab');
      const response = await fetch(`/bridge/${encodeURIComponent(name)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-console-token': token },
        body: JSON.stringify({ ...args, profileId }),
      });
      const envelope = (await response.json()) as
        { ok: true; result: unknown } | { ok: false; error: { status: number; message: string } };
      if (!envelope.ok) throw new Error(`${name} answered ${envelope.error.status}: ${envelope.error.message}`);
      return envelope.result;
    },
    { name, args: args as Record<string, unknown> },
  ) as Promise<CallResult<K>>;
}

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
