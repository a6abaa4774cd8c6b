/** An answer the API gives on purpose, in the contract's error shape. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: { error: string } | { detail: unknown },
    /** The request field this refusal concerns, sent as the `x-error-field` header. */
    readonly field?: string,
    /** Seconds before trying again, sent as `Retry-After` (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super('error' in body ? body.error : 'validation failed');
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface RefusalOptions {
  /** The one request field (body field, query or path parameter) the refusal concerns. */
  field?: string;
}

export const badRequest = (message: string, options: RefusalOptions = {}) =>
  new ApiError(400, { error: message }, options.field);
export const unauthorized = () => new ApiError(401, { detail: 'Unauthorized' });
export const forbidden = (message: string) => new ApiError(403, { error: message });
export const notFound = (message: string, options: RefusalOptions = {}) =>
  new ApiError(404, { error: message }, options.field);
export const conflict = (message: string, options: RefusalOptions = {}) =>
  new ApiError(409, { error: message }, options.field);
export const invalid = (...issues: ValidationIssue[]) => new ApiError(422, { detail: issues });
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, { error: message }, undefined, retryAfterSeconds);
