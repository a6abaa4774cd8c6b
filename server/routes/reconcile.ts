import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_DAYS, parseKinds, parseUtcDay, reconcile, reconcileDays } from '../analytics/reconcile.js';
import { badRequest, notFound } from '../http-errors.js';
import { parseId } from '../ids.js';
import { authOf } from '../plugins/session.js';
import { errors } from '../schemas/common.js';
import { Reconcile, ReconcileQuery } from '../schemas/reconcile.js';
import { runAnalytics } from './analytics-run.js';

/**
 * Beyond the contract: `GET /reconcile`, the check behind the Reconcile screen and
 * `admin reconcile`. Any member may run it, as any member may read the analytics; a project
 * of another organisation, unknown or malformed answers 404. Each day is its own analytics
 * job, so a month's check never holds a worker past its deadline; one call reads at most
 * MAX_DAYS days, and `kinds` lets the console check a longer window a day per call, the
 * lifetime spend once.
 */
export async function reconcileRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.get(
    '/reconcile',
    {
      schema: {
        tags: ['analytics'],
        querystring: ReconcileQuery,
        response: { 200: Reconcile, ...errors(400, 401, 404, 422, 503) },
      },
    },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const { from, to, days, project_id } = request.query;
      const kinds = parseKinds(request.query.kinds);
      if ('error' in kinds) throw badRequest(kinds.error, { field: 'kinds' });
      let projectId: string | null = null;
      if (project_id !== undefined) {
        projectId = parseId(project_id);
        if (!projectId || !(await control.organizations.project(orgId, projectId))) {
          throw notFound('project not found', { field: 'project_id' });
        }
      }
      if (from !== undefined && days !== undefined)
        throw badRequest('give from and to, or days, not both', { field: 'days' });
      const day = (text: string | undefined, field: 'from' | 'to') => {
        if (text === undefined) return undefined;
        const ms = parseUtcDay(text);
        if (ms === null) throw badRequest(`${field} is not a day of the calendar`, { field });
        return ms;
      };
      const now = config.now();
      const window = reconcileDays({ from: day(from, 'from'), to: day(to, 'to'), days }, now, MAX_DAYS);
      if ('error' in window) throw badRequest(window.error, { field: window.field });
      return reconcile(
        {
          ledger: () => control.spendLedger(orgId),
          day: (query) => runAnalytics(app, { kind: 'reconcile_day', ...query }, reply),
          spend: (query) => runAnalytics(app, { kind: 'reconcile_spend', ...query }, reply),
        },
        { orgId, projectId, days: window.days, now, kinds: kinds.kinds },
      );
    },
  );
}
