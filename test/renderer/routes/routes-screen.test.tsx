import { act, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REFRESH_MS, RoutesScreen } from '../../../renderer/src/screens/routes/RoutesScreen.js';
import type { RoutesView } from '../../../renderer/src/screens/routes/routes-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { BridgeError } from '../../../renderer/src/bridge.js';
import { bridge } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

/** The Routes screen: the document's version, each route with its targets' live state and figures, read again on its own. */

const OPEN_UNTIL = Date.parse('2026-11-22T08:00:05.000Z');

function answer(version = 7): RoutesView {
  return {
    version,
    applied_at: '2026-11-22T07:30:00.000Z',
    window_minutes: 15,
    figures_available: true,
    routes: [
      {
        id: 'svc/chat',
        kind: 'chat',
        active: true,
        strategy: 'fallback',
        price: { input: 42, output: 168, cache_write: 52.5, cache_read: 4.2 },
        targets: [
          {
            provider: 'openai',
            model: 'gpt-4o-mini',
            weight: 1,
            state: 'open',
            open_until: OPEN_UNTIL,
            attempts_15m: 12,
            success_rate_15m: 0.25,
            p95_ms_15m: 840,
          },
          {
            provider: 'anthropic',
            model: 'claude-haiku',
            weight: 1,
            state: 'healthy',
            open_until: null,
            attempts_15m: 40,
            success_rate_15m: 1,
            p95_ms_15m: 1234,
          },
          {
            provider: 'google',
            model: 'gemini-flash',
            weight: 2,
            state: 'half_open',
            open_until: null,
            attempts_15m: 3,
            success_rate_15m: 0.3333,
            p95_ms_15m: 12,
          },
          {
            provider: 'mistral',
            model: 'mistral-small',
            weight: 1,
            state: 'failing',
            open_until: null,
            attempts_15m: 5,
            success_rate_15m: 0.2,
            p95_ms_15m: 77,
          },
        ],
      },
      {
        id: 'openai/gpt-3.5-turbo',
        kind: 'chat',
        active: false,
        strategy: 'loadbalance',
        price: { input: 100, output: 200, cache_write: 100, cache_read: 50 },
        targets: [
          {
            provider: 'openai',
            model: 'gpt-3.5-turbo',
            weight: 1,
            state: null,
            open_until: null,
            attempts_15m: 0,
            success_rate_15m: null,
            p95_ms_15m: null,
          },
        ],
      },
    ],
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/routes');
  useRoute.setState({ screen: 'routes', params: {} });
});

afterEach(() => {
  vi.useRealTimers();
});

const target = (id: string) => screen.getAllByTestId('route-target').find((row) => row.dataset.target === id)!;

describe('Routes screen', () => {
  it('shows the version, each route with its price and strategy, and its targets with their state and figures', async () => {
    bridge.on('api.routes', () => Promise.resolve(answer()));
    render(<RoutesScreen />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(screen.getByTestId('routes-screen').dataset.state).toBe('ready');
    expect(screen.getByTestId('routes-version-number').textContent).toBe('7');
    expect(screen.getByTestId('routes-note').textContent).toContain('npm run admin -- routes apply');

    const rows = screen.getAllByTestId('route-row');
    expect(rows.map((row) => row.dataset.route)).toEqual(['svc/chat', 'openai/gpt-3.5-turbo']);
    expect(rows[0]!.textContent).toContain('fallback');
    expect(within(rows[0]!).getByTestId('route-price').textContent).toMatch(/42\.00 in · 168\.00 out/);
    expect(within(rows[1]!).getByTestId('route-inactive')).toBeTruthy();

    const open = target('openai/gpt-4o-mini');
    const clock = new Date(OPEN_UNTIL).toLocaleTimeString(undefined, {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hour12: false,
    });
    expect(within(open).getByTestId('route-target-state').textContent).toBe(`Breaker open until ${clock}`);
    // Asia/Karachi (the renderer project's zone): 13:00:05 local.
    expect(clock).toBe('13:00:05');
    expect(within(open).getByTestId('route-target-success').textContent).toBe('25 %');
    expect(within(open).getByTestId('route-target-p95').textContent).toBe('840 ms');
    expect(within(open).getByTestId('route-target-attempts').textContent).toBe('12');

    expect(within(target('anthropic/claude-haiku')).getByTestId('route-target-state').textContent).toBe('Healthy');
    expect(within(target('google/gemini-flash')).getByTestId('route-target-state').textContent).toBe('Probing');
    expect(within(target('mistral/mistral-small')).getByTestId('route-target-state').textContent).toBe('Failing');

    const unknown = target('openai/gpt-3.5-turbo');
    expect(within(unknown).getByTestId('route-target-state').textContent).toBe('–');
    expect(within(unknown).getByTestId('route-target-success').textContent).toBe('–');
    expect(within(unknown).getByTestId('route-target-p95').textContent).toBe('–');
    expect(within(unknown).getByTestId('route-target-attempts').textContent).toBe('–');
  });

  it('reads them again on its own while seen', async () => {
    let version = 7;
    bridge.on('api.routes', () => Promise.resolve(answer(version)));
    render(<RoutesScreen />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(screen.getByTestId('routes-version-number').textContent).toBe('7');
    version = 8;
    await act(() => vi.advanceTimersByTimeAsync(REFRESH_MS * 3));
    expect(screen.getByTestId('routes-version-number').textContent).toBe('8');
    expect(bridge.callsOf('api.routes').length).toBeGreaterThanOrEqual(3);
  });

  it("a target's name opens Health narrowed to the requests it served", async () => {
    bridge.on('api.routes', () => Promise.resolve(answer()));
    render(<RoutesScreen />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    act(() => within(target('anthropic/claude-haiku')).getByTestId('route-target-health').click());
    expect(useRoute.getState().screen).toBe('health');
    expect(useRoute.getState().params).toEqual({ target: 'anthropic/claude-haiku' });
  });

  it('says so when the control plane has no routes endpoint', async () => {
    bridge.on('api.routes', () => Promise.reject(new BridgeError({ status: 404, message: 'Not Found' })));
    render(<RoutesScreen />);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(screen.getByTestId('routes-not-offered')).toBeTruthy();
  });
});
