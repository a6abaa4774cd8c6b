import type { CallResult } from '#contract';
import { UNKNOWN } from './format.js';

/**
 * The gateway's APIs as the console names them: a request-log row's `api` (the one its request
 * came in on), the request log's and the analytics' API filter and their split by API. A row
 * whose API is unknown (null: written before the gateway recorded it, imported without it, or
 * answered by a control plane that does not say) shows a dash.
 */

export type RequestApi = NonNullable<CallResult<'api.requests'>['requests'][number]['api']>;

/** Every API, in the order the filter offers them; a new one is a type error here until it has its words. */
export const API_LABELS: Record<RequestApi, string> = {
  chat: 'Chat',
  messages: 'Messages',
  count_tokens: 'Count tokens',
  responses: 'Responses',
  embeddings: 'Embeddings',
};

/** What each one is, for a title on hover. */
export const API_TITLES: Record<RequestApi, string> = {
  chat: 'OpenAI chat completions (/v1/chat/completions)',
  messages: 'Anthropic Messages (/v1/messages)',
  count_tokens: 'Anthropic token counting (/v1/messages/count_tokens)',
  responses: 'OpenAI Responses (/v1/responses)',
  embeddings: 'Embeddings (/v1/embeddings)',
};

export const API_CHOICES = (Object.keys(API_LABELS) as RequestApi[]).map((api) => ({
  value: api,
  label: API_LABELS[api],
}));

export const isRequestApi = (text: string): text is RequestApi => Object.hasOwn(API_LABELS, text);

/**
 * How a row's API reads: its short label, the dash for an unknown one (null, or absent from a
 * control plane that does not send it), and a value this console has no words for as it is.
 */
export function apiLabel(api: string | null | undefined): string {
  if (api === null || api === undefined) return UNKNOWN;
  return isRequestApi(api) ? API_LABELS[api] : api;
}

/** The title of a row's API: what it is, or why there is a dash. */
export function apiTitle(api: string | null | undefined): string {
  if (api === null || api === undefined) return 'API not recorded';
  return isRequestApi(api) ? API_TITLES[api] : api;
}
