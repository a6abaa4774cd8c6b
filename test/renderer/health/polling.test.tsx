import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HealthScreen } from '../../../renderer/src/screens/health/HealthScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { healthAnswer } from './fixtures.js';

/** Health reads the window ending now again on its own; a window that ended in the past never changes, so it is read once. */

const TO = '2026-11-22T08:00:00.000Z';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  bridge.on('api.health', () => Promise.resolve(healthAnswer(42, TO)));
});

afterEach(() => {
  vi.useRealTimers();
});

/** Opens the screen on `params`, lets a minute pass, and gives the windows it asked for. */
async function askedOverAMinute(params: Record<string, string>) {
  window.history.replaceState(null, '', '/#/health');
  useRoute.setState({ screen: 'health', params });
  render(<HealthScreen />);
  await act(() => vi.advanceTimersByTimeAsync(60_000));
  expect(screen.getByTestId('health-screen').getAttribute('data-state')).toBe('ready');
  return bridge.callsOf('api.health').map((args) => args.query);
}

describe('health polling', () => {
  it('reads the window ending now again every 15 s', async () => {
    const asked = await askedOverAMinute({});
    expect(asked.length).toBeGreaterThanOrEqual(4);
    expect(new Set(asked.map((query) => JSON.stringify(query)))).toEqual(new Set([JSON.stringify({ window: '1h' })]));
  });

  it('reads a window in the past once', async () => {
    const asked = await askedOverAMinute({ to: TO });
    expect(asked).toEqual([{ window: '1h', to: TO }]);
  });
});
