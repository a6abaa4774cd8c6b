import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../plugins/session.js';
import { ActivityPage, ActivityQuery } from '../schemas/activity.js';
import { PAGE_SIZE_CLAMP, errors, isoTime } from '../schemas/common.js';

export async function activityRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/activity',
    {
      schema: { tags: ['activity'], querystring: ActivityQuery, response: { 200: ActivityPage, ...errors(401, 422) } },
    },
    async (request) => {
      const limit = Math.min(request.query.limit ?? 50, PAGE_SIZE_CLAMP);
      const offset = request.query.offset ?? 0;
      const rows = app.control.activity.list(authOf(request).orgId, limit, offset);
      return {
        events: rows.map((row) => ({
          actor: row.actor,
          action: row.action,
          target: row.target,
          timestamp: isoTime(row.created_at),
          source_ip: row.source_ip,
        })),
        limit,
        offset,
      };
    },
  );
}
