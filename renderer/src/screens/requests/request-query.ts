import type { CallArgs } from '#contract';
import { MICRO_PER_PKR, parsePkr } from '../../lib/money.js';
import { pageSizeFrom } from '../../lib/page-size.js';
import { parseTimeParam } from '../../lib/local-time-input.js';
import { DEFAULT_RANGE, MAX_RANGE_MS, rangeFromParam } from '../../lib/time-range.js';
import type { RouteParams } from '../../state/route.js';
import { pageOf } from '../../lib/paging.js';

/**
 * The request log's view as route parameters (so a reload or a shared address restores
 * it) and as the query sent to the server. Route parameter names are short; the server's
 * are its own.
 */

export type RequestsQuery = CallArgs<'api.requests'>['query'];
export type FilterQuery = Omit<RequestsQuery, 'limit' | 'offset'>;

/** The filter parameters; changing any of them goes back to the first page. */
export const FILTER_PARAMS = [
  'range',
  'from',
  'to',
  'project',
  'key',
  'provider',
  'model',
  'target',
  'api',
  'status',
  'reason',
  'min_cost',
  'q',
] as const;

/**
 * The window between two times (`from` and `to` parameters, `to` excluded) as the server takes
 * it, or why it cannot be used; null when the view reads the last `range` instead.
 */
export function betweenOf(params: RouteParams): { from: string; to: string } | { error: string } | null {
  if (!params.from && !params.to) return null;
  if (!params.from || !params.to) return { error: 'give both “From” and “To”, or choose a time range' };
  const from = parseTimeParam(params.from);
  if (!from.ok) return { error: `From: ${from.error}` };
  const to = parseTimeParam(params.to);
  if (!to.ok) return { error: `To: ${to.error}` };
  if (to.date.getTime() <= from.date.getTime()) return { error: '“To” must be later than “From”' };
  if (to.date.getTime() - from.date.getTime() > MAX_RANGE_MS) return { error: 'at most 400 days apart' };
  return { from: from.date.toISOString(), to: to.date.toISOString() };
}

export function minCostError(text: string): string | null {
  if (text.trim() === '') return null;
  const parsed = parsePkr(text);
  return parsed.ok ? null : parsed.error;
}

/** The filters of the view, without paging: what the table and the export both ask for. */
export function filterQuery(params: RouteParams): FilterQuery {
  // A range that does not parse is reported at its field; the default window applies meanwhile.
  const between = betweenOf(params);
  const query: FilterQuery =
    between && !('error' in between) ? { ...between } : { time_range: rangeFromParam(params.range).range };
  if (params.project) query.project_id = params.project;
  if (params.key) query.key_id = params.key;
  if (params.provider) query.provider = params.provider;
  if (params.model) query.model = params.model;
  if (params.target) query.target = params.target;
  if (params.api) query.api = params.api;
  if (params.status) query.status_category = params.status;
  if (params.reason) query.termination_reason = params.reason;
  if (params.min_cost) {
    // Sent as the exact PKR the person typed (via micro-PKR, not float arithmetic on text);
    // a malformed amount is reported at its field and not sent.
    const parsed = parsePkr(params.min_cost);
    if (parsed.ok) query.min_cost_pkr = parsed.micro / MICRO_PER_PKR;
  }
  const search = params.q?.trim();
  if (search) query.search = search;
  return query;
}

export function pageQuery(params: RouteParams): RequestsQuery {
  const limit = pageSizeFrom(params.size);
  return { ...filterQuery(params), limit, offset: (pageOf(params) - 1) * limit };
}

/** Whether any filter narrows the view beyond the default window. */
export function isFiltered(params: RouteParams): boolean {
  return (
    FILTER_PARAMS.some((name) => name !== 'range' && params[name]) || (params.range ?? DEFAULT_RANGE) !== DEFAULT_RANGE
  );
}
