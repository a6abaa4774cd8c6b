import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REVISIT_MS } from '../../../renderer/src/lib/revisit.js';
import { AUTO_REFRESH_MS, AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useAnalytics } from '../../../renderer/src/screens/analytics/analytics-store.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { SUMMARY, emptyDashboard, emptyTop, fakeWidth, openAnalytics, serve } from './fixtures.js';

/**
 * The analytics screen opened again (a sidebar click away and back): the same view within
 * REVISIT_MS shows its last figures at once and reads them again in the background; another
 * view, or figures older than that, show their loading state as on a first visit.
 */

beforeEach(() => {
  fakeWidth(864);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every read waits for `release` while held: what the screen shows with reads on their way. */
let held: Promise<void> = Promise.resolve();
let release: () => void = () => undefined;
function hold(): void {
  held = new Promise((resolve) => (release = resolve));
}

let requests = 1234;
let failing = false;

function serveHeld(): void {
  held = Promise.resolve();
  requests = 1234;
  failing = false;
  serve({
    summary: async () => {
      await held;
      if (failing) throw new Refusal(500, 'worker crashed');
      return { ...SUMMARY, total_requests: requests };
    },
    timeseries: async ({ query }) => {
      await held;
      return { metric: 'volume', interval: '1h', group_by: null, time_range: query.time_range ?? '24h', data: [] };
    },
    dashboard: async ({ query }) => {
      await held;
      return emptyDashboard(query.time_range);
    },
    top: async ({ query }) => {
      await held;
      return emptyTop(query.group_by);
    },
  });
}

/** The parts of the screen marked busy, by their heading. */
const busy = () => [...document.querySelectorAll('[aria-busy="true"]')].map((e) => e.getAttribute('aria-labelledby'));
const reads = () =>
  (['api.summary', 'api.timeseries', 'api.dashboard', 'api.top'] as const).map((n) => bridge.callsOf(n).length);
const requestsCard = () => screen.getByTestId('card-requests-value').textContent;

/** Opens the screen on the last 7 days, waits for every part's figures, and leaves it. */
async function visitAndLeave(): Promise<void> {
  serveHeld();
  openAnalytics({ range: '7d' });
  const { unmount } = render(<AnalyticsScreen />);
  await waitFor(() => expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready'));
  await waitFor(() => expect(reads()).toEqual([1, 1, 1, 1]));
  await waitFor(() => expect(busy()).toEqual([]));
  unmount();
}

/** Opens the screen again, the reads it makes held; the top asks once the microtask has run. */
async function revisit(): Promise<void> {
  render(<AnalyticsScreen />);
  await act(() => Promise.resolve());
}

describe('analytics opened again', () => {
  it('shows the same view’s figures at once, not busy, and reads every part again', async () => {
    await visitAndLeave();
    hold();
    requests = 1300;
    await revisit();
    expect(busy()).toEqual([]);
    expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready');
    expect(screen.getByTestId('summary-cards').className).toBe('cards');
    expect(requestsCard()).toMatch(/^1.?234$/);
    expect(reads()).toEqual([2, 2, 2, 2]);
    expect(bridge.callsOf('api.summary')[1]!.query).toEqual({ time_range: '7d' });

    act(() => release());
    await waitFor(() => expect(requestsCard()).toMatch(/^1.?300$/));
    expect(busy()).toEqual([]);
  });

  it('shows the loading state when the figures are older than REVISIT_MS', async () => {
    await visitAndLeave();
    hold();
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + REVISIT_MS);
    await revisit();
    expect(busy()).toEqual(['summary-heading', 'dashboard-heading', 'series-heading', 'top-heading']);
    expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('loading');
    expect(reads()).toEqual([2, 2, 2, 2]);
    act(() => release());
    await waitFor(() => expect(busy()).toEqual([]));
  });

  it('shows the loading state for another view', async () => {
    await visitAndLeave();
    hold();
    useRoute.getState().go('analytics', { range: '24h' });
    await revisit();
    expect(busy()).toEqual(['summary-heading', 'dashboard-heading', 'series-heading', 'top-heading']);
    expect(bridge.callsOf('api.summary')[1]!.query).toEqual({ time_range: '24h' });
    act(() => release());
    await waitFor(() => expect(busy()).toEqual([]));
  });

  it('keeps the figures with the message when the background read fails', async () => {
    await visitAndLeave();
    failing = true;
    await revisit();
    await waitFor(() => expect(screen.getByTestId('summary-error').textContent).toContain('worker crashed'));
    expect(requestsCard()).toMatch(/^1.?234$/);
    expect(busy()).toEqual([]);
  });

  it('with auto-refresh on, asks each part once on a revisit, not again at once behind it', async () => {
    await visitAndLeave();
    useAnalytics.getState().setAutoRefresh(true);
    // Back after longer than auto-refresh's interval, within REVISIT_MS.
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + AUTO_REFRESH_MS + 5_000);
    await revisit();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads()).toEqual([2, 2, 2, 2]);
  });

  it('still shows the loading state on Refresh after a revisit', async () => {
    await visitAndLeave();
    await revisit();
    await waitFor(() => expect(reads()).toEqual([2, 2, 2, 2]));
    hold();
    fireEvent.click(screen.getByTestId('analytics-refresh'));
    expect(busy()).toEqual(['summary-heading', 'dashboard-heading', 'series-heading']);
    act(() => release());
    await waitFor(() => expect(busy()).toEqual([]));
  });
});
