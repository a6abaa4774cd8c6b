import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProfileView } from '#contract';
import { App } from '../../renderer/src/app/App.js';
import { api, useAnalyticsHealth } from '../../renderer/src/state/api.js';
import { useSession } from '../../renderer/src/state/session.js';
import { bridge, Refusal } from './fake-bridge.js';
import { ME } from './signed-in.js';

function profile(overrides: Partial<ProfileView> = {}): ProfileView {
  return {
    id: 'p1',
    name: 'Production',
    kind: 'remote',
    baseUrl: 'https://gw.example.com/api',
    signedIn: false,
    ...overrides,
  };
}

beforeEach(() => {
  useSession.setState({ phase: 'starting', profiles: [], profileId: null, me: null, embedded: null, notice: null });
  useAnalyticsHealth.setState({ unavailable: null });
  window.localStorage.clear();
  bridge.on('embedded.status', () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }));
});

describe('signing in', () => {
  it('signs in with the typed credentials and opens the console as that user', async () => {
    let signedIn = false;
    bridge.on('profiles.list', () => ({ profiles: [profile({ signedIn })] }));
    bridge.on('session.signIn', () => {
      signedIn = true;
      return { user: ME, organization: ME.organization };
    });
    bridge.on('session.me', () => ME);
    render(<App />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email'), ' ada@example.com ');
    await user.type(screen.getByLabelText('Password'), 'difference engine');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByTestId('session-email')).textContent).toContain('ada@example.com');
    expect(bridge.callsOf('session.signIn')).toEqual([
      { profileId: 'p1', email: 'ada@example.com', password: 'difference engine' },
    ]);
    // The next launch goes straight to the console on the same connection.
    expect(window.localStorage.getItem('gateway-console-profile')).toBe('p1');
  });

  it('shows a refusal at the form and stays on the sign-in screen', async () => {
    bridge.on('profiles.list', () => ({ profiles: [profile()] }));
    bridge.on('session.signIn', () => {
      throw new Refusal(401, 'invalid email or password');
    });
    render(<App />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email'), 'ada@example.com');
    await user.type(screen.getByLabelText('Password'), 'wrong');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toContain('invalid email or password (401)');
    expect(screen.getByTestId('connect-screen').isConnected).toBe(true);
  });
});

describe('the ways to sign in', () => {
  it('are tabs that the arrow keys move between, each tied to the panel it shows', async () => {
    bridge.on('profiles.list', () => ({ profiles: [profile()] }));
    render(<App />);
    const user = userEvent.setup();
    const signIn = await screen.findByRole('tab', { name: 'Sign in' });
    const register = screen.getByRole('tab', { name: 'Register' });
    const identity = screen.getByRole('tab', { name: 'External identity' });
    const panel = screen.getByRole('tabpanel');
    // One tab in the Tab order: the selected one.
    expect([signIn, register, identity].map((tab) => tab.tabIndex)).toEqual([0, -1, -1]);
    for (const tab of [signIn, register, identity]) expect(tab.getAttribute('aria-controls')).toBe(panel.id);
    expect(panel.getAttribute('aria-labelledby')).toBe(signIn.id);

    signIn.focus();
    await user.keyboard('{ArrowRight}');
    expect(document.activeElement).toBe(register);
    expect(register.getAttribute('aria-selected')).toBe('true');
    expect([signIn, register, identity].map((tab) => tab.tabIndex)).toEqual([-1, 0, -1]);
    expect(screen.getByRole('tabpanel').getAttribute('aria-labelledby')).toBe(register.id);
    expect(screen.getByTestId('register-form').isConnected).toBe(true);

    await user.keyboard('{ArrowRight}{ArrowRight}');
    expect(document.activeElement).toBe(signIn);
    await user.keyboard('{ArrowLeft}');
    expect(document.activeElement).toBe(identity);
    expect(screen.getByTestId('identity-form').isConnected).toBe(true);
    await user.keyboard('{Home}');
    expect(document.activeElement).toBe(signIn);
    expect(screen.getByTestId('sign-in-form').isConnected).toBe(true);
  });
});

describe('a session that ends or a backend that fails', () => {
  async function signedInConsole() {
    window.localStorage.setItem('gateway-console-profile', 'p1');
    bridge.on('profiles.list', () => ({ profiles: [profile({ signedIn: true })] }));
    bridge.on('session.me', () => ME);
    render(<App />);
    await screen.findByTestId('session-email');
  }

  it('returns to sign-in with the reason when a call answers 401', async () => {
    await signedInConsole();
    bridge.on('api.members', () => {
      throw new Refusal(401, 'signed out: sign in again');
    });
    await expect(api('api.members', {})).rejects.toThrow('signed out');
    expect((await screen.findByTestId('session-notice')).textContent).toContain('Your session has expired');
  });

  it('raises the analytics banner on a 503 and lowers it on the next answer', async () => {
    await signedInConsole();
    bridge.on('api.summary', () => {
      throw new Refusal(503, 'analytics backend unavailable');
    });
    await expect(api('api.summary', { query: {} })).rejects.toThrow();
    expect((await screen.findByTestId('analytics-banner')).textContent).toContain('analytics backend unavailable');
    // Other calls failing or not leave it alone.
    bridge.on('api.members', () => ({ members: [] }));
    await api('api.members', {});
    expect(screen.getByTestId('analytics-banner').isConnected).toBe(true);
    bridge.on('api.summary', () => ({
      time_range: '24h',
      total_requests: 0,
      avg_e2e_latency_ms: null,
      avg_ttft_ms: null,
      avg_tokens_per_sec: null,
      total_token_usage: 0,
    }));
    await api('api.summary', { query: {} });
    await waitFor(() => expect(screen.queryByTestId('analytics-banner')).toBeNull());
  });
});
