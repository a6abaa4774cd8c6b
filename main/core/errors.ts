import type { BridgeErrorBody } from './contract.js';

export type { BridgeErrorBody };

export interface ConsoleErrorOptions {
  /** The request field the error concerns, without its body/query/path location. */
  field?: string;
  /** A 422's validation `detail`, as the server sent it. */
  detail?: unknown;
  /** A 429's `Retry-After`: seconds before the server takes another try. */
  retryAfterSeconds?: number;
}

/** What a refusal's headers say besides its body. */
export interface RefusalHints {
  /** The request field it concerns, from `x-error-field`. */
  field?: string;
  retryAfterSeconds?: number;
}

export class ConsoleError extends Error {
  readonly field?: string;
  readonly detail?: unknown;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: number,
    message: string,
    options: ConsoleErrorOptions = {},
  ) {
    super(message);
    if (options.field !== undefined) this.field = options.field;
    if (options.detail !== undefined) this.detail = options.detail;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  toBody(): BridgeErrorBody {
    const body: BridgeErrorBody = { status: this.status, message: this.message };
    if (this.field !== undefined) body.field = this.field;
    if (this.detail !== undefined) body.detail = this.detail;
    if (this.retryAfterSeconds !== undefined) body.retryAfterSeconds = this.retryAfterSeconds;
    return body;
  }
}

/** Locations a field name may follow in a 422's `loc`, or in the host's argument paths (`/body/name`). */
const LOCATIONS = new Set(['body', 'query', 'path', 'params', 'header']);

/**
 * The request field named by a location: `["body", "credit_limit_cents"]` or the argument path
 * `/body/credit_limit_cents/0` both give `credit_limit_cents`; a bare location names none.
 */
export function fieldOf(loc: readonly unknown[]): string | undefined {
  const name = typeof loc[0] === 'string' && LOCATIONS.has(loc[0]) ? loc[1] : loc[0];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * The server's own words for a failed call: `error`, else the validation `detail`. The field it
 * concerns comes from the `x-error-field` header (`hints.field`) for an `{"error"}` answer, and
 * from the first issue's `loc` for a 422.
 */
export function errorFromResponse(status: number, body: unknown, hints: RefusalHints = {}): ConsoleError {
  const record = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; detail?: unknown };
  const field = hints.field || undefined;
  if (typeof record.error === 'string') {
    return new ConsoleError(status, record.error, { field, retryAfterSeconds: hints.retryAfterSeconds });
  }
  if (record.detail === 'Unauthorized') return new ConsoleError(status, 'signed out: sign in again');
  if (Array.isArray(record.detail)) {
    const first = record.detail[0] as { loc?: unknown[]; msg?: string } | undefined;
    const loc = Array.isArray(first?.loc) ? first.loc : [];
    const where = loc.slice(1).join('.');
    return new ConsoleError(status, `${where ? where + ': ' : ''}${first?.msg ?? 'invalid request'}`, {
      field: fieldOf(loc),
      detail: record.detail,
    });
  }
  return new ConsoleError(status, `the control plane answered ${status}`);
}
