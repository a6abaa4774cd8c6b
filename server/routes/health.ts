import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { HealthFigures } from '../analytics/health.js';
import { HEALTH_CELL_MS } from '../analytics/health-reads.js';
import { DEGRADED_ERROR_RATE, DOWN_ERROR_RATE, errorRate, healthStatus } from '../domain/health-status.js';
import { modelsOf } from '../domain/route-models.js';
import { badRequest } from '../http-errors.js';
import { authOf } from '../plugins/session.js';
import { errors, isoTime, isoTimeOrNull } from '../schemas/common.js';
import { Health, HEALTH_WINDOWS, HealthQuery, type HealthWindow } from '../schemas/health.js';
import { RELATIVE_ERROR } from '../stores/telemetry/latency-sketch.js';
import { runAnalytics } from './analytics-run.js';
import { apiOf } from './api-param.js';
import { targetOf } from './target-param.js';

/**
 * Beyond the contract: provider and model health (schemas/health.ts). Any member of the
 * organisation may read it, as the analytics; the model catalogue gives each model's provider.
 * With `target`, only the requests that route target served count, with `api` only those that
 * came in on that API of the gateway's (analytics/health-rows.ts).
 */

const CELLS: Record<HealthWindow, number> = { '1h': 12, '24h': 288 };
/** A model silent for the whole window is still listed when it had traffic this recently. */
const LISTED_FOR_MS = 7 * 86_400_000;

/**
 * The window's last instant (included): now, or for a window in the past the end of the cell
 * holding the instant before `to`, so the window stays whole cells and nothing after it is read.
 */
function windowEnd(to: string | undefined, now: number): number {
  if (to === undefined) return now;
  // The schema's date-time admits forms Date.parse cannot read (an offset without minutes, a leap second).
  const asked = Date.parse(to);
  if (!Number.isFinite(asked)) throw badRequest('to is not a time this server can read', { field: 'to' });
  const before = asked - 1;
  return Math.min(now, before - (before % HEALTH_CELL_MS) + HEALTH_CELL_MS - 1);
}

function figuresJson(figures: HealthFigures) {
  const { totals, cells } = figures;
  const dispatched = totals.requests - totals.refused;
  return {
    requests: totals.requests,
    refused: totals.refused,
    dispatched,
    errors: totals.errors,
    error_rate: errorRate(dispatched, totals.errors),
    upstream_429: totals.upstream429,
    p95_latency_ms: figures.p95LatencyMs,
    p95_ttft_ms: figures.p95TtftMs,
    last_success_at: isoTimeOrNull(figures.lastOk),
    status: healthStatus(dispatched, totals.errors),
    strip: {
      requests: cells.requests,
      errors: cells.errors,
      upstream_429: cells.upstream429,
      status: cells.requests.map((requests, i) => healthStatus(requests - cells.refused[i]!, cells.errors[i]!)),
    },
  };
}

export async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.get(
    '/analytics/health',
    {
      schema: { tags: ['analytics'], querystring: HealthQuery, response: { 200: Health, ...errors(400, 401, 503) } },
    },
    async (request, reply): Promise<Health> => {
      const window = request.query.window ?? '1h';
      if (!(HEALTH_WINDOWS as readonly string[]).includes(window)) {
        throw badRequest(`window must be one of ${HEALTH_WINDOWS.join(', ')}`, { field: 'window' });
      }
      const servedBy = targetOf(request.query.target);
      const api = apiOf(request.query.api);
      const cells = CELLS[window as HealthWindow];
      const { orgId } = authOf(request);
      const now = config.now();
      const end = windowEnd(request.query.to, now);
      const from = end - (end % HEALTH_CELL_MS) - (cells - 1) * HEALTH_CELL_MS;
      const models = modelsOf((await control.routes.current()).document);
      const providers = Object.fromEntries(models.map((model) => [model.id, model.provider]));
      const listedSince = end - LISTED_FOR_MS;
      const found = await runAnalytics(
        app,
        {
          kind: 'health',
          orgId,
          from,
          cells,
          to: end,
          listedSince,
          providers,
          ...(servedBy ? { servedBy } : {}),
          ...(api ? { api } : {}),
        },
        reply,
      );
      return {
        window,
        from: isoTime(from),
        to: isoTime(end),
        cell_minutes: HEALTH_CELL_MS / 60_000,
        percentile_relative_error: RELATIVE_ERROR,
        thresholds: { degraded_error_rate: DEGRADED_ERROR_RATE, down_error_rate: DOWN_ERROR_RATE },
        listed_since: isoTime(listedSince),
        providers: found.map((provider) => ({
          provider: provider.provider,
          ...figuresJson(provider),
          models: provider.models.map((model) => ({ model: model.model, ...figuresJson(model) })),
        })),
      };
    },
  );
}
