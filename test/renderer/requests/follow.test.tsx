import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RequestRow } from '../../../renderer/src/screens/requests/request-row.js';
import { RequestLogScreen } from '../../../renderer/src/screens/requests/RequestLogScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { requestRow } from './rows.js';

/**
 * Follow (live mode) of the request log: the first page read again every 2 s while on, on page
 * 1, shown and not being read; one call at a time; a failure shown once.
 *
 * The screen is rendered with real timers (the first page, the directory), then the clock is
 * faked and moved by hand: `flush(ms)`.
 */

// jsdom lays nothing out: the virtualized table needs a scroll box with a height to show rows.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
});
afterAll(() => {
  if (clientHeight) Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

/** The log as the live gateway grows it: newest first; `arrive` adds newer rows at the top. */
function liveLog(count: number) {
  const rows: RequestRow[] = Array.from({ length: count }, (_, i) => requestRow(i));
  let newest = 0;
  return {
    arrive(n = 1) {
      for (let i = 0; i < n; i++) rows.unshift(requestRow(--newest));
    },
    page(query: { limit?: number; offset?: number }) {
      const limit = query.limit ?? 50;
      const offset = query.offset ?? 0;
      return { total: rows.length, limit, offset, requests: rows.slice(offset, offset + limit) };
    },
  };
}

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/requests');
  useRoute.setState({ screen: 'requests', params: {} });
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
});

afterEach(() => {
  vi.useRealTimers();
  setVisibility('visible');
});

const reads = () => bridge.callsOf('api.requests').length;
const flush = (ms = 0) => act(() => vi.advanceTimersByTimeAsync(ms));
const toggle = () => screen.getByTestId('follow-toggle');
const status = () => screen.getByTestId('follow-status').textContent ?? '';
const rowIds = () => screen.getAllByTestId('request-row').map((row) => row.dataset.reqId);

function setVisibility(state: DocumentVisibilityState): void {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

/** The screen on its first page, with the clock faked from here on. */
async function openLog(): Promise<void> {
  render(<RequestLogScreen />);
  await screen.findAllByTestId('request-row');
  vi.useFakeTimers();
}

describe('following the request log', () => {
  it('is off by default, then reads the first page every 2 s and shows new rows at the top', async () => {
    const log = liveLog(120);
    bridge.on('api.requests', ({ query }) => log.page(query));
    await openLog();
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    await flush(10_000);
    expect(reads()).toBe(1);

    // Turned on: the page on screen is 10 s old, so it is read again at once, then every 2 s.
    log.arrive();
    fireEvent.click(toggle());
    expect(toggle().getAttribute('aria-pressed')).toBe('true');
    expect(status()).toMatch(/^Live · updated \d\d:\d\d:\d\d$/);
    await flush(0);
    expect(reads()).toBe(2);
    expect(rowIds()[0]).toBe('req_100001');

    log.arrive(2);
    await flush(2000);
    expect(reads()).toBe(3);
    expect(bridge.callsOf('api.requests')[2]!.query).toEqual({ time_range: '24h', limit: 50, offset: 0 });
    expect(rowIds().slice(0, 3)).toEqual(['req_100003', 'req_100002', 'req_100001']);
    // The new rows are marked for their highlight; the count follows.
    const fresh = screen.getAllByTestId('request-row').filter((row) => row.classList.contains('fresh'));
    expect(fresh.map((row) => row.dataset.reqId)).toEqual(['req_100003', 'req_100002']);
    expect(screen.getByTestId('page-text').textContent).toBe('1–50 of 123');
    expect(screen.getByTestId('page-text').getAttribute('aria-live')).toBe('off');

    log.arrive();
    await flush(2000);
    expect(reads()).toBe(4);
    expect(rowIds()[0]).toBe('req_100004');
    expect(screen.getByTestId('page-text').textContent).toBe('1–50 of 124');
    expect(screen.getAllByTestId('request-row').filter((row) => row.classList.contains('fresh'))).toHaveLength(1);

    // Nothing new: the highlight is gone.
    await flush(2000);
    expect(reads()).toBe(5);
    expect(screen.getAllByTestId('request-row').filter((row) => row.classList.contains('fresh'))).toHaveLength(0);
  });

  it('stops when turned off: no more calls', async () => {
    const log = liveLog(10);
    bridge.on('api.requests', ({ query }) => log.page(query));
    await openLog();
    fireEvent.click(toggle());
    await flush(4000);
    expect(reads()).toBe(3);

    fireEvent.click(toggle());
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    expect(status()).toBe('');
    await flush(20_000);
    expect(reads()).toBe(3);
  });

  it('pauses while a row’s detail is open or the table is in use, and resumes after', async () => {
    const log = liveLog(10);
    bridge.on('api.requests', ({ query }) => log.page(query));
    await openLog();
    fireEvent.click(toggle());

    fireEvent.click(screen.getAllByTestId('request-row')[2]!);
    expect(screen.getByTestId('request-detail')).toBeTruthy();
    expect(status()).toMatch(/^Paused while you read · updated \d\d:\d\d:\d\d$/);
    log.arrive();
    await flush(10_000);
    expect(reads()).toBe(1);

    // Closed: the focus goes back to the row, in the table, so the person is still reading.
    fireEvent.click(screen.getByTestId('close-detail'));
    expect(screen.queryByTestId('request-detail')).toBeNull();
    expect(screen.getByTestId('requests-main').contains(document.activeElement)).toBe(true);
    await flush(4000);
    expect(reads()).toBe(1);

    // The focus leaves the table: following resumes at once (the page is older than 2 s), then every 2 s.
    act(() => toggle().focus());
    expect(status()).toMatch(/^Live · updated/);
    await flush(0);
    expect(reads()).toBe(2);
    expect(rowIds()[0]).toBe('req_100001');
    await flush(2000);
    expect(reads()).toBe(3);

    // The pointer over the table pauses it too; a pointer going in and out does not make extra calls.
    const table = screen.getByTestId('requests-main');
    fireEvent.pointerOver(table);
    expect(status()).toMatch(/^Paused while you read/);
    await flush(6000);
    expect(reads()).toBe(3);
    for (let i = 0; i < 5; i++) {
      fireEvent.pointerOut(table);
      await flush(100);
      fireEvent.pointerOver(table);
    }
    fireEvent.pointerOut(table);
    await flush(1000);
    expect(reads()).toBe(4);
  });

  it('pauses away from page 1, says so, and resumes back on it', async () => {
    const log = liveLog(120);
    bridge.on('api.requests', ({ query }) => log.page(query));
    await openLog();
    fireEvent.click(toggle());
    await flush(2000);
    expect(reads()).toBe(2);

    fireEvent.click(screen.getByTestId('page-next'));
    await flush(0);
    expect(screen.getByTestId('page-text').textContent).toBe('51–100 of 120');
    expect(status()).toMatch(/^Paused: following shows the newest requests, on page 1/);
    await flush(10_000);
    expect(bridge.callsOf('api.requests').map((args) => args.query.offset)).toEqual([0, 0, 50]);

    log.arrive();
    fireEvent.click(screen.getByTestId('follow-first-page'));
    await flush(0);
    expect(useRoute.getState().params.page).toBeUndefined();
    expect(rowIds()[0]).toBe('req_100001');
    expect(status()).toMatch(/^Live/);
    await flush(2000);
    expect(bridge.callsOf('api.requests').map((args) => args.query.offset)).toEqual([0, 0, 50, 0, 0]);
  });

  it('never overlaps a slow call: ticks are skipped while one is on its way', async () => {
    const log = liveLog(10);
    const pending: (() => void)[] = [];
    bridge.on('api.requests', ({ query }) =>
      reads() === 1 ? log.page(query) : new Promise((resolve) => pending.push(() => resolve(log.page(query)))),
    );
    await openLog();
    fireEvent.click(toggle());
    await flush(2000);
    expect(reads()).toBe(2);
    await flush(8000);
    expect(reads()).toBe(2);

    log.arrive();
    pending[0]!();
    await flush(0);
    expect(rowIds()[0]).toBe('req_100001');
    await flush(2000);
    expect(reads()).toBe(3);
  });

  it('shows a failing refresh once, keeps the rows, and keeps trying at the same pace', async () => {
    const log = liveLog(10);
    let failing = false;
    bridge.on('api.requests', ({ query }) => {
      if (failing) throw new Refusal(500, 'telemetry store is busy');
      return log.page(query);
    });
    await openLog();
    fireEvent.click(toggle());
    failing = true;
    await flush(2000);
    expect(reads()).toBe(2);
    const alert = screen.getByTestId('requests-error');
    expect(alert.textContent).toContain('telemetry store is busy');
    expect(rowIds()).toHaveLength(10);
    expect(status()).toMatch(/^Live, retrying every 2 s · updated \d\d:\d\d:\d\d$/);
    expect(screen.queryByText('Loading requests…')).toBeNull();

    await flush(6000);
    expect(reads()).toBe(5);
    // The same message, not taken down and raised again on every attempt.
    expect(screen.getByTestId('requests-error')).toBe(alert);
    expect(rowIds()).toHaveLength(10);

    failing = false;
    log.arrive();
    await flush(2000);
    expect(reads()).toBe(6);
    expect(screen.queryByTestId('requests-error')).toBeNull();
    expect(rowIds()[0]).toBe('req_100001');
  });

  it('asks nothing while the window is hidden, and catches up when it is shown', async () => {
    const log = liveLog(10);
    bridge.on('api.requests', ({ query }) => log.page(query));
    await openLog();
    fireEvent.click(toggle());
    act(() => setVisibility('hidden'));
    expect(status()).toMatch(/^Paused while the window is hidden/);
    await flush(30_000);
    expect(reads()).toBe(1);

    log.arrive();
    act(() => setVisibility('visible'));
    await flush(0);
    expect(reads()).toBe(2);
    expect(rowIds()[0]).toBe('req_100001');
  });

  it('shows an unknown update time as "–", never a time of 0', async () => {
    bridge.on('api.requests', () => new Promise(() => {}));
    render(<RequestLogScreen />);
    fireEvent.click(toggle());
    expect(screen.getByTestId('follow-updated').textContent).toBe('–');
  });
});
