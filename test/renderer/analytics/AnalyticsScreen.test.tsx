import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useAnalyticsHealth } from '../../../renderer/src/state/api.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { Refusal, bridge } from '../fake-bridge.js';
import { KEYS, PROJECTS, SUMMARY, fakeWidth, openAnalytics, serve } from './fixtures.js';

const HOUR = 3_600_000;
const bucket = (ms: number) => new Date(ms).toISOString().slice(0, 19);

async function cardValue(id: string): Promise<string> {
  await waitFor(() => expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready'));
  return screen.getByTestId(`card-${id}-value`).textContent ?? '';
}

const value = (element: HTMLElement) => (element as HTMLInputElement | HTMLSelectElement).value;

const lastQuery = <T,>(calls: { query: T }[]) => calls[calls.length - 1]!.query;

beforeEach(() => {
  fakeWidth(864);
});

describe('summary cards', () => {
  it('show the figures, and "–" (never 0) for what the server does not know', async () => {
    serve({
      summary: () => ({
        ...SUMMARY,
        total_requests: 0,
        avg_e2e_latency_ms: null,
        avg_ttft_ms: null,
        avg_tokens_per_sec: null,
        total_token_usage: 0,
      }),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    expect(await cardValue('requests')).toBe('0');
    expect(await cardValue('latency')).toBe('–');
    expect(await cardValue('ttft')).toBe('–');
    expect(await cardValue('tok-s')).toBe('–');
    expect(await cardValue('tokens')).toBe('0');
  });

  it('show known figures in their units', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    expect(await cardValue('requests')).toMatch(/^1[,.\s ]?234$/);
    expect(await cardValue('latency')).toBe('812 ms');
    expect(await cardValue('ttft')).toBe('301 ms');
    expect(await cardValue('tok-s')).toBe('54.3');
  });

  it('a cost card appears only for one key, with the PKR the server sent for it', async () => {
    serve({
      summary: (args) => ({ ...SUMMARY, ...(args.query.key_id ? { total_cost_pkr: 1250.5 } : {}) }),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    await cardValue('requests');
    expect(screen.queryByTestId('card-cost')).toBeNull();
    expect(lastQuery(bridge.callsOf('api.summary'))).not.toHaveProperty('key_id');

    await waitFor(() => expect(screen.getByTestId('filter-key')).toHaveProperty('disabled', false));
    await userEvent.selectOptions(screen.getByTestId('filter-key'), KEYS.prod);
    await waitFor(() => expect(screen.getByTestId('card-cost-value').textContent).toMatch(/1,?250\.50 PKR/));
    expect(lastQuery(bridge.callsOf('api.summary'))).toMatchObject({ key_id: KEYS.prod });
  });

  it("never shows the last key's cost under the key chosen now, even while its answer is on its way", async () => {
    const pending = new Map<string, () => void>();
    serve({
      summary: (args) => {
        const key = args.query.key_id;
        const answer = { ...SUMMARY, ...(key ? { total_cost_pkr: key === KEYS.prod ? 1250.5 : 7 } : {}) };
        if (key !== KEYS.staging) return answer;
        return new Promise((resolve) => pending.set(key, () => resolve(answer)));
      },
    });
    openAnalytics({ key: KEYS.prod });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('card-cost-value').textContent).toMatch(/1,?250\.50 PKR/));

    act(() => useRoute.getState().setParams({ key: KEYS.staging }));
    await waitFor(() => expect(pending.has(KEYS.staging)).toBe(true));
    // The other cards keep their figures, dimmed; the cost is the old key's, so it is unknown meanwhile.
    expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('loading');
    expect(screen.getByTestId('card-requests-value').textContent).toMatch(/1.?234/);
    expect(screen.getByTestId('card-cost-value').textContent).toBe('–');

    act(() => pending.get(KEYS.staging)!());
    await waitFor(() => expect(screen.getByTestId('card-cost-value').textContent).toBe('7.00 PKR'));
  });

  it('a 503 shows "–" and an unavailable note, and raises the shell banner', async () => {
    serve({
      summary: () => {
        throw new Refusal(503, 'analytics backend unavailable');
      },
      timeseries: () => {
        throw new Refusal(503, 'analytics backend unavailable');
      },
      top: () => {
        throw new Refusal(503, 'analytics backend unavailable');
      },
      dashboard: () => {
        throw new Refusal(503, 'analytics backend unavailable');
      },
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    expect(await screen.findByTestId('summary-unavailable')).toBeTruthy();
    expect(await screen.findByTestId('series-unavailable')).toBeTruthy();
    expect(await screen.findByTestId('top-unavailable')).toBeTruthy();
    expect(screen.getByTestId('card-requests-value').textContent).toContain('–');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(useAnalyticsHealth.getState().unavailable).toBe('analytics backend unavailable');
  });

  it('another error is shown where it happened, with a way to try again', async () => {
    let fail = true;
    serve({
      summary: () => {
        if (fail) throw new Refusal(404, 'key not found');
        return SUMMARY;
      },
    });
    openAnalytics({ key: KEYS.revoked });
    render(<AnalyticsScreen />);
    const error = await screen.findByTestId('summary-error');
    expect(error.textContent).toContain('Could not load the summary: key not found (404)');
    expect(screen.getByTestId('card-requests-value').textContent).toContain('–');
    fail = false;
    await userEvent.click(within(error).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(screen.getByTestId('card-requests-value').textContent).toMatch(/1.?234/));
  });

  it('drops an answer to a query that has since been replaced', async () => {
    const pending: (() => void)[] = [];
    serve({
      summary: (args) =>
        new Promise((resolve) =>
          pending.push(() => resolve({ ...SUMMARY, total_requests: args.query.time_range === '7d' ? 7 : 24 })),
        ),
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(pending).toHaveLength(1));
    await userEvent.selectOptions(screen.getByTestId('filter-range'), '7d');
    await waitFor(() => expect(pending).toHaveLength(2));
    pending[1]!(); // the 7d answer first
    pending[0]!(); // then the stale 24h one
    expect(await cardValue('requests')).toBe('7');
  });
});

describe('filters in the route', () => {
  it('each filter change is written to the route parameters and asked of the server', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('filter-project')).toHaveProperty('disabled', false));

    await userEvent.selectOptions(screen.getByTestId('filter-range'), '30d');
    await userEvent.selectOptions(screen.getByTestId('filter-project'), PROJECTS.support);
    await userEvent.selectOptions(screen.getByTestId('filter-key'), KEYS.prod);
    await userEvent.selectOptions(screen.getByTestId('filter-model'), 'openai/gpt-4o-mini');
    await userEvent.selectOptions(screen.getByTestId('series-metric'), 'ttft');
    await userEvent.selectOptions(screen.getByTestId('series-interval'), '1h');
    await userEvent.selectOptions(screen.getByTestId('series-group-by'), 'model');

    expect(useRoute.getState().params).toEqual({
      range: '30d',
      project: PROJECTS.support,
      key: KEYS.prod,
      model: 'openai/gpt-4o-mini',
      metric: 'ttft',
      interval: '1h',
      group: 'model',
    });
    expect(window.location.hash).toContain('#/analytics?');
    expect(window.location.hash).toContain('range=30d');
    expect(window.location.hash).toContain(`key=${KEYS.prod}`);
    await waitFor(() =>
      expect(lastQuery(bridge.callsOf('api.timeseries'))).toEqual({
        time_range: '30d',
        project_id: PROJECTS.support,
        key_id: KEYS.prod,
        model_alias: 'openai/gpt-4o-mini',
        metric: 'ttft',
        interval: '1h',
        group_by: 'model',
      }),
    );
    expect(lastQuery(bridge.callsOf('api.summary'))).toEqual({
      time_range: '30d',
      project_id: PROJECTS.support,
      key_id: KEYS.prod,
      model_alias: 'openai/gpt-4o-mini',
    });

    // Back to "all": the parameter goes away rather than holding an empty value.
    await userEvent.selectOptions(screen.getByTestId('filter-model'), '');
    expect(useRoute.getState().params).not.toHaveProperty('model');
  });

  it('a view is restored from the route parameters', async () => {
    serve({});
    openAnalytics({
      range: '7d',
      project: PROJECTS.search,
      key: KEYS.staging,
      model: 'anthropic/claude-haiku',
      metric: 'latency',
      interval: '6h',
      group: 'key',
    });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(value(screen.getByTestId('filter-key'))).toBe(KEYS.staging));
    expect(value(screen.getByTestId('filter-range'))).toBe('7d');
    expect(value(screen.getByTestId('filter-project'))).toBe(PROJECTS.search);
    expect(value(screen.getByTestId('filter-model'))).toBe('anthropic/claude-haiku');
    expect(value(screen.getByTestId('series-metric'))).toBe('latency');
    expect(value(screen.getByTestId('series-interval'))).toBe('6h');
    expect(value(screen.getByTestId('series-group-by'))).toBe('key');
    expect(bridge.callsOf('api.timeseries')[0]!.query).toEqual({
      time_range: '7d',
      project_id: PROJECTS.search,
      key_id: KEYS.staging,
      model_alias: 'anthropic/claude-haiku',
      metric: 'latency',
      interval: '6h',
      group_by: 'key',
    });
  });

  it('a custom range is checked before it is asked for, and kept once valid', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    await userEvent.selectOptions(screen.getByTestId('filter-range'), 'custom');
    const input = screen.getByLabelText('Custom range');
    expect(document.activeElement).toBe(input);

    await userEvent.clear(input);
    await userEvent.type(input, '401d{Enter}');
    expect((await screen.findByTestId('field-error')).textContent).toContain('at most 400 days (400d)');
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(useRoute.getState().params).not.toHaveProperty('range');

    await userEvent.clear(input);
    await userEvent.type(input, '45d');
    await userEvent.click(screen.getByRole('button', { name: 'Apply' }));
    expect(useRoute.getState().params).toMatchObject({ range: '45d' });
    await waitFor(() => expect(lastQuery(bridge.callsOf('api.summary'))).toMatchObject({ time_range: '45d' }));
    expect(screen.queryByTestId('field-error')).toBeNull();
  });

  it('the range select keeps focus as it changes, and follows a range set from elsewhere (back, forward)', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    const range = screen.getByTestId('filter-range');
    range.focus();
    await userEvent.selectOptions(range, '7d');
    expect(document.activeElement).toBe(range);

    act(() => useRoute.setState({ params: { range: '45d' } }));
    expect(value(screen.getByTestId('filter-range'))).toBe('custom');
    expect(value(screen.getByLabelText('Custom range'))).toBe('45d');
    act(() => useRoute.setState({ params: { range: '90d' } }));
    expect(value(screen.getByTestId('filter-range'))).toBe('90d');
    expect(screen.queryByLabelText('Custom range')).toBeNull();
  });

  it('a range in the address that does not parse falls back to 24h and says why', async () => {
    serve({});
    openAnalytics({ range: '2w' });
    render(<AnalyticsScreen />);
    expect((await screen.findByTestId('field-error')).textContent).toContain('s, m, h or d');
    expect(value(screen.getByLabelText('Custom range'))).toBe('2w');
    await waitFor(() => expect(bridge.callsOf('api.summary')[0]!.query).toMatchObject({ time_range: '24h' }));
  });

  it('keys are offered for the chosen project, and a key of another project is cleared', async () => {
    serve({});
    openAnalytics({ key: KEYS.prod });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(value(screen.getByTestId('filter-key'))).toBe(KEYS.prod));
    await userEvent.selectOptions(screen.getByTestId('filter-project'), PROJECTS.search);
    expect(useRoute.getState().params).toEqual({ project: PROJECTS.search });
    const options = within(screen.getByTestId('filter-key'))
      .getAllByRole('option')
      .map((o) => o.textContent);
    expect(options).toEqual(['All keys of the project', 'Staging (svc_stag)']);
  });

  it('a key of the newly chosen project is kept', async () => {
    serve({});
    openAnalytics({ key: KEYS.staging });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(value(screen.getByTestId('filter-key'))).toBe(KEYS.staging));
    await userEvent.selectOptions(screen.getByTestId('filter-project'), PROJECTS.search);
    expect(useRoute.getState().params).toEqual({ project: PROJECTS.search, key: KEYS.staging });
  });

  it('values from the address that are not among the choices stay selected, named as unknown', async () => {
    serve({});
    openAnalytics({ project: PROJECTS.gone, key: KEYS.revoked, model: 'mistral/large' });
    render(<AnalyticsScreen />);
    const selected = (testId: string) =>
      within(screen.getByTestId(testId))
        .getAllByRole<HTMLOptionElement>('option')
        .find((o) => o.selected)?.textContent;
    await waitFor(() => expect(selected('filter-project')).toBe('Unknown project (99999999…)'));
    expect(selected('filter-key')).toBe('Unknown key (cccccccc…)');
    expect(selected('filter-model')).toBe('Unknown model (mistral/large)');
    expect(value(screen.getByTestId('filter-key'))).toBe(KEYS.revoked);
  });

  it('a key of another project than the one chosen is shown as such, not as "all keys"', async () => {
    serve({});
    openAnalytics({ project: PROJECTS.search, key: KEYS.prod });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('filter-key')).toHaveProperty('disabled', false));
    expect(value(screen.getByTestId('filter-key'))).toBe(KEYS.prod);
    expect(within(screen.getByTestId('filter-key')).getByRole('option', { selected: true }).textContent).toBe(
      'Production backend (another project)',
    );
  });

  it('intervals far too fine for the range cannot be chosen', async () => {
    serve({});
    openAnalytics({ range: '400d', interval: '1m' });
    render(<AnalyticsScreen />);
    const interval = screen.getByTestId('series-interval');
    // The too-fine interval from the address falls back to the server's default.
    expect(value(interval)).toBe('');
    expect(within(interval).getByRole('option', { name: /^1m/ })).toHaveProperty('disabled', true);
    expect(within(interval).getByRole('option', { name: '1h' })).toHaveProperty('disabled', false);
    await waitFor(() => expect(bridge.callsOf('api.timeseries')[0]!.query).not.toHaveProperty('interval'));
  });
});

describe('the chart', () => {
  it('names series by project names, "(no project)" for rows without one, "Unknown project (id…)" when unknown', async () => {
    const now = Date.now();
    serve({
      timeseries: (args) => ({
        metric: 'volume',
        interval: '1h',
        group_by: args.query.group_by ?? null,
        time_range: '24h',
        data: [
          { bucket: bucket(now - 3 * HOUR), group: PROJECTS.support, value: 4 },
          { bucket: bucket(now - 3 * HOUR), group: PROJECTS.gone, value: 1 },
          { bucket: bucket(now - 2 * HOUR), group: null, value: 2 },
          { bucket: bucket(now - HOUR), group: PROJECTS.search, value: 3 },
        ],
      }),
    });
    openAnalytics({ group: 'project' });
    render(<AnalyticsScreen />);
    await waitFor(() =>
      expect(screen.getAllByTestId('series-name').map((li) => li.textContent)).toEqual([
        'Document Search',
        'Support Bot',
        'Unknown project (99999999…)',
        '(no project)',
      ]),
    );
    expect(screen.getByRole('figure', { name: 'Requests per 1h by project' })).toBeTruthy();
  });

  it('names series by key names, and by route id for models', async () => {
    const now = Date.now();
    serve({
      timeseries: (args) => ({
        metric: 'latency',
        interval: '1h',
        group_by: args.query.group_by ?? null,
        time_range: '24h',
        data:
          args.query.group_by === 'key'
            ? [
                { bucket: bucket(now - HOUR), group: KEYS.prod, value: 800 },
                { bucket: bucket(now - HOUR), group: KEYS.revoked, value: 700 },
              ]
            : [{ bucket: bucket(now - HOUR), group: 'openai/gpt-4o-mini', value: 500 }],
      }),
    });
    openAnalytics({ group: 'key', metric: 'latency' });
    render(<AnalyticsScreen />);
    await waitFor(() =>
      expect(screen.getAllByTestId('series-name').map((li) => li.textContent)).toEqual([
        'Production backend',
        'Unknown key (cccccccc…)',
      ]),
    );
    await userEvent.selectOptions(screen.getByTestId('series-group-by'), 'model');
    await waitFor(() =>
      expect(screen.getAllByTestId('series-name').map((li) => li.textContent)).toEqual(['openai/gpt-4o-mini']),
    );
  });

  it('a gap in a mean breaks its line; a gap in a count is drawn as the zero it is', async () => {
    const now = Date.now();
    const data = [
      { bucket: bucket(now - 6 * HOUR), group: null, value: 300 },
      { bucket: bucket(now - 5 * HOUR), group: null, value: 320 },
      { bucket: bucket(now - 2 * HOUR), group: null, value: 310 },
      { bucket: bucket(now - HOUR), group: null, value: 290 },
    ];
    serve({
      timeseries: (args) => ({
        metric: args.query.metric ?? 'volume',
        interval: '1h',
        group_by: null,
        time_range: '24h',
        data,
      }),
    });
    const segments = () => {
      const path = screen.getByTestId('series-chart').querySelector('.recharts-line-curve');
      return (path?.getAttribute('d') ?? '').match(/M/g)?.length ?? 0;
    };
    openAnalytics({ metric: 'ttft' });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(segments()).toBe(2));

    await userEvent.selectOptions(screen.getByTestId('series-metric'), 'volume');
    await waitFor(() => expect(segments()).toBe(1));
  });

  it('ungrouped, the one series is named for the metric; the server chosen interval shows as "Auto"', async () => {
    serve({});
    openAnalytics({ metric: 'token_usage' });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getAllByTestId('series-name').map((li) => li.textContent)).toEqual(['Tokens']));
    expect(within(screen.getByTestId('series-interval')).getByRole('option', { name: 'Auto (15m)' })).toBeTruthy();
    expect(screen.getByTestId('series-empty').textContent).toContain('No values in this window.');
  });

  it('grouped with no rows at all says so instead of drawing an empty legend', async () => {
    serve({});
    openAnalytics({ group: 'model' });
    render(<AnalyticsScreen />);
    // The chart's own words (the top panel, empty too, may say the same beside it).
    const chart = screen.getByRole('region', { name: 'Over time' });
    expect(await within(chart).findByText('No requests in this window.')).toBeTruthy();
    expect(screen.queryByTestId('series-legend')).toBeNull();
  });

  it('more buckets than pixels: points are combined, never more than the plot is wide, and it says so', async () => {
    const now = Date.now();
    serve({
      timeseries: () => ({
        metric: 'volume',
        interval: '1m',
        group_by: null,
        time_range: '24h',
        data: Array.from({ length: 1440 }, (_, i) => ({
          bucket: bucket(now - i * 60_000),
          group: null,
          value: i % 5,
        })),
      }),
    });
    openAnalytics({ interval: '1m' });
    render(<AnalyticsScreen />);
    const note = await screen.findByTestId('combined-note');
    // 864 px less the value axis (64) and margins (16): 784 pixels for 1,441 or 1,442 buckets.
    expect(note.textContent).toMatch(/1,?44[12] buckets of 1m are more than the chart's 784 pixels/);
    expect(note.textContent).toContain('each point combines 2 neighbouring buckets');
    const points = Number(screen.getByTestId('series-chart').getAttribute('data-points'));
    expect(points).toBeGreaterThan(0);
    expect(points).toBeLessThanOrEqual(784);
  });

  it('a chart as wide as its buckets combines nothing', async () => {
    serve({});
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('series-chart').getAttribute('data-state')).toBe('ready'));
    await waitFor(() =>
      expect(Number(screen.getByTestId('series-chart').getAttribute('data-points'))).toBeGreaterThan(90),
    );
    expect(screen.queryByTestId('combined-note')).toBeNull();
  });

  it('day-wide buckets are UTC days, and the caption says so', async () => {
    serve({
      timeseries: () => ({ metric: 'volume', interval: '1d', group_by: null, time_range: '30d', data: [] }),
    });
    openAnalytics({ range: '30d', interval: '1d' });
    render(<AnalyticsScreen />);
    const chart = await screen.findByRole('figure', { name: 'Requests per 1d' });
    expect(chart.querySelector('figcaption')!.textContent).toContain('Dates are UTC days');
  });

  it('an error loading the chart is shown at the chart, the cards still show their figures', async () => {
    serve({
      timeseries: () => {
        throw new Refusal(400, 'interval must be a whole number followed by s, m, h or d, for example 24h');
      },
    });
    openAnalytics();
    render(<AnalyticsScreen />);
    expect((await screen.findByTestId('series-error')).textContent).toContain(
      'Could not load the chart: interval must be',
    );
    expect(await cardValue('latency')).toBe('812 ms');
  });
});
