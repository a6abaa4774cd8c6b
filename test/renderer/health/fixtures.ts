import type { Health } from '../../../renderer/src/screens/health/health-store.js';

/** The hour ending at `to`: one provider with one model, `requests` requests, all answered. */
export function healthAnswer(requests: number, to: string): Health {
  const figures = {
    requests,
    refused: 0,
    dispatched: requests,
    errors: 0,
    error_rate: 0,
    upstream_429: 0,
    p95_latency_ms: 800,
    p95_ttft_ms: 200,
    last_success_at: to,
    status: 'ok' as const,
    strip: { requests: [requests], errors: [0], upstream_429: [0], status: ['ok' as const] },
  };
  return {
    window: '1h',
    from: new Date(Date.parse(to) - 3_600_000).toISOString(),
    to,
    cell_minutes: 5,
    percentile_relative_error: 0.01,
    thresholds: { degraded_error_rate: 0.05, down_error_rate: 0.5 },
    listed_since: new Date(Date.parse(to) - 7 * 86_400_000).toISOString(),
    providers: [{ provider: 'openai', ...figures, models: [{ model: 'openai/gpt-4o-mini', ...figures }] }],
  };
}
