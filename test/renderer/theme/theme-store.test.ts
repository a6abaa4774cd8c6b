import { act, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTheme } from '../../../renderer/src/theme/theme-store.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

/** The theme the page shows (styles.css keys its palette on it). */
const shown = () => document.documentElement.dataset.theme;

const signOut = () => useSession.setState({ phase: 'connect', profileId: 'p1', me: null });
const signIn = () => act(() => useSession.setState({ phase: 'console', profileId: 'p1', me: ME }));

describe('the theme across sign-in', () => {
  beforeEach(() => {
    window.localStorage.clear();
    signOut();
    useTheme.setState({ theme: 'system', pending: false, error: null });
  });

  it("does not overwrite an account's saved theme with one chosen before its sign-in", async () => {
    bridge.on('prefs.get', () => ({ theme: 'dark', saved: true }));
    bridge.on('prefs.setTheme', ({ theme }) => ({ theme }));
    await useTheme.getState().choose('light');
    signIn();
    await waitFor(() => expect(shown()).toBe('dark'));
    expect(bridge.callsOf('prefs.setTheme')).toEqual([]);
    expect(useTheme.getState()).toMatchObject({ theme: 'dark', pending: false });
  });

  it('saves a theme chosen before sign-in for an account that never chose one', async () => {
    bridge.on('prefs.get', () => ({ theme: 'system', saved: false }));
    bridge.on('prefs.setTheme', ({ theme }) => ({ theme }));
    await useTheme.getState().choose('dark');
    signIn();
    await waitFor(() => expect(bridge.callsOf('prefs.setTheme')).toEqual([{ profileId: 'p1', theme: 'dark' }]));
    expect(shown()).toBe('dark');
  });

  it("keeps a choice made while the account's theme was being read", async () => {
    let answer: (value: { theme: 'light'; saved: true }) => void = () => {};
    bridge.on('prefs.get', () => new Promise((resolve) => (answer = resolve)));
    bridge.on('prefs.setTheme', ({ theme }) => ({ theme }));
    signIn();
    await waitFor(() => expect(bridge.callsOf('prefs.get')).toHaveLength(1));
    await useTheme.getState().choose('dark');
    answer({ theme: 'light', saved: true });
    await act(async () => {});
    expect(shown()).toBe('dark');
    expect(useTheme.getState().theme).toBe('dark');
    expect(bridge.callsOf('prefs.setTheme')).toEqual([{ profileId: 'p1', theme: 'dark' }]);
  });
});
