import { act, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REVISIT_MS } from '../../../renderer/src/lib/revisit.js';
import { HealthScreen } from '../../../renderer/src/screens/health/HealthScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { healthAnswer } from './fixtures.js';

/**
 * The health screen opened again: the same window within REVISIT_MS keeps its figures on
 * screen while they are read again in the background; another window, or figures read longer
 * ago, show the loading state as on a first visit.
 */

const TO = '2026-11-22T08:00:00.000Z';

let held: Promise<void> = Promise.resolve();
let release: () => void = () => undefined;
let failing = false;
let requests = 42;

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/health');
  useRoute.setState({ screen: 'health', params: {} });
  held = Promise.resolve();
  failing = false;
  requests = 42;
  bridge.on('api.health', async () => {
    await held;
    if (failing) throw new Refusal(500, 'worker crashed');
    return healthAnswer(requests, TO);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function hold(): void {
  held = new Promise((resolve) => (release = resolve));
}

const busy = () => screen.getByTestId('health-screen').getAttribute('aria-busy');
/** The requests column of the model's row. */
const modelRequests = () => screen.getByTestId('health-model').querySelectorAll('td')[1]!.textContent;
const windows = () => bridge.callsOf('api.health').map((args) => args.query);

async function visitAndLeave(): Promise<void> {
  const { unmount } = render(<HealthScreen />);
  await waitFor(() => expect(screen.getByTestId('health-screen').getAttribute('data-state')).toBe('ready'));
  expect(busy()).toBe('false');
  unmount();
}

describe('the health screen opened again', () => {
  it('shows the same window’s figures at once, not busy, and reads them again', async () => {
    await visitAndLeave();
    hold();
    requests = 43;
    render(<HealthScreen />);
    expect(busy()).toBe('false');
    expect(modelRequests()).toBe('42');
    expect(windows()).toEqual([{ window: '1h' }, { window: '1h' }]);
    act(() => release());
    await waitFor(() => expect(modelRequests()).toBe('43'));
    expect(busy()).toBe('false');
  });

  it('shows the loading state for another window', async () => {
    await visitAndLeave();
    hold();
    useRoute.setState({ params: { window: '24h' } });
    render(<HealthScreen />);
    expect(busy()).toBe('true');
    expect(windows()).toEqual([{ window: '1h' }, { window: '24h' }]);
    act(() => release());
    await waitFor(() => expect(busy()).toBe('false'));
  });

  it('shows the loading state when the figures are older than REVISIT_MS', async () => {
    await visitAndLeave();
    hold();
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + REVISIT_MS);
    render(<HealthScreen />);
    expect(busy()).toBe('true');
    act(() => release());
    await waitFor(() => expect(busy()).toBe('false'));
  });

  it('keeps the figures with the message when the background read fails', async () => {
    await visitAndLeave();
    hold();
    failing = true;
    render(<HealthScreen />);
    expect(busy()).toBe('false');
    act(() => release());
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('worker crashed'));
    expect(busy()).toBe('false');
    expect(modelRequests()).toBe('42');
  });
});
