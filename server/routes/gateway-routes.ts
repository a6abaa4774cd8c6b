import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { TargetFigures } from '../analytics/route-targets.js';
import { servedBy } from '../domain/attempts.js';
import type { BreakerView } from '../gateway/breakers.js';
import { authOf } from '../plugins/session.js';
import { errors, isoTime } from '../schemas/common.js';
import { RoutesView, type TargetState } from '../schemas/gateway-routes.js';
import { isAnalyticsUnavailable, runAnalytics } from './analytics-run.js';

/**
 * Beyond the contract: the routes document and each target's live state (schemas/gateway-routes.ts).
 * Named so beside the `routes/` folder it sits in: these are the gateway's routes.
 */

const WINDOW_MS = 15 * 60_000;
/** A target is failing when, of its last attempts (at least this many), fewer than half succeeded. */
const FAILING_MIN_ATTEMPTS = 3;
const FAILING_BELOW = 0.5;

/** The worst breaker each target has over every gateway: open before half open before closed. */
function worstBreakers(views: readonly BreakerView[]): Map<string, BreakerView> {
  const rank = { closed: 0, half_open: 1, open: 2 } as const;
  const worst = new Map<string, BreakerView>();
  for (const view of views) {
    const known = worst.get(view.target);
    const later = (known?.open_until ?? 0) < (view.open_until ?? 0);
    if (!known || rank[view.state] > rank[known.state] || (rank[view.state] === rank[known.state] && later)) {
      worst.set(view.target, view);
    }
  }
  return worst;
}

function stateOf(breaker: BreakerView | undefined, figures: TargetFigures | undefined): TargetState | null {
  if (breaker?.state === 'open' || breaker?.state === 'half_open') return breaker.state;
  if (!figures || figures.attempts === 0) return null;
  const recent = figures.recent;
  const succeeded = recent.filter(Boolean).length;
  if (recent.length >= FAILING_MIN_ATTEMPTS && succeeded / recent.length < FAILING_BELOW) return 'failing';
  return 'healthy';
}

export async function gatewayRoutesRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.get(
    '/routes',
    {
      schema: {
        tags: ['routes'],
        summary: 'The routes document, each target with its live state and last 15 minutes',
        response: { 200: RoutesView, ...errors(401) },
      },
    },
    async (request, reply): Promise<RoutesView> => {
      const { orgId } = authOf(request);
      const now = config.now();
      const stored = await control.routes.current();
      let figures: TargetFigures[] = [];
      let available = true;
      try {
        figures = await runAnalytics(app, { kind: 'route_targets', orgId, from: now - WINDOW_MS, to: now }, reply);
      } catch (error) {
        // The document and the breakers still answer without the request log.
        if (!isAnalyticsUnavailable(error)) throw error;
        available = false;
      }
      const byTarget = new Map(figures.map((one) => [one.target, one]));
      const breakers = worstBreakers(app.gatewayHealth.views());
      const routes = Object.entries(stored.document.routes)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, route]) => ({
          id,
          kind: route.kind,
          active: route.active,
          strategy: route.strategy,
          price: { ...route.price },
          targets: route.targets.map((target) => {
            const name = servedBy(target.provider, target.model);
            const breaker = breakers.get(name);
            const own = byTarget.get(name);
            const state = stateOf(breaker, own);
            return {
              provider: target.provider,
              model: target.model,
              weight: target.weight,
              state,
              open_until: state === 'open' ? (breaker?.open_until ?? null) : null,
              attempts_15m: own?.attempts ?? 0,
              success_rate_15m: own && own.attempts > 0 ? own.successes / own.attempts : null,
              p95_ms_15m: own?.p95Ms ?? null,
            };
          }),
        }));
      return {
        version: stored.version,
        applied_at: isoTime(stored.applied_at),
        window_minutes: WINDOW_MS / 60_000,
        figures_available: available,
        routes,
      };
    },
  );
}
