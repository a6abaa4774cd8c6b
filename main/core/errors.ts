/** How an error crosses the bridge: the server's status and sentence, or status 0 for a network failure. */
export interface BridgeErrorBody {
  status: number;
  message: string;
  detail?: unknown;
}

export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
  }

  toBody(): BridgeErrorBody {
    return this.detail === undefined
      ? { status: this.status, message: this.message }
      : { status: this.status, message: this.message, detail: this.detail };
  }
}

/** The server's own words for a failed call: `error`, else the validation `detail`. */
export function errorFromResponse(status: number, body: unknown): ConsoleError {
  const record = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; detail?: unknown };
  if (typeof record.error === 'string') return new ConsoleError(status, record.error);
  if (record.detail === 'Unauthorized') return new ConsoleError(status, 'signed out: sign in again');
  if (Array.isArray(record.detail)) {
    const first = record.detail[0] as { loc?: unknown[]; msg?: string } | undefined;
    const where = first?.loc?.slice(1).join('.') ?? '';
    return new ConsoleError(status, `${where ? where + ': ' : ''}${first?.msg ?? 'invalid request'}`, record.detail);
  }
  return new ConsoleError(status, `the control plane answered ${status}`);
}
