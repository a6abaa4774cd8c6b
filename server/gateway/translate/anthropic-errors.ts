/**
 * Errors in Anthropic's shape (`{"type": "error", "error": {"type", "message"}}`), whose `type`
 * follows the status as Anthropic's documentation pairs them: 400 `invalid_request_error` (also
 * any other 4xx it does not name), 401 `authentication_error`, 402 `billing_error`, 403
 * `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429 `rate_limit_error`,
 * 500 `api_error`, 504 `timeout_error`, 529 `overloaded_error`. A 503 (no target could take the
 * request) is `overloaded_error`, as an overloaded API is Anthropic's reason for refusing one;
 * a 502 and any other 5xx is `api_error`. The SDKs pick an error's class by its status; the type
 * is what a caller reads.
 */

export interface AnthropicError {
  type: 'error';
  error: { type: string; message: string };
}

const TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The error type Anthropic gives an answer of `status`. */
export function anthropicErrorType(status: number): string {
  const named = TYPES[status];
  if (named !== undefined) return named;
  return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
}

export function anthropicError(status: number, message: string): AnthropicError {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

/**
 * An error in OpenAI's shape (the upstream's, or the gateway's own, as `upstreamFailure` writes
 * them) in Anthropic's: its message, under the type its status has. OpenAI's `type` and `code`
 * name its own categories (`server_error`, `context_length_exceeded`), none of Anthropic's.
 */
export function openAiErrorToAnthropic(
  status: number,
  body: { error: { message: string; type?: string | null; code?: string | null } },
): AnthropicError {
  const message = typeof body.error.message === 'string' && body.error.message !== '' ? body.error.message : null;
  return anthropicError(status, message ?? `The request failed (HTTP ${status}).`);
}
