import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { dashboardInterval } from '../../../renderer/src/screens/analytics/analytics-view.js';
import { useDashboard } from '../../../renderer/src/screens/analytics/dashboard/dashboard-store.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { KEYS, PROJECTS, emptyDashboard, fakeWidth, openAnalytics, serve, type Dashboard } from './fixtures.js';

/**
 * The dashboard (GET /analytics/dashboard, beyond the contract): asked with the view's scope,
 * drawn in panels on the reporting zone's clock, hidden on a control plane without it.
 */

type Bucket = Dashboard['buckets'][number];

function bucket(start: string, figures: Partial<Bucket> = {}): Bucket {
  return {
    start,
    requests: 14,
    ok: 10,
    client_errors: 2,
    server_errors: 1,
    refused: 1,
    cost_micro: 1_250_000,
    tokens: { prompt: 1000, generated: 400, cache_read: null, cache_write: null },
    tokens_per_second: 52.5,
    latency_ms: { p50: 420, p95: 900, p99: 1500 },
    ttft_ms: { p50: 180, p95: 350, p99: 600 },
    ...figures,
  };
}

/** Berlin across the night clocks go forward: 02:00 never happens, so 01:00 is followed by 03:00. */
const BERLIN: Dashboard = {
  ...emptyDashboard('24h'),
  time_zone: 'Europe/Berlin',
  percentile_relative_error: 0.025,
  buckets: [
    bucket('2026-03-29T00:00:00+01:00'),
    bucket('2026-03-29T01:00:00+01:00', { tokens_per_second: null, latency_ms: null, ttft_ms: null }),
    bucket('2026-03-29T03:00:00+02:00', {
      tokens: { prompt: 500, generated: 200, cache_read: 300, cache_write: 100 },
      cost_micro: 2_500_000,
    }),
  ],
  cache: [
    {
      model: 'openai/gpt-4o-mini',
      prompt_tokens: 4000,
      cache_read_tokens: null,
      cache_write_tokens: null,
      hit_share: null,
      saved_micro: null,
    },
    {
      model: 'anthropic/claude-haiku',
      prompt_tokens: 2000,
      cache_read_tokens: 900,
      cache_write_tokens: 100,
      hit_share: 0.45,
      saved_micro: 320_000,
    },
    {
      model: 'anthropic/claude-sonnet',
      prompt_tokens: 3000,
      cache_read_tokens: 1500,
      cache_write_tokens: 300,
      hit_share: 0.5,
      saved_micro: 4_500_000,
    },
  ],
  totals: {
    current: bucket('2026-03-29T00:00:00+01:00', { requests: 42, server_errors: 3, cost_micro: 5_000_000 }),
    previous: bucket('2026-03-28T00:00:00+01:00', {
      requests: 40,
      server_errors: 1,
      cost_micro: 4_000_000,
      latency_ms: { p50: 400, p95: 1000, p99: 1400 },
      tokens_per_second: null,
    }),
  },
};

const lastQuery = () => bridge.callsOf('api.dashboard').at(-1)?.query;
const panel = (name: string) => screen.getByTestId(`dashboard-panel-${name}`);
const chartLabel = (name: string) => screen.getByTestId(`dashboard-chart-${name}`).getAttribute('aria-label');

beforeEach(() => {
  fakeWidth(864);
});

describe('the dashboard', () => {
  it("asks with the view's window and scope, and again when a filter changes", async () => {
    serve({});
    openAnalytics({ range: '7d', project: PROJECTS.support, model: 'openai/gpt-4o-mini', interval: '6h' });
    render(<AnalyticsScreen />);
    await waitFor(() =>
      expect(lastQuery()).toEqual({
        time_range: '7d',
        project_id: PROJECTS.support,
        model_alias: 'openai/gpt-4o-mini',
        interval: '6h',
      }),
    );
    // The contract chart's controls that are not the dashboard's ask it nothing again.
    const asked = bridge.callsOf('api.dashboard').length;
    act(() => useRoute.getState().setParams({ metric: 'latency', group: 'model' }));
    await waitFor(() => expect(bridge.callsOf('api.timeseries').at(-1)?.query).toMatchObject({ metric: 'latency' }));
    expect(bridge.callsOf('api.dashboard')).toHaveLength(asked);

    act(() => useRoute.getState().setParams({ key: KEYS.prod, range: '24h', interval: '1m' }));
    // A minute over a day is more buckets than the panels can show: the server's default applies.
    await waitFor(() =>
      expect(lastQuery()).toEqual({
        time_range: '24h',
        project_id: PROJECTS.support,
        key_id: KEYS.prod,
        model_alias: 'openai/gpt-4o-mini',
      }),
    );

    await userEvent.click(screen.getByTestId('analytics-refresh'));
    await waitFor(() => expect(bridge.callsOf('api.dashboard')).toHaveLength(asked + 2));
  });

  it('passes on only an interval that divides a day or is whole days, and not too fine', () => {
    const DAY = 86_400_000;
    expect(dashboardInterval('15m', DAY)).toBe(true);
    expect(dashboardInterval('6h', 7 * DAY)).toBe(true);
    expect(dashboardInterval('1d', 90 * DAY)).toBe(true);
    expect(dashboardInterval('7d', 400 * DAY)).toBe(true);
    expect(dashboardInterval('7m', DAY)).toBe(false);
    expect(dashboardInterval('36h', 30 * DAY)).toBe(false);
    expect(dashboardInterval('1m', DAY)).toBe(false);
    expect(dashboardInterval('auto', DAY)).toBe(false);
  });

  it('draws each panel from the answer, in the reporting zone, with "–" for what is unknown', async () => {
    serve({ dashboard: () => BERLIN });
    openAnalytics();
    render(<AnalyticsScreen />);
    await screen.findByTestId('dashboard-grid');

    const grid = screen.getByTestId('dashboard');
    expect(within(grid).getByRole('heading', { level: 2, name: 'Dashboard' })).toBeTruthy();
    expect(
      within(grid)
        .getAllByRole('heading', { level: 3 })
        .map((h) => h.textContent),
    ).toEqual([
      'Requests by outcome',
      'Spend over time',
      'Latency percentiles ⓘ',
      'Tokens by kind',
      'Tokens per second',
      'Prompt cache by model',
    ]);
    // Beside every chart, the zone its times are in.
    expect(screen.getAllByTestId('dashboard-zone').map((p) => p.textContent)).toEqual(
      Array(5).fill('Times in Europe/Berlin'),
    );

    expect(chartLabel('outcomes')).toBe('Requests by outcome, 3 buckets: 30 2xx, 6 4xx, 3 5xx, 3 refused by gateway');
    expect(within(panel('outcomes')).getByText('Refused by gateway')).toBeTruthy();
    expect(chartLabel('spend')).toBe('Spend over time, 3 buckets: 5.00 PKR in all');
    expect(screen.getByTestId('dashboard-spend-total').textContent).toBe('In this window 5.00 PKR');
    // Unknown cache figures are left out of the totals, not counted as 0.
    expect(chartLabel('tokens')).toBe(
      'Tokens by kind, 3 buckets: 1,000 generated, 2,500 prompt, 300 cache read, 100 cache write',
    );
    expect(chartLabel('speed')).toBe('Tokens per second, 3 buckets');
    expect(chartLabel('latency')).toContain('within 2.5 % of the exact values');
    expect(screen.getByTestId('dashboard-latency-title').getAttribute('title')).toBe(
      'Percentiles from mergeable sketches, within 2.5 % of the exact value',
    );
    for (const name of ['outcomes', 'spend', 'latency', 'tokens', 'speed']) {
      expect(screen.getByTestId(`dashboard-chart-${name}`).getAttribute('data-points')).toBe('3');
    }

    // Each panel's window against the one before; unknown before is "–", never a change from 0.
    const versus = (name: string) => screen.getByTestId(`dashboard-${name}-versus`).textContent;
    expect(versus('outcomes')).toBe('42 requests, +5 % vs before; 5xx 7.1 %, 2.5 % before');
    expect(versus('spend')).toBe('+25 % vs before');
    expect(versus('latency')).toBe('p95 900 ms, −10 % vs before; time to first token p95 350 ms');
    expect(versus('tokens')).toBe('1,400 tokens, ±0 % vs before');
    expect(versus('speed')).toBe('52.5 tok/s, – vs before');

    // Most saved first; an unknown saving last; unknown is "–", never 0.
    const rows = screen.getAllByTestId('cache-row');
    expect(rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent))).toEqual([
      ['anthropic/claude-sonnet', '3,000', '50.0 %', '4.50'],
      ['anthropic/claude-haiku', '2,000', '45.0 %', '0.32'],
      ['openai/gpt-4o-mini', '4,000', '–', '–'],
    ]);
  });

  it('says "No requests in this window" in every panel of an empty window, not an empty chart', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    await screen.findByTestId('dashboard-grid');
    for (const name of ['outcomes', 'spend', 'latency', 'tokens', 'speed', 'cache']) {
      expect(within(panel(name)).getByText('No requests in this window')).toBeTruthy();
    }
    expect(screen.queryByTestId('dashboard-chart-outcomes')).toBeNull();
    expect(screen.queryByTestId('cache-row')).toBeNull();
    expect(screen.getAllByTestId('dashboard-zone')[0]!.textContent).toBe('Times in Asia/Karachi');
  });

  it('a control plane without the endpoint (404) shows no dashboard, and the rest of the screen as before', async () => {
    serve({
      dashboard: () => {
        throw new Refusal(404, 'Route GET:/analytics/dashboard not found');
      },
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(bridge.callsOf('api.dashboard')).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready'));
    await waitFor(() => expect(screen.queryByTestId('dashboard')).toBeNull());
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByTestId('series-chart')).toBeTruthy();
  });

  it('says when the telemetry is unavailable (503), and another failure with a way to try again', async () => {
    let status = 503;
    serve({
      dashboard: () => {
        if (status) throw new Refusal(status, status === 503 ? 'analytics backend unavailable' : 'worker crashed');
        return BERLIN;
      },
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    expect(await screen.findByTestId('dashboard-unavailable')).toBeTruthy();

    status = 500;
    await userEvent.click(
      within(screen.getByTestId('dashboard-unavailable')).getByRole('button', { name: 'Try again' }),
    );
    const error = await screen.findByTestId('dashboard-error');
    expect(error.textContent).toContain('Could not load the dashboard: worker crashed (500)');

    status = 0;
    await userEvent.click(within(error).getByRole('button', { name: 'Try again' }));
    expect(await screen.findAllByTestId('cache-row')).toHaveLength(3);
    expect(screen.queryByTestId('dashboard-error')).toBeNull();
  });

  it('shows "Loading…" only on the first load, keeps the last answer while the next comes, and drops a slow older one', async () => {
    const pending = new Map<string, (answer: Dashboard) => void>();
    serve({
      dashboard: ({ query }) => new Promise((resolve) => pending.set(query.time_range ?? '', resolve)),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(pending.has('24h')).toBe(true));
    expect(screen.getByTestId('dashboard-skeleton')).toBeTruthy();
    expect(within(screen.getByTestId('dashboard')).getByRole('status').textContent).toBe('Loading the dashboard…');

    act(() => pending.get('24h')!({ ...BERLIN, buckets: BERLIN.buckets.slice(0, 1) }));
    await waitFor(() => expect(chartLabel('outcomes')).toMatch(/^Requests by outcome, 1 bucket:/));

    // Two more questions: the panels stay, dimmed, without "Loading…".
    await userEvent.selectOptions(screen.getByTestId('filter-range'), '7d');
    await waitFor(() => expect(pending.has('7d')).toBe(true));
    await userEvent.selectOptions(screen.getByTestId('filter-range'), '30d');
    await waitFor(() => expect(pending.has('30d')).toBe(true));
    expect(screen.getByTestId('dashboard-grid').className).toContain('stale');
    expect(screen.queryByText('Loading the dashboard…')).toBeNull();
    expect(screen.queryByTestId('dashboard-skeleton')).toBeNull();

    // The newest answer first, then the slow older one: the older is dropped.
    act(() => pending.get('30d')!(BERLIN));
    await waitFor(() => expect(chartLabel('outcomes')).toMatch(/^Requests by outcome, 3 buckets:/));
    act(() => pending.get('7d')!({ ...BERLIN, time_zone: 'Asia/Karachi', buckets: BERLIN.buckets.slice(0, 2) }));
    await act(() => new Promise((resolve) => setTimeout(resolve, 20)));
    expect(chartLabel('outcomes')).toMatch(/^Requests by outcome, 3 buckets:/);
    expect(screen.getAllByTestId('dashboard-zone')[0]!.textContent).toBe('Times in Europe/Berlin');
    expect(screen.getByTestId('dashboard-grid').className).not.toContain('stale');
  });

  it('a quiet re-read (auto-refresh) shows no loading, and when it fails keeps the figures it would have replaced', async () => {
    let fail = false;
    serve({
      dashboard: () => {
        if (fail) throw new Refusal(500, 'worker crashed');
        return BERLIN;
      },
    });
    openAnalytics();
    await useDashboard.getState().load({ time_range: '24h' });
    const at = useDashboard.getState().at;
    expect(useDashboard.getState().data).toBe(BERLIN);

    fail = true;
    const quiet = useDashboard.getState().load({ time_range: '24h' }, true);
    expect(useDashboard.getState().loading).toBe(false);
    await quiet;
    expect(useDashboard.getState()).toMatchObject({ data: BERLIN, at, error: 'worker crashed (500)', loading: false });

    // Asked out loud, a failure leaves nothing stale on screen.
    await useDashboard.getState().load({ time_range: '7d' });
    expect(useDashboard.getState()).toMatchObject({ data: null, at: null, error: 'worker crashed (500)' });
  });
});
