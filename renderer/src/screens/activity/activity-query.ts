import type { CallArgs } from '#contract';
import { parseTimeParam, toIsoWithOffset } from '../../lib/local-time-input.js';
import type { RouteParams } from '../../state/route.js';

/**
 * The trail's filters as route parameters (so a reload, an address or a saved view restores
 * them) and as the query GET /activity/entries takes. Times are kept as the person typed them
 * (local wall-clock, as a datetime-local input gives them) and sent with their offset.
 */

export type ActivityFilterQuery = Omit<NonNullable<CallArgs<'api.activityEntries'>['query']>, 'limit' | 'before'>;

export const ACTIVITY_FILTER_PARAMS = ['action', 'actor', 'target', 'from', 'to'] as const;

/** A local time parameter as the server's ISO time; undefined when absent or not a time (said at its field). */
function instant(param: string | undefined): string | undefined {
  if (!param) return undefined;
  const parsed = parseTimeParam(param);
  return parsed.ok ? toIsoWithOffset(parsed.date) : undefined;
}

export function activityFilterQuery(params: RouteParams): ActivityFilterQuery {
  const query: ActivityFilterQuery = {};
  if (params.action) query.action = params.action;
  const actor = params.actor?.trim();
  if (actor) query.actor = actor;
  if (params.target) query.target = params.target;
  const from = instant(params.from);
  const to = instant(params.to);
  // A range that ends before it starts is said at the filters and not sent.
  if (from && to && Date.parse(to) <= Date.parse(from)) return query;
  if (from) query.from = from;
  if (to) query.to = to;
  return query;
}

export function isActivityFiltered(params: RouteParams): boolean {
  return ACTIVITY_FILTER_PARAMS.some((name) => Boolean(params[name]));
}

/** Why a time filter cannot be applied, or null. */
export function timeFilterError(params: RouteParams): string | null {
  for (const name of ['from', 'to'] as const) {
    const value = params[name];
    const parsed = value ? parseTimeParam(value) : null;
    if (parsed && !parsed.ok) return `${name === 'from' ? 'From' : 'To'}: ${parsed.error}`;
  }
  const from = instant(params.from);
  const to = instant(params.to);
  if (from && to && Date.parse(to) <= Date.parse(from)) return '“To” must be later than “From”.';
  return null;
}
