import type { CallArgs, CallResult } from '../../../../main/core/contract.js';
import { formatCount } from '../../lib/format.js';
import { MICRO_PER_PKR, parsePkr } from '../../lib/money.js';
import type { RouteParams } from '../../state/route.js';

/**
 * The request log's view as route parameters (so a reload or a shared address restores
 * it) and as the query sent to the server. Route parameter names are short; the server's
 * are its own.
 */

export type RequestsQuery = CallArgs<'api.requests'>['query'];
export type RequestPage = CallResult<'api.requests'>;
export type RequestRow = RequestPage['requests'][number];
export type TerminationReason = RequestRow['status_detail']['termination_reason'];

export const DEFAULT_RANGE = '24h';
export const RANGE_PRESETS: readonly { value: string; label: string }[] = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
];

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

export const TERMINATION_REASONS: readonly { value: TerminationReason; label: string }[] = [
  { value: 'success', label: 'Success' },
  { value: 'proxy_guillotine', label: 'Gateway timeout' },
  { value: 'client_disconnect', label: 'Client disconnected' },
  { value: 'upstream_stream_aborted', label: 'Upstream aborted' },
];

export function reasonLabel(reason: string): string {
  return TERMINATION_REASONS.find((r) => r.value === reason)?.label ?? reason;
}

export const PAGE_SIZES = [50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;
/** The server clamps `limit` to this; the export asks for whole pages of it. */
export const EXPORT_PAGE_SIZE = 200;

/** The filter parameters; changing any of them goes back to the first page. */
export const FILTER_PARAMS = ['range', 'project', 'key', 'model', 'status', 'reason', 'min_cost', 'q'] as const;

const DURATION = /^[1-9][0-9]*[smhd]$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_RANGE_MS = 400 * UNIT_MS.d;

/** The server's rule for `time_range`, checked before sending so the error shows at the field. */
export function rangeError(text: string): string | null {
  const trimmed = text.trim();
  if (!DURATION.test(trimmed)) return 'a whole number followed by s, m, h or d, such as 36h or 14d';
  const ms = Number(trimmed.slice(0, -1)) * UNIT_MS[trimmed.slice(-1) as keyof typeof UNIT_MS];
  return ms > MAX_RANGE_MS ? 'at most 400 days (400d)' : null;
}

export function minCostError(text: string): string | null {
  if (text.trim() === '') return null;
  const parsed = parsePkr(text);
  return parsed.ok ? null : parsed.error;
}

export function pageSizeOf(params: RouteParams): number {
  const size = Number(params.size);
  return (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE;
}

export function pageOf(params: RouteParams): number {
  const page = Number(params.page);
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/** The filters of the view, without paging: what the table and the export both ask for. */
export function filterQuery(params: RouteParams): Omit<RequestsQuery, 'limit' | 'offset'> {
  const query: Omit<RequestsQuery, 'limit' | 'offset'> = { time_range: params.range ?? DEFAULT_RANGE };
  if (params.project) query.project_id = params.project;
  if (params.key) query.key_id = params.key;
  if (params.model) query.model = params.model;
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
  const limit = pageSizeOf(params);
  return { ...filterQuery(params), limit, offset: (pageOf(params) - 1) * limit };
}

/** "1–50 of 12,345": the rows on screen and how many the filter matched. */
export function pageText(offset: number, shown: number, total: number): string {
  if (shown === 0) return total === 0 ? 'No requests match' : `None on this page of ${formatCount(total)}`;
  return `${formatCount(offset + 1)}–${formatCount(offset + shown)} of ${formatCount(total)}`;
}

/** Whether any filter narrows the view beyond the default window. */
export function isFiltered(params: RouteParams): boolean {
  return (
    FILTER_PARAMS.some((name) => name !== 'range' && params[name]) || (params.range ?? DEFAULT_RANGE) !== DEFAULT_RANGE
  );
}
