/**
 * How long request-log rows are kept: the platform's `--retention-days` and an organisation's own,
 * shorter, setting. Rows are deleted by whole hours, so that the oldest instant whose rows are all
 * kept (the horizon) is always the start of an hour: a window reaching past it is counted from the
 * hourly and daily rollups beyond it, which stay, and from rows after it.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The most days a retention may name: a hundred years, past any store's life. */
export const MAX_RETENTION_DAYS = 36_500;

/** The days an organisation's rows are kept: the shorter of the platform's and its own; null keeps every row. */
export function effectiveRetentionDays(platformDays: number | null, orgDays: number | null): number | null {
  if (platformDays === null) return orgDays;
  if (orgDays === null) return platformDays;
  return Math.min(platformDays, orgDays);
}

/** The start of the oldest hour whose rows are all kept at `now` (epoch ms); null when every row is. */
export function retentionHorizon(days: number | null, now: number): number | null {
  if (days === null) return null;
  const edge = now - days * DAY_MS;
  return edge - (((edge % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/** An organisation's retention at `now`: the days its rows are kept (null: all) and the horizon they start at. */
export function retentionAt(
  platformDays: number | null,
  orgDays: number | null,
  now: number,
): { days: number | null; horizon: number | null } {
  const days = effectiveRetentionDays(platformDays, orgDays);
  return { days, horizon: retentionHorizon(days, now) };
}
