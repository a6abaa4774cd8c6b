import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { SUMMARY, fakeWidth, openAnalytics, serve } from './fixtures.js';

/**
 * Auto-refresh of the analytics screen: the summary and the chart read again every 15 s while
 * on and the window is shown, one round at a time. Rendered with real timers, then the clock is
 * faked and moved by hand.
 */

beforeEach(() => {
  fakeWidth(864);
});

afterEach(() => {
  vi.useRealTimers();
  setVisibility('visible');
});

const flush = (ms = 0) => act(() => vi.advanceTimersByTimeAsync(ms));
const toggle = () => screen.getByTestId('analytics-auto-refresh');
const reads = () => [bridge.callsOf('api.summary').length, bridge.callsOf('api.timeseries').length];

function setVisibility(state: DocumentVisibilityState): void {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

async function openScreen(): Promise<void> {
  openAnalytics({ range: '7d' });
  render(<AnalyticsScreen />);
  await waitFor(() => expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready'));
  await waitFor(() => expect(screen.getByTestId('series-chart').getAttribute('data-state')).toBe('ready'));
  vi.useFakeTimers();
}

describe('analytics auto-refresh', () => {
  it('is off by default, reads the summary and the chart every 15 s while on, and stops when off', async () => {
    let requests = 1234;
    serve({ summary: () => ({ ...SUMMARY, total_requests: requests }) });
    await openScreen();
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    expect(screen.getByTestId('analytics-updated').textContent).toMatch(/^Updated \d\d:\d\d:\d\d$/);
    await flush(60_000);
    expect(reads()).toEqual([1, 1]);

    // Turned on a minute after the last read: read at once, then every 15 s.
    requests = 1300;
    fireEvent.click(toggle());
    expect(toggle().getAttribute('aria-pressed')).toBe('true');
    await flush(0);
    expect(reads()).toEqual([2, 2]);
    expect(screen.getByTestId('card-requests-value').textContent).toMatch(/^1.?300$/);
    expect(bridge.callsOf('api.summary')[1]!.query).toEqual({ time_range: '7d' });
    expect(screen.getByTestId('analytics-updated').textContent).toMatch(/^Every 15 s · updated \d\d:\d\d:\d\d$/);

    await flush(14_000);
    expect(reads()).toEqual([2, 2]);
    await flush(1000);
    expect(reads()).toEqual([3, 3]);
    await flush(15_000);
    expect(reads()).toEqual([4, 4]);

    fireEvent.click(toggle());
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    await flush(120_000);
    expect(reads()).toEqual([4, 4]);
  });

  it('never overlaps a slow round, asks nothing while hidden, and keeps the figures when a round fails', async () => {
    let slow: (() => void) | null = null;
    let mode: 'ok' | 'slow' | 'fail' = 'ok';
    serve({
      summary: () => {
        if (mode === 'fail') throw new Refusal(500, 'worker crashed');
        if (mode === 'slow') return new Promise((resolve) => (slow = () => resolve(SUMMARY)));
        return SUMMARY;
      },
    });
    await openScreen();
    fireEvent.click(toggle());
    await flush(15_000);
    expect(reads()).toEqual([2, 2]);

    mode = 'slow';
    await flush(15_000);
    expect(reads()).toEqual([3, 3]);
    // The summary is still on its way: two more ticks ask nothing.
    await flush(30_000);
    expect(reads()).toEqual([3, 3]);
    mode = 'ok';
    act(() => slow!());
    await flush(15_000);
    expect(reads()).toEqual([4, 4]);

    act(() => setVisibility('hidden'));
    await flush(60_000);
    expect(reads()).toEqual([4, 4]);
    act(() => setVisibility('visible'));
    await flush(0);
    expect(reads()).toEqual([5, 5]);

    // A failed round: the figures stay (not dimmed, not blanked), the message shows, the next round tries again.
    mode = 'fail';
    await flush(15_000);
    expect(reads()).toEqual([6, 6]);
    expect(screen.getByTestId('summary-error').textContent).toContain('worker crashed');
    expect(screen.getByTestId('card-requests-value').textContent).toMatch(/^1.?234$/);
    mode = 'ok';
    await flush(15_000);
    expect(reads()).toEqual([7, 7]);
    expect(screen.queryByTestId('summary-error')).toBeNull();
  });
});
