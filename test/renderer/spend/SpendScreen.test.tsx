import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallResult } from '#contract';
import { Shell } from '../../../renderer/src/app/Shell.js';
import { REVISIT_MS } from '../../../renderer/src/lib/revisit.js';
import { SpendScreen } from '../../../renderer/src/screens/spend/SpendScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

type Report = CallResult<'api.spend'>;
const PKR = 1_000_000;
const AS_OF = '2026-11-22T07:49:19.123Z';
const NOW = Date.parse(AS_OF);
const DAY = 86_400_000;
const text = (element: Element | null) => element?.textContent ?? '';

const burn = (daily: number[]) => {
  const total = daily.reduce((a, b) => a + b, 0);
  return {
    daily_micro: daily,
    window_micro: total,
    rate_micro_per_day: total / 7,
    rate_low_micro_per_day: total / 7,
    rate_high_micro_per_day: total / 7,
  };
};

function report(overrides: Partial<Report> = {}): Report {
  return {
    as_of: AS_OF,
    window: { days: 7, from: new Date(NOW - 7 * DAY).toISOString(), to: AS_OF },
    organization: {
      deposited_micro: 1000 * PKR,
      allocated_micro: 300 * PKR,
      headroom_micro: 700 * PKR,
      spent_micro: 148_134,
      remaining_micro: 1000 * PKR - 148_134,
      burn: burn([0, 0, 0, 0, 0, 0, 148_134]),
      forecast: {
        kind: 'runs_out',
        remaining_micro: 1000 * PKR - 148_134,
        at: new Date(NOW + 400 * DAY).toISOString(),
        earliest: new Date(NOW + 200 * DAY).toISOString(),
        latest: null,
      },
    },
    total: 2,
    limit: 50,
    offset: 0,
    keys: [
      {
        id: 'k-used',
        name: 'batch jobs',
        key_prefix: 'sk_svc_aaaaaaaa',
        project_id: 'p1',
        credit_limit_micro: 10 * PKR,
        spent_micro: 12 * PKR,
        burn: burn([PKR, PKR, PKR, PKR, PKR, PKR, 6 * PKR]),
        forecast: { kind: 'spent', remaining_micro: -2 * PKR },
      },
      {
        id: 'k-open',
        name: 'chat',
        key_prefix: 'sk_svc_bbbbbbbb',
        project_id: 'p1',
        credit_limit_micro: null,
        spent_micro: 4_053_000,
        burn: null,
        forecast: null,
      },
    ],
    ...overrides,
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

beforeEach(() => {
  resetOrganisationStores();
  useRoute.setState({ screen: 'spend', params: {} });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
});

describe('the spend screen', () => {
  it('shows the budget and each key against its limit, money with the same decimals and the exact amount on hover', async () => {
    bridge.on('api.spend', () => report());
    render(<SpendScreen />);
    const rows = await screen.findAllByTestId('spend-row');
    expect(rows.map((row) => row.dataset.keyId)).toEqual(['k-used', 'k-open']);

    const spent = within(screen.getByTestId('budget-spent-value')).getByText(/PKR/);
    expect(text(spent)).toMatch(/^0\.15 PKR$/);
    expect(spent.getAttribute('title')).toBe('0.148134 PKR (148,134 micro-PKR)');
    expect(text(screen.getByTestId('budget-headroom-value'))).toMatch(/^700\.00 PKR$/);
    expect(text(screen.getByTestId('budget-forecast-value'))).toMatch(/^Runs out .* \(in 400 days\)$/);
    expect(text(screen.getByTestId('budget-forecast'))).toContain('not at all at the slowest likely rate');

    const used = rows[0]!;
    expect(text(within(used).getByTestId('spend-forecast'))).toContain('Used up');
    expect(text(within(used).getByTestId('spend-forecast'))).toContain('2.00 PKR past it');
    const bar = within(used).getByRole('meter', { name: 'batch jobs: share of the credit limit spent' });
    expect(bar.getAttribute('aria-valuetext')).toBe('12.00 of 10.00 PKR (120 %)');
    expect(bar.getAttribute('aria-valuenow')).toBe('100');
    expect(within(used).getByTestId('spend-days').getAttribute('aria-label')).toContain('6.00 PKR');

    // Unknown rates (the request log unreadable) read as a dash, never 0.
    const open = rows[1]!;
    expect(text(within(open).getByTestId('spend-rate'))).toBe('–');
    expect(text(within(open).getByTestId('spend-forecast'))).toBe('–');
    expect(text(within(open).getByTestId('spend-spent'))).toBe('4.05');
    expect(screen.getByTestId('spend-method').textContent).toContain('90 % interval');
  });

  it('shows an unknown week and forecast as a dash, and an organisation without deposits as such', async () => {
    const base = report();
    bridge.on('api.spend', () => ({ ...base, organization: { ...base.organization, burn: null, forecast: null } }));
    const { unmount } = render(<SpendScreen />);
    await screen.findAllByTestId('spend-row');
    expect(text(screen.getByTestId('budget-burn-value'))).toBe('–');
    expect(text(screen.getByTestId('budget-forecast-value'))).toBe('–');
    unmount();

    resetOrganisationStores();
    const none = { ...base.organization, deposited_micro: 0, remaining_micro: -148_134 };
    bridge.on('api.spend', () => ({
      ...base,
      organization: { ...none, forecast: { kind: 'spent', remaining_micro: -148_134 } },
    }));
    render(<SpendScreen />);
    await waitFor(() => expect(text(screen.getByTestId('budget-forecast-value'))).toBe('No deposits'));
  });

  it('asks the server for the order and page chosen, kept in the address', async () => {
    bridge.on('api.spend', ({ query }) =>
      report({ limit: query?.limit ?? 50, offset: query?.offset ?? 0, total: 120 }),
    );
    render(<SpendScreen />);
    await screen.findAllByTestId('spend-row');
    expect(bridge.callsOf('api.spend').at(-1)?.query).toEqual({ sort: 'runs_out', limit: 50, offset: 0 });
    const user = userEvent.setup();
    await user.selectOptions(screen.getByTestId('spend-sort'), 'burn');
    await waitFor(() =>
      expect(bridge.callsOf('api.spend').at(-1)?.query).toEqual({ sort: 'burn', limit: 50, offset: 0 }),
    );
    expect(useRoute.getState().params.sort).toBe('burn');
    await user.click(screen.getByTestId('page-next'));
    await waitFor(() =>
      expect(bridge.callsOf('api.spend').at(-1)?.query).toEqual({ sort: 'burn', limit: 50, offset: 50 }),
    );
  });

  it('says so, and leaves the navigation, when the control plane has no spend endpoint', async () => {
    bridge.on('api.spend', () => {
      throw new Refusal(404, 'Route GET:/api/analytics/spend not found');
    });
    bridge.on('api.listKeys', () => ({ keys: [] }));
    bridge.on('api.projects', () => ({ projects: [] }));
    bridge.on('api.models', () => ({ models: [] }));
    render(<Shell />);
    expect(await screen.findByTestId('spend-not-offered')).toBeTruthy();
    await waitFor(() => expect(screen.queryByTestId('nav-spend')).toBeNull());
    expect(screen.getByTestId('nav-requests')).toBeTruthy();
  });

  it('opened again on the same page shows its report at once and reads it again; one older than REVISIT_MS loads', async () => {
    let release: () => void = () => undefined;
    let held: Promise<void> = Promise.resolve();
    let keys = report().keys;
    bridge.on('api.spend', async () => {
      await held;
      return report({ keys });
    });
    const first = render(<SpendScreen />);
    await screen.findAllByTestId('spend-row');
    first.unmount();

    held = new Promise((resolve) => (release = resolve));
    keys = keys.slice(0, 1);
    const again = render(<SpendScreen />);
    expect(screen.getByTestId('spend-screen').getAttribute('aria-busy')).toBe('false');
    expect(screen.getAllByTestId('spend-row')).toHaveLength(2);
    expect(bridge.callsOf('api.spend')).toHaveLength(2);
    act(() => release());
    await waitFor(() => expect(screen.getAllByTestId('spend-row')).toHaveLength(1));
    again.unmount();

    held = new Promise((resolve) => (release = resolve));
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + REVISIT_MS);
    render(<SpendScreen />);
    expect(screen.getByTestId('spend-screen').getAttribute('aria-busy')).toBe('true');
    act(() => release());
    await waitFor(() => expect(screen.getByTestId('spend-screen').getAttribute('aria-busy')).toBe('false'));
  });

  it('shows a failure with a way to read again, and keeps the nav entry (the endpoint exists)', async () => {
    let fail = true;
    bridge.on('api.spend', () => {
      if (fail) throw new Refusal(500, 'internal error');
      return report();
    });
    render(<SpendScreen />);
    expect(text(await screen.findByTestId('spend-error'))).toContain('Could not load the spend: internal error');
    fail = false;
    await userEvent.setup().click(within(screen.getByTestId('spend-error')).getByRole('button', { name: 'Try again' }));
    expect(await screen.findAllByTestId('spend-row')).toHaveLength(2);
  });
});
