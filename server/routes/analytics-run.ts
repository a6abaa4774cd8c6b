import type { FastifyInstance, FastifyReply } from 'fastify';
import { AnalyticsUnavailable } from '../analytics/pool.js';
import type { AnalyticsQuery, AnalyticsResult } from '../analytics/query-types.js';
import { ApiError } from '../http-errors.js';

/**
 * Runs a telemetry query in the analytics pool; dropped while it waits if the caller
 * disconnects. The store unreachable, or the pool unable to answer, is a 503.
 */
export async function runAnalytics<Q extends AnalyticsQuery>(
  app: FastifyInstance,
  query: Q,
  reply: FastifyReply,
): Promise<AnalyticsResult<Q>> {
  if (!app.telemetry.reachable()) throw unavailable();
  const gone = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) gone.abort();
  };
  reply.raw.once('close', onClose);
  try {
    return await app.analytics.run(query, gone.signal);
  } catch (error) {
    if (!(error instanceof AnalyticsUnavailable)) throw error;
    app.log.warn({ err: error }, 'analytics query not answered');
    throw unavailable();
  } finally {
    reply.raw.removeListener('close', onClose);
  }
}

const unavailable = () => new ApiError(503, { error: 'analytics backend unavailable' });

/** The 503 `runAnalytics` throws, for routes whose other figures still answer without telemetry. */
export function isAnalyticsUnavailable(error: unknown): boolean {
  return error instanceof ApiError && error.statusCode === 503;
}
