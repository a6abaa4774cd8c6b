import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { verifyActivity } from '../domain/activity-chain.js';
import { badRequest } from '../http-errors.js';
import { authOf } from '../plugins/session.js';
import {
  ActivityEntries,
  ActivityEntriesQuery,
  ActivityPage,
  ActivityQuery,
  ActivityVerification,
  ActivityVerifyQuery,
  type ActivityChange,
} from '../schemas/activity.js';
import { PAGE_SIZE_CLAMP, errors, isoTime, isoTimeOrNull } from '../schemas/common.js';
import type { ActivityFilter } from '../stores/control/activity.js';

/**
 * Events one verification request recomputes at most: a fifth of a second or so of hashing on a
 * busy machine (about 10 µs an event), so other requests are not kept waiting for long.
 */
const VERIFY_CLAMP = 20_000;

function filterOf(query: ActivityEntriesQuery): ActivityFilter {
  const filter: ActivityFilter = {};
  if (query.action) filter.action = query.action;
  if (query.actor) filter.actorEmail = query.actor.trim();
  if (query.target) filter.targetPrefix = query.target;
  if (query.from) filter.from = Date.parse(query.from);
  if (query.to) filter.to = Date.parse(query.to);
  if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) {
    throw badRequest('the time range ends before it starts: "to" must be later than "from"', { field: 'to' });
  }
  return filter;
}

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
      const rows = await app.control.activity.list(authOf(request).orgId, limit, offset);
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

  // Beyond the contract: the trail filtered, with each event's place, change and hash.
  app.get(
    '/activity/entries',
    {
      schema: {
        tags: ['activity'],
        querystring: ActivityEntriesQuery,
        response: { 200: ActivityEntries, ...errors(400, 401, 422) },
      },
    },
    async (request) => {
      const { orgId } = authOf(request);
      const limit = Math.min(request.query.limit ?? 50, PAGE_SIZE_CLAMP);
      const before = request.query.before ?? null;
      const filter = filterOf(request.query);
      const rows = await app.control.activity.entries(orgId, filter, before, limit);
      const last = rows.at(-1);
      return {
        entries: rows.map((row) => ({
          position: row.seq,
          actor: row.actor,
          action: row.action,
          target: row.target,
          timestamp: isoTime(row.created_at),
          source_ip: row.source_ip,
          change: row.change === null ? null : (JSON.parse(row.change) as ActivityChange),
          hash: row.hash,
        })),
        limit,
        total: before === null ? await app.control.activity.count(orgId, filter) : null,
        next_before: rows.length === limit && last && last.seq > 1 ? last.seq : null,
      };
    },
  );

  // Beyond the contract: recomputes a stretch of the organisation's hash chain. The console
  // asks stretch after stretch (`after` = the last place checked), so the server never hashes
  // for long at once and the console shows progress.
  app.get(
    '/activity/verify',
    {
      schema: {
        tags: ['activity'],
        querystring: ActivityVerifyQuery,
        response: { 200: ActivityVerification, ...errors(400, 401, 422) },
      },
    },
    async (request) => {
      const { orgId } = authOf(request);
      const after = request.query.after ?? 0;
      const total = await app.control.activity.lastPlace(orgId);
      if (after > total) {
        throw badRequest(`the trail has ${total} events: "after" must be at most ${total}`, { field: 'after' });
      }
      const limit = Math.min(request.query.limit ?? VERIFY_CLAMP, VERIFY_CLAMP);
      const check = await verifyActivity(app.control, orgId, after, limit);
      return {
        checked: check.checked,
        last_position: check.lastPosition,
        total,
        done: check.done,
        head_hash: check.headHash,
        broken: check.broken && {
          position: check.broken.position,
          fault: check.broken.fault,
          timestamp: isoTimeOrNull(check.broken.at),
          action: check.broken.action,
          message: check.broken.message,
        },
      };
    },
  );
}
