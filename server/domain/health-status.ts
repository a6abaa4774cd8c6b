/**
 * A model's or provider's status over a stretch of traffic, from its own requests only: the
 * share of the dispatched requests the upstream side failed (5xx and upstream 429s; see
 * server/schemas/health.ts). One failure in two is down, one in twenty degraded; a stretch
 * where nothing was dispatched says nothing about the model, so it is "no traffic", not ok.
 * No minimum sample: a single failed request in a quiet five minutes reads as down, which is
 * what that caller saw.
 */

export type HealthStatus = 'ok' | 'degraded' | 'down' | 'no_traffic';

export const DEGRADED_ERROR_RATE = 0.05;
export const DOWN_ERROR_RATE = 0.5;

export function errorRate(dispatched: number, errors: number): number | null {
  return dispatched > 0 ? errors / dispatched : null;
}

export function healthStatus(dispatched: number, errors: number): HealthStatus {
  const rate = errorRate(dispatched, errors);
  if (rate === null) return 'no_traffic';
  if (rate >= DOWN_ERROR_RATE) return 'down';
  if (rate >= DEGRADED_ERROR_RATE) return 'degraded';
  return 'ok';
}
