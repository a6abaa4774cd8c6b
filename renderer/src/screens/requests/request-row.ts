import type { CallResult } from '#contract';

/** A page of the request log and its rows as the server sends them, and the words for their outcomes. */

export type RequestPage = CallResult<'api.requests'>;
export type RequestRow = RequestPage['requests'][number];
export type TerminationReason = RequestRow['status_detail']['termination_reason'];

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
