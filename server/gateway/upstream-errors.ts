/**
 * An upstream's error as the gateway hands it on: in OpenAI's shape (`{"error": {"message",
 * "type", "code"}}`), labelled JSON, with a message safe to show the caller and to keep in the
 * row. What an upstream writes in its errors is the provider's (or its proxy's) business: an HTML
 * page naming hosts of its network, or a message that quotes the key it was sent, the platform's
 * or an organisation's own. A provider key never reaches a caller, a row or a log.
 */

export interface UpstreamFailure {
  /** The status the caller gets: the upstream's, but 502 where the fault is not the caller's to fix. */
  status: number;
  /** Headers of the upstream's worth handing on (a 429's `Retry-After`). */
  headers: Record<string, string>;
  body: { error: { message: string; type: string; code: string | null } };
  /** The row's `upstream_error`: the upstream's own status, then the safe type and message. */
  rowError: string;
}

/** The most of an upstream error's message handed on: enough for any provider's sentence. */
const MESSAGE_CHARACTERS = 500;

/**
 * Key-like words: the common providers' prefixes (`sk-…`, `sk_…`, `sk-proj-…`, Google's
 * `AIza…`, the `key-…` of others), whole or masked in part (`sk-pl****abcd`), and any opaque
 * token of 32 characters or more, which no human sentence needs. IPv4 addresses too: a host of
 * the operator's or the provider's network is nobody's business.
 */
const KEY_LIKE = /\b(?:sk|pk|rk|key|api[-_]?key)[-_][\w*.-]{3,}|\bAIza[\w-]{10,}|[\w-]{32,}/gi;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;

/** `text` without any of `secrets` or anything that looks like a key or an address. */
export function redacted(text: string, secrets: readonly (string | null)[]): string {
  let safe = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) safe = safe.split(secret).join('[redacted]');
  }
  return safe.replace(KEY_LIKE, '[redacted]').replace(IPV4, '[address]');
}

const RETRY_AFTER = /^(?:\d{1,6}|[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT)$/;

interface ErrorBody {
  error?: { message?: unknown; type?: unknown; code?: unknown } | null;
}

/** An error in OpenAI's shape, or null for anything else (HTML, plain text, another JSON). */
function openAiError(text: string): { message: string; type: string; code: string | null } | null {
  let parsed: ErrorBody;
  try {
    parsed = JSON.parse(text) as ErrorBody;
  } catch {
    return null;
  }
  const error = parsed && typeof parsed === 'object' ? parsed.error : null;
  if (!error || typeof error !== 'object' || typeof error.message !== 'string') return null;
  const code = typeof error.code === 'string' || typeof error.code === 'number' ? String(error.code) : null;
  return {
    message: error.message,
    type: typeof error.type === 'string' && error.type !== '' ? error.type : 'upstream_error',
    code,
  };
}

const genericMessage = (status: number) =>
  status === 429
    ? 'The upstream is rate limiting requests; try again later.'
    : status >= 500
      ? `The upstream failed (HTTP ${status}); try again later.`
      : `The upstream refused the request (HTTP ${status}).`;

/**
 * What the caller and the row get of an upstream's answer of `status` (not 2xx) with body `text`.
 * `secrets`: the provider key the request was sent with. `isByok`: that key is the
 * organisation's own, so a 401 or 403 is theirs to hear of; the platform's refused is not.
 */
export function upstreamFailure(
  status: number,
  retryAfter: string | undefined,
  text: string,
  secrets: readonly (string | null)[],
  isByok: boolean,
): UpstreamFailure {
  if (!isByok && (status === 401 || status === 403)) {
    // The platform's own credentials were refused: the caller's key is fine.
    return {
      status: 502,
      headers: {},
      body: { error: { message: 'The upstream refused the gateway.', type: 'upstream_error', code: 'upstream_error' } },
      rowError: `${status}: the upstream refused the platform's credentials`,
    };
  }
  // A status a caller cannot read as an error of the request (1xx, 3xx, beyond 599) is the upstream's fault.
  const shown = status >= 400 && status <= 599 ? status : 502;
  const headers: Record<string, string> = {};
  if (shown === 429 && retryAfter !== undefined && RETRY_AFTER.test(retryAfter)) headers['retry-after'] = retryAfter;
  const error = openAiError(text);
  if (error) {
    const message = redacted(error.message, secrets).slice(0, MESSAGE_CHARACTERS);
    const code = error.code === null ? null : redacted(error.code, secrets).slice(0, 100);
    const type = redacted(error.type, secrets).slice(0, 100);
    return {
      status: shown,
      headers,
      body: { error: { message, type, code } },
      rowError: `${status} ${type}: ${message}`,
    };
  }
  const message = genericMessage(shown);
  return {
    status: shown,
    headers,
    body: { error: { message, type: 'upstream_error', code: 'upstream_error' } },
    // What it was, never what it said: the length tells an operator enough to look further.
    rowError: `${status}: not an OpenAI error (${text.length} characters)`,
  };
}
