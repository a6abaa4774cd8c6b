import { act, render, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import userEvent from '@testing-library/user-event';
import * as prepare from '../../../renderer/src/lib/series-prepare.js';
import * as dashboardData from '../../../renderer/src/screens/analytics/dashboard/dashboard-data.js';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useDirectory } from '../../../renderer/src/state/directory.js';
import { bridge } from '../fake-bridge.js';
import { NO_REQUESTS, PROJECTS, emptyDashboard, fakeWidth, openAnalytics, serve, type Dashboard } from './fixtures.js';

// The real functions, counted: the chart must not fill its answer again when only the directory moved.
vi.mock('../../../renderer/src/lib/series-prepare.js', async (original) => {
  const real = await original<typeof prepare>();
  return { ...real, fillAnswer: vi.fn(real.fillAnswer), nameSeries: vi.fn(real.nameSeries) };
});

// Likewise the dashboard's rows: its panels must not be drawn again for buckets that did not change.
vi.mock('../../../renderer/src/screens/analytics/dashboard/dashboard-data.js', async (original) => {
  const real = await original<typeof dashboardData>();
  return { ...real, dashboardRows: vi.fn(real.dashboardRows) };
});

const HOUR = 3_600_000;
const bucket = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const CREATED = '2026-01-01T00:00:00.000Z';

beforeEach(() => {
  fakeWidth(864);
  vi.mocked(prepare.fillAnswer).mockClear();
  vi.mocked(prepare.nameSeries).mockClear();
  vi.mocked(dashboardData.dashboardRows).mockClear();
});

describe('the chart redoes only what changed', () => {
  it('a directory reload that renames nothing refills and renames nothing; a rename renames only', async () => {
    const now = Date.now();
    serve({
      timeseries: () => ({
        metric: 'volume',
        interval: '1h',
        group_by: 'project',
        time_range: '24h',
        data: [{ bucket: bucket(now - HOUR), group: PROJECTS.support, value: 4 }],
      }),
    });
    openAnalytics({ group: 'project' });
    render(<AnalyticsScreen />);
    const legend = () => screen.getAllByTestId('series-name').map((li) => li.textContent);
    await waitFor(() => expect(legend()).toEqual(['Support Bot']));
    const fills = vi.mocked(prepare.fillAnswer).mock.calls.length;
    const namings = vi.mocked(prepare.nameSeries).mock.calls.length;
    expect(fills).toBe(1);

    // The same names, in new lists (as every reload gives): nothing is redone.
    await act(() => useDirectory.getState().load(true));
    expect(legend()).toEqual(['Support Bot']);
    expect(vi.mocked(prepare.fillAnswer).mock.calls.length).toBe(fills);
    expect(vi.mocked(prepare.nameSeries).mock.calls.length).toBe(namings);

    // A project of the answer renamed: named again, not filled again.
    bridge.on('api.projects', () => ({
      projects: [{ id: PROJECTS.support, name: 'Helpdesk', created_at: CREATED }],
    }));
    await act(() => useDirectory.getState().load(true));
    await waitFor(() => expect(legend()).toEqual(['Helpdesk']));
    expect(vi.mocked(prepare.fillAnswer).mock.calls.length).toBe(fills);
    expect(vi.mocked(prepare.nameSeries).mock.calls.length).toBe(namings + 1);
  });

  it('a refresh whose dashboard buckets did not change draws no panel again; a changed bucket does', async () => {
    const bucketOf = (ok: number): Dashboard['buckets'][number] => ({
      start: '2026-03-01T05:00:00+05:00',
      requests: ok,
      ok,
      client_errors: 0,
      server_errors: 0,
      refused: 0,
      cost_micro: 1_000,
      tokens: { prompt: 10, generated: 5, cache_read: null, cache_write: null },
      tokens_per_second: 20,
      latency_ms: { p50: 100, p95: 200, p99: 300 },
      ttft_ms: null,
    });
    // Each answer a new object, its window's total moving on: the buckets are what the charts draw.
    let answers = 0;
    let ok = 7;
    serve({
      dashboard: () => {
        answers += 1;
        return {
          ...emptyDashboard('24h'),
          buckets: [bucketOf(ok)],
          totals: { current: { ...NO_REQUESTS, requests: 100 + answers }, previous: NO_REQUESTS },
        };
      },
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    const versus = () => screen.getByTestId('dashboard-outcomes-versus').textContent;
    await waitFor(() => expect(versus()).toContain('101 requests'));
    const drawn = vi.mocked(dashboardData.dashboardRows).mock.calls.length;

    await userEvent.click(screen.getByTestId('analytics-refresh'));
    await waitFor(() => expect(versus()).toContain('102 requests'));
    expect(vi.mocked(dashboardData.dashboardRows).mock.calls.length).toBe(drawn);

    ok = 9;
    await userEvent.click(screen.getByTestId('analytics-refresh'));
    await waitFor(() => expect(versus()).toContain('103 requests'));
    expect(vi.mocked(dashboardData.dashboardRows).mock.calls.length).toBe(drawn + 1);
    expect(screen.getByTestId('dashboard-chart-outcomes').getAttribute('aria-label')).toContain('9 2xx');
  });
});
