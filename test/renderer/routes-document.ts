import type { CallResult } from '#contract';
import { bridge } from './fake-bridge.js';

/**
 * A routes document as GET /routes gives it, for the screens whose Target filter lists its
 * targets: two routes sharing one target (listed once), one target whose model holds a `/`.
 */

type RoutesView = CallResult<'api.routes'>;
type TargetView = RoutesView['routes'][number]['targets'][number];

const target = (provider: string, model: string): TargetView => ({
  provider,
  model,
  weight: 1,
  state: null,
  open_until: null,
  attempts_15m: 0,
  success_rate_15m: null,
  p95_ms_15m: null,
});

const PRICE = { input: 42, output: 168, cache_write: 42, cache_read: 21 };

export const ROUTES: RoutesView = {
  version: 3,
  applied_at: '2026-11-22T07:30:00.000Z',
  window_minutes: 15,
  figures_available: true,
  routes: [
    {
      id: 'openai/gpt-4o-mini',
      kind: 'chat',
      active: true,
      strategy: 'fallback',
      price: PRICE,
      targets: [target('openai', 'gpt-4o-mini-2024-07-18'), target('openrouter', 'openai/gpt-4o-mini')],
    },
    {
      id: 'svc/auto',
      kind: 'chat',
      active: true,
      strategy: 'loadbalance',
      price: PRICE,
      targets: [target('openai', 'gpt-4o-mini-2024-07-18'), target('anthropic', 'claude-haiku')],
    },
  ],
};

/** The document's targets as the filter offers them: once each, by name. */
export const TARGETS = ['anthropic/claude-haiku', 'openai/gpt-4o-mini-2024-07-18', 'openrouter/openai/gpt-4o-mini'];

export function serveRoutes(routes: RoutesView = ROUTES): void {
  bridge.on('api.routes', () => routes);
}
