import type { FastifyInstance } from 'fastify';
import { retentionAt } from '../domain/retention.js';

/** The organisation's retention as its reads are bounded by it now: its days, and the horizon. */
export async function retentionOf(
  app: FastifyInstance,
  orgId: string,
): Promise<{ days: number | null; horizon: number | null }> {
  const own = await app.control.organizations.retentionDays(orgId);
  return retentionAt(app.config.retentionDays, own, app.config.now());
}
