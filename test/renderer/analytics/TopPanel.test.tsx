import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { bridge } from '../fake-bridge.js';
import { KEYS, emptyTop, fakeWidth, openAnalytics, serve } from './fixtures.js';

const figures = (requests: number, cost: number, errors: number, previousCost: number) => ({
  requests,
  cost_micro: cost,
  errors,
  mean_latency_ms: 840,
  previous_requests: requests,
  previous_cost_micro: previousCost,
});

beforeEach(() => {
  fakeWidth(864);
});

describe('the top of the window', () => {
  it('shows each key with its share and change, says what the rest add up to, and a click narrows the screen to it', async () => {
    serve({
      top: ({ query }) => ({
        ...emptyTop(query.group_by),
        total: figures(1000, 10_000_000, 20, 8_000_000),
        groups: [
          {
            group: KEYS.prod,
            name: 'Production backend',
            ...figures(600, 7_500_000, 12, 5_000_000),
            p95_latency_ms: 2_450,
            trend: [100, 300, 200],
          },
          { group: null, name: null, ...figures(100, 500_000, 0, 500_000), p95_latency_ms: null, trend: [0, 0, 100] },
        ],
        others: { count: 3, ...figures(300, 2_000_000, 8, 2_500_000) },
      }),
    });
    openAnalytics({ project: 'some-project' });
    render(<AnalyticsScreen />);
    const rows = await screen.findAllByTestId('top-row');
    const cells = [...rows[0]!.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells).toEqual([
      'Production backend',
      '600',
      '60.0 %',
      '7.50',
      '75.0 %',
      '+50 %',
      '2.0 %',
      '840 ms · 2,450 ms',
      '',
    ]);
    // The trend line says what it draws; an unknown p95 shows "–".
    expect(within(rows[0]!).getByRole('img').getAttribute('aria-label')).toBe(
      'Requests per 1h in UTC: 100 first, 200 last, 300 at most',
    );
    expect(rows[1]!.querySelectorAll('td')[7]!.textContent).toBe('840 ms · –');
    expect(within(rows[1]!).queryByRole('button')).toBeNull();
    expect(rows[1]!.textContent).toContain('No key');
    expect(screen.getByTestId('top-others').textContent).toBe('3 more: 300 requests, 2.00 PKR.');
    expect(bridge.callsOf('api.top').at(-1)?.query).toEqual({
      time_range: '24h',
      project_id: 'some-project',
      group_by: 'key',
      sort: 'cost',
    });

    const user = userEvent.setup();
    await user.click(within(rows[0]!).getByRole('button', { name: 'Production backend' }));
    // The key narrows the view; the project filter goes, the key belongs to its own.
    expect(useRoute.getState().params).toMatchObject({ key: KEYS.prod });
    expect(useRoute.getState().params.project).toBeUndefined();

    await user.selectOptions(screen.getByTestId('top-group'), 'model');
    await user.selectOptions(screen.getByTestId('top-sort'), 'requests');
    await waitFor(() =>
      expect(bridge.callsOf('api.top').at(-1)?.query).toMatchObject({ group_by: 'model', sort: 'requests' }),
    );
  });
});
