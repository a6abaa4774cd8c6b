import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { bridge } from '../fake-bridge.js';
import { emptyTop, fakeWidth, openAnalytics, serve } from './fixtures.js';

/**
 * Analytics by API: the API filter beside the Target filter narrows every panel, the chart splits
 * by API (series named in the log's short words, the unknown ones apart) and the top lists APIs.
 */

const HOUR = 3_600_000;
const bucket = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const options = (select: HTMLElement) => [...select.querySelectorAll('option')].map((o) => o.textContent);
const value = (element: HTMLElement) => (element as HTMLSelectElement).value;

/** The query of the latest call of each panel's endpoint. */
function lastQueries() {
  const last = <T,>(calls: T[]) => calls.at(-1);
  return {
    summary: last(bridge.callsOf('api.summary'))?.query,
    compare: last(bridge.callsOf('api.compare'))?.query,
    timeseries: last(bridge.callsOf('api.timeseries'))?.query,
    dashboard: last(bridge.callsOf('api.dashboard'))?.query,
    top: last(bridge.callsOf('api.top'))?.query,
  };
}

const figures = (requests: number) => ({
  requests,
  cost_micro: requests * 1_000,
  errors: 0,
  mean_latency_ms: 500,
  previous_requests: requests,
  previous_cost_micro: requests * 1_000,
});

beforeEach(() => {
  fakeWidth(864);
});

describe('the analytics API filter', () => {
  it('offers every API, and choosing one narrows every panel; "All APIs" takes it away', async () => {
    serve({});
    openAnalytics({ range: '7d' });
    render(<AnalyticsScreen />);
    const select = screen.getByTestId('filter-api');
    expect(options(select)).toEqual(['All APIs', 'Chat', 'Messages', 'Count tokens', 'Responses', 'Embeddings']);
    expect(value(select)).toBe('');
    await waitFor(() => expect(lastQueries().top).toBeDefined());
    for (const query of Object.values(lastQueries())) expect(query).not.toHaveProperty('api');

    await userEvent.selectOptions(select, 'Messages');
    expect(useRoute.getState().params).toMatchObject({ range: '7d', api: 'messages' });
    await waitFor(() => {
      for (const [panel, query] of Object.entries(lastQueries()))
        expect(query, panel).toMatchObject({ time_range: '7d', api: 'messages' });
    });

    await userEvent.selectOptions(select, '');
    expect(useRoute.getState().params).not.toHaveProperty('api');
    await waitFor(() => expect(lastQueries().summary).toEqual({ time_range: '7d' }));
  });

  it('an API from the address (a saved view) is selected and asked for with a target', async () => {
    serve({});
    openAnalytics({ api: 'responses', target: 'openai/gpt-4o-mini-2024-07-18' });
    render(<AnalyticsScreen />);
    expect(value(screen.getByTestId('filter-api'))).toBe('responses');
    await waitFor(() =>
      expect(lastQueries().summary).toEqual({
        time_range: '24h',
        target: 'openai/gpt-4o-mini-2024-07-18',
        api: 'responses',
      }),
    );
  });
});

describe('the chart split by API', () => {
  it('is a grouping of the chart, its series named in short words and the unknown ones apart', async () => {
    const now = Date.now();
    serve({
      timeseries: (args) => ({
        metric: 'volume',
        interval: '1h',
        group_by: args.query.group_by ?? null,
        time_range: '24h',
        data:
          args.query.group_by === 'api'
            ? [
                { bucket: bucket(now - HOUR), group: 'messages', value: 8 },
                { bucket: bucket(now - HOUR), group: null, value: 3 },
                { bucket: bucket(now - HOUR), group: 'chat', value: 20 },
                { bucket: bucket(now - HOUR), group: 'count_tokens', value: 2 },
              ]
            : [{ bucket: bucket(now - HOUR), group: null, value: 33 }],
      }),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    const groupBy = screen.getByTestId('series-group-by');
    expect(options(groupBy)).toEqual(['None', 'Project', 'Key', 'Model', 'API']);
    await userEvent.selectOptions(groupBy, 'API');
    expect(useRoute.getState().params).toMatchObject({ group: 'api' });
    await waitFor(() => expect(lastQueries().timeseries).toMatchObject({ group_by: 'api' }));
    await waitFor(() =>
      expect(screen.getAllByTestId('series-name').map((li) => li.textContent)).toEqual([
        'Chat',
        'Count tokens',
        'Messages',
        '(API unknown)',
      ]),
    );
    expect(screen.getByRole('figure', { name: 'Requests per 1h by API' })).toBeTruthy();
  });

  it('kept in the address: a view grouped by API opens grouped by it', async () => {
    serve({});
    openAnalytics({ group: 'api' });
    render(<AnalyticsScreen />);
    expect(value(screen.getByTestId('series-group-by'))).toBe('api');
    await waitFor(() => expect(lastQueries().timeseries).toMatchObject({ group_by: 'api' }));
  });
});

describe('the top by API', () => {
  it('lists the APIs in short words, the unknown ones apart, and a click narrows the screen to one', async () => {
    serve({
      top: ({ query }) =>
        query.group_by === 'api'
          ? {
              ...emptyTop('api'),
              total: figures(60),
              groups: [
                { group: 'chat', name: null, ...figures(40), p95_latency_ms: 900, trend: [10, 30] },
                { group: 'messages', name: null, ...figures(15), p95_latency_ms: 700, trend: [5, 10] },
                { group: null, name: null, ...figures(5), p95_latency_ms: null, trend: [5, 0] },
              ],
            }
          : emptyTop(query.group_by),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    const of = screen.getByTestId('top-group');
    expect(options(of)).toEqual(['Keys', 'Models', 'Projects', 'APIs']);
    await userEvent.selectOptions(of, 'APIs');
    expect(useRoute.getState().params).toMatchObject({ top: 'api' });
    const rows = await screen.findAllByTestId('top-row');
    expect(rows.map((row) => row.querySelector('td')!.textContent)).toEqual(['Chat', 'Messages', 'API unknown']);
    expect(lastQueries().top).toMatchObject({ group_by: 'api' });
    expect(within(rows[2]!).queryByRole('button')).toBeNull();

    await userEvent.click(within(rows[1]!).getByRole('button', { name: 'Messages' }));
    expect(useRoute.getState().params).toMatchObject({ top: 'api', api: 'messages' });
    expect(value(screen.getByTestId('filter-api'))).toBe('messages');
    await waitFor(() => expect(lastQueries().summary).toMatchObject({ api: 'messages' }));
  });
});
