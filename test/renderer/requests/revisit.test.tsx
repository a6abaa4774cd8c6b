import { act, render, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { REVISIT_MS } from '../../../renderer/src/lib/revisit.js';
import { RequestLogScreen } from '../../../renderer/src/screens/requests/RequestLogScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { pagedRows, requestRow } from './rows.js';

/**
 * The request log opened again: the same page of the same filters within REVISIT_MS stays on
 * screen while it is read again in the background (as following reads it); another page, or
 * one read longer ago, shows the loading state as on a first visit.
 */

// jsdom lays nothing out: the virtualized table needs a scroll box with a height to show rows.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
});
afterAll(() => {
  if (clientHeight) Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

let held: Promise<void> = Promise.resolve();
let release: () => void = () => undefined;
let failing = false;
let total = 120;

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/requests');
  useRoute.setState({ screen: 'requests', params: { page: '2' } });
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  held = Promise.resolve();
  failing = false;
  total = 120;
  bridge.on('api.requests', async ({ query }) => {
    await held;
    if (failing) throw new Refusal(500, 'database is locked');
    // Each request beyond the first 120 is a newer one: the others move down a place.
    return pagedRows(total, (index) => requestRow(index - (total - 120)))(query);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function hold(): void {
  held = new Promise((resolve) => (release = resolve));
}

const busy = () => screen.getByTestId('requests-screen').getAttribute('aria-busy');
const pageText = () => screen.getByTestId('page-text').textContent;
const offsets = () => bridge.callsOf('api.requests').map((args) => args.query.offset);

/** Page 2 of the last 24 hours, read and left. */
async function visitAndLeave(): Promise<void> {
  const { unmount } = render(<RequestLogScreen />);
  await waitFor(() => expect(pageText()).toBe('51–100 of 120'));
  expect(busy()).toBe('false');
  unmount();
}

describe('the request log opened again', () => {
  it('shows the same page at once, not busy, and reads it again', async () => {
    await visitAndLeave();
    hold();
    total = 121;
    render(<RequestLogScreen />);
    expect(busy()).toBe('false');
    expect(pageText()).toBe('51–100 of 120');
    expect(screen.getAllByTestId('request-row')[0]!.dataset.reqId).toBe('req_099950');
    expect(screen.queryByText('Loading requests…')).toBeNull();
    expect(offsets()).toEqual([50, 50]);
    act(() => release());
    await waitFor(() => expect(pageText()).toBe('51–100 of 121'));
    expect(busy()).toBe('false');
    // The row pushed down from page 1 is older, not new: nothing is marked as following marks.
    expect(screen.getAllByTestId('request-row')[0]!.dataset.reqId).not.toBe('req_099950');
    expect(document.querySelectorAll('.request-row.fresh')).toHaveLength(0);
  });

  it('shows the loading state for another page', async () => {
    await visitAndLeave();
    hold();
    useRoute.setState({ params: {} });
    render(<RequestLogScreen />);
    expect(busy()).toBe('true');
    expect(offsets()).toEqual([50, 0]);
    act(() => release());
    await waitFor(() => expect(pageText()).toBe('1–50 of 120'));
  });

  it('shows the loading state when the page is older than REVISIT_MS', async () => {
    await visitAndLeave();
    hold();
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + REVISIT_MS);
    render(<RequestLogScreen />);
    expect(busy()).toBe('true');
    expect(screen.getByText('Loading requests…')).toBeTruthy();
    act(() => release());
    await waitFor(() => expect(busy()).toBe('false'));
  });

  it('keeps the rows with the message when the background read fails', async () => {
    await visitAndLeave();
    hold();
    failing = true;
    render(<RequestLogScreen />);
    expect(busy()).toBe('false');
    act(() => release());
    await waitFor(() => expect(screen.getByTestId('requests-error').textContent).toContain('database is locked'));
    expect(busy()).toBe('false');
    expect(pageText()).toBe('51–100 of 120');
    expect(screen.getAllByTestId('request-row').length).toBeGreaterThan(0);
  });
});
