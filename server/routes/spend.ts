import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { BurnResult } from '../analytics/query-types.js';
import { BURN_DAYS, burnDays, burnOf, forecastOf, urgency, type Burn, type Forecast } from '../domain/forecast.js';
import { authOf } from '../plugins/session.js';
import { PAGE_SIZE_CLAMP, errors } from '../schemas/common.js';
import * as schema from '../schemas/spend.js';
import type { KeyRow } from '../stores/control/keys.js';
import { isAnalyticsUnavailable, runAnalytics } from './analytics-run.js';
import { retentionOf } from './retention-horizon.js';

const iso = (ms: number) => new Date(ms).toISOString();

export async function spendRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.get(
    '/analytics/spend',
    {
      schema: {
        tags: ['analytics'],
        querystring: schema.SpendQuery,
        response: { 200: schema.SpendReport, ...errors(401, 422) },
      },
    },
    async (request, reply): Promise<schema.SpendReport> => {
      const { orgId } = authOf(request);
      const now = config.now();
      const days = burnDays(now);
      const keys = await control.keys.list(orgId);
      // The settled figures still answer while the telemetry cannot be read; the rates are unknown.
      let burns: BurnResult | null = null;
      try {
        const { horizon } = await retentionOf(app, orgId);
        burns = await runAnalytics(app, { kind: 'burn', orgId, days, horizon: horizon ?? undefined }, reply);
      } catch (error) {
        if (!isAnalyticsUnavailable(error)) throw error;
      }
      const idle = days.map(() => 0);

      const rows = keys.map((key) => {
        const burn = burns && burnOf(burns.byKey[key.id] ?? idle);
        const remaining = key.credit_limit_micro === null ? null : key.credit_limit_micro - key.spent_micro;
        return { key, burn, forecast: burn && forecastOf(burn, remaining, now) };
      });
      const sort = request.query.sort ?? 'runs_out';
      rows.sort((a, b) => compare(sort, a, b));
      const limit = Math.min(request.query.limit ?? 50, PAGE_SIZE_CLAMP);
      const offset = request.query.offset ?? 0;

      const deposited = await control.organizations.budgetMicro(orgId);
      const allocated = keys.reduce((sum, key) => sum + (key.credit_limit_micro ?? 0), 0);
      const spent = await control.keys.spentMicro(orgId);
      const orgBurn = burns && burnOf(burns.organization);
      return {
        as_of: iso(now),
        window: { days: BURN_DAYS, from: iso(days[0]!.from - 1), to: iso(now) },
        organization: {
          deposited_micro: deposited,
          allocated_micro: allocated,
          headroom_micro: deposited - allocated,
          spent_micro: spent,
          remaining_micro: deposited - spent,
          burn: orgBurn && burnJson(orgBurn),
          forecast: orgBurn && forecastJson(forecastOf(orgBurn, deposited - spent, now)),
        },
        total: rows.length,
        limit,
        offset,
        keys: rows.slice(offset, offset + limit).map(({ key, burn, forecast }) => ({
          id: key.id,
          name: key.name,
          key_prefix: key.key_prefix,
          project_id: key.project_id,
          credit_limit_micro: key.credit_limit_micro,
          spent_micro: key.spent_micro,
          burn: burn && burnJson(burn),
          forecast: forecast && forecastJson(forecast),
        })),
      };
    },
  );
}

interface Row {
  key: Readonly<KeyRow>;
  burn: Burn | null;
  forecast: Forecast | null;
}

/** The order of `sort`, ties by name then id so that pages never overlap. */
function compare(sort: (typeof schema.SPEND_SORTS)[number], a: Row, b: Row): number {
  const byName = a.key.name.localeCompare(b.key.name) || (a.key.id < b.key.id ? -1 : a.key.id > b.key.id ? 1 : 0);
  switch (sort) {
    case 'runs_out': {
      const [ua, ub] = [urgency(a.forecast), urgency(b.forecast)];
      return ua[0] - ub[0] || ua[1] - ub[1] || byName;
    }
    case 'burn':
      return (b.burn?.total ?? -1) - (a.burn?.total ?? -1) || byName;
    case 'spent':
      return b.key.spent_micro - a.key.spent_micro || byName;
    case 'name':
      return byName;
  }
}

function burnJson(burn: Burn): schema.SpendKey['burn'] {
  return {
    daily_micro: burn.daily,
    window_micro: burn.total,
    rate_micro_per_day: burn.rate,
    rate_low_micro_per_day: burn.rateLow,
    rate_high_micro_per_day: burn.rateHigh,
  };
}

function forecastJson(forecast: Forecast): schema.Forecast {
  switch (forecast.kind) {
    case 'spent':
    case 'idle':
      return { kind: forecast.kind, remaining_micro: forecast.remaining };
    case 'beyond':
      return { kind: 'beyond', remaining_micro: forecast.remaining, days: forecast.days };
    case 'runs_out':
      return {
        kind: 'runs_out',
        remaining_micro: forecast.remaining,
        at: iso(forecast.at),
        earliest: iso(forecast.earliest),
        latest: forecast.latest === null ? null : iso(forecast.latest),
      };
    case 'projected':
      return {
        kind: 'projected',
        days: forecast.days,
        amount_micro: forecast.amount,
        low_micro: forecast.low,
        high_micro: forecast.high,
      };
  }
}
