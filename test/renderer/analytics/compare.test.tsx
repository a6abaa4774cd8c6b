import { render, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { bridge } from '../fake-bridge.js';
import { KEYS, fakeWidth, openAnalytics, serve } from './fixtures.js';

const figures = (requests: number, latency: number | null, ttft: number | null, cost: number) => ({
  total_requests: requests,
  avg_e2e_latency_ms: latency,
  avg_ttft_ms: ttft,
  avg_tokens_per_sec: null,
  total_token_usage: requests * 10,
  cost_micro: cost,
});

beforeEach(() => {
  fakeWidth(864);
});

describe('the cards beside the window before', () => {
  it('say how each figure moved, show the spend of any scope, and nothing where a figure is unknown', async () => {
    serve({});
    bridge.on('api.compare', ({ query }) => ({
      time_range: query.time_range ?? '24h',
      current: figures(1250, 900, null, 12_500_000),
      previous: figures(1000, 1000, 300, 10_000_000),
    }));
    openAnalytics();
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('card-requests-change').textContent).toBe('+25 % vs before'));
    expect(screen.getByTestId('card-latency-change').textContent).toBe('−10 % vs before');
    expect(screen.getByTestId('card-tokens-change').textContent).toBe('+25 % vs before');
    expect(screen.queryByTestId('card-ttft-change')).toBeNull();
    expect(screen.queryByTestId('card-tok-s-change')).toBeNull();
    expect(screen.getByTestId('card-spend-value').textContent).toBe('12.50 PKR');
    expect(screen.getByTestId('card-spend-change').textContent).toBe('+25 % vs before');
    expect(bridge.callsOf('api.compare').at(-1)?.query).toEqual({ time_range: '24h' });
  });

  it('shows no comparison, and no spend card, on a control plane without it', async () => {
    serve({});
    openAnalytics({ key: KEYS.prod });
    render(<AnalyticsScreen />);
    await waitFor(() => expect(screen.getByTestId('summary-cards').getAttribute('data-state')).toBe('ready'));
    expect(screen.queryByTestId('card-requests-change')).toBeNull();
    expect(screen.queryByTestId('card-spend')).toBeNull();
  });
});
