import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertsView } from '#contract';
import { Shell } from '../../../renderer/src/app/Shell.js';
import { AlertsScreen } from '../../../renderer/src/screens/alerts/AlertsScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const FIRED: AlertsView['fired'][number] = {
  seq: 3,
  ruleId: 'r1',
  subject: 'k1',
  title: 'batch jobs has spent 80% of its credit limit',
  body: '8.00 PKR of 10.00 PKR; the gateway refuses it once the limit is spent.',
  screen: 'keys',
  params: {},
  firedAt: new Date().toISOString(),
  delivered: false,
};

const view = (extra: Partial<AlertsView> = {}): AlertsView => ({
  rules: [],
  fired: [],
  check: { checkedAt: '2026-11-22T07:49:19.123Z', problem: null },
  ...extra,
});

/** The browser's Notification API, recording what the page raised. */
class RecordedNotification {
  static permission: NotificationPermission = 'granted';
  static raised: { title: string; body: string | undefined }[] = [];
  onclick: (() => void) | null = null;
  constructor(title: string, options?: NotificationOptions) {
    RecordedNotification.raised.push({ title, body: options?.body });
  }
  close(): void {}
}

beforeEach(() => {
  resetOrganisationStores();
  useRoute.setState({ screen: 'alerts', params: {} });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  RecordedNotification.raised = [];
  RecordedNotification.permission = 'granted';
  (globalThis as { Notification?: unknown }).Notification = RecordedNotification;
});
afterEach(() => {
  delete (globalThis as { Notification?: unknown }).Notification;
});

describe('the alerts screen', () => {
  it('adds a rule from the form, checked at its field, and lists it in words', async () => {
    let rules: AlertsView['rules'] = [];
    bridge.on('alerts.get', () => view({ rules }));
    bridge.on('alerts.setRules', (args) => {
      rules = args.rules;
      return view({ rules });
    });
    render(<AlertsScreen />);
    const user = userEvent.setup();
    await user.selectOptions(await screen.findByTestId('rule-kind'), 'runs_out');
    const figure = screen.getByTestId('rule-figure');
    await user.clear(figure);
    await user.type(figure, '400');
    expect(screen.getByTestId('field-error').textContent).toBe('between 1 and 365');
    expect(screen.getByTestId('add-rule')).toHaveProperty('disabled', true);
    await user.clear(figure);
    await user.type(figure, '10');
    await user.click(screen.getByTestId('add-rule'));

    await waitFor(() => expect(bridge.callsOf('alerts.setRules')).toHaveLength(1));
    expect(bridge.callsOf('alerts.setRules')[0]).toEqual({
      profileId: 'p1',
      rules: [{ id: expect.stringMatching(/^rule-/), kind: 'runs_out', days: 10 }],
    });
    expect((await screen.findByTestId('alert-rule')).textContent).toContain(
      'A key or the deposits run out within 10 days',
    );

    await user.click(screen.getByRole('button', { name: /^Remove the rule/ }));
    await waitFor(() => expect(bridge.callsOf('alerts.setRules').at(-1)?.rules).toEqual([]));
  });

  it('lists what fired, newest first, each opening the screen that explains it, and says how the last check went', async () => {
    bridge.on('alerts.get', () =>
      view({ fired: [FIRED], check: { checkedAt: null, problem: 'signed out: sign in to this connection' } }),
    );
    render(<AlertsScreen />);
    const row = await screen.findByTestId('fired-alert');
    expect(row.textContent).toContain('batch jobs has spent 80% of its credit limit');
    expect(screen.getByTestId('alert-check').textContent).toBe('signed out: sign in to this connection');
    await userEvent.setup().click(within(row).getByRole('button', { name: 'Open API keys' }));
    expect(useRoute.getState().screen).toBe('keys');
  });
});

describe('alerts reaching the desktop in the web shell', () => {
  const shellWith = (shell: 'web' | 'electron') => {
    bridge.on('app.info', () => ({ shell, version: 'test' }));
    bridge.on('alerts.get', () => view({ fired: [FIRED] }));
    bridge.on('alerts.delivered', () => ({}));
    bridge.on('api.spend', () => {
      throw new Error('not needed');
    });
  };

  it("raises the browser's notification for each alert not yet delivered, then tells the host", async () => {
    shellWith('web');
    render(<Shell />);
    await waitFor(() => expect(bridge.callsOf('alerts.delivered')).toEqual([{ profileId: 'p1', through: 3 }]));
    expect(RecordedNotification.raised).toEqual([{ title: FIRED.title, body: FIRED.body }]);
  });

  it('raises and acknowledges nothing while notifications are blocked, nor in the Electron shell (its host raises them)', async () => {
    RecordedNotification.permission = 'denied';
    shellWith('web');
    const { unmount } = render(<Shell />);
    await waitFor(() => expect(bridge.callsOf('alerts.get').length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 50));
    unmount();
    RecordedNotification.permission = 'granted';
    bridge.reset();
    resetOrganisationStores();
    shellWith('electron');
    render(<Shell />);
    await waitFor(() => expect(bridge.callsOf('alerts.get').length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(RecordedNotification.raised).toEqual([]);
    expect(bridge.callsOf('alerts.delivered')).toEqual([]);
  });

  it('does not raise an alert fired more than an hour ago', async () => {
    shellWith('web');
    bridge.on('alerts.get', () =>
      view({ fired: [{ ...FIRED, firedAt: new Date(Date.now() - 3_700_000).toISOString() }] }),
    );
    render(<Shell />);
    await waitFor(() => expect(bridge.callsOf('alerts.get').length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(RecordedNotification.raised).toEqual([]);
  });
});
