/** An answer the API gives on purpose, in the contract's error shape. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: { error: string } | { detail: unknown },
  ) {
    super('error' in body ? body.error : 'validation failed');
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export const badRequest = (message: string) => new ApiError(400, { error: message });
export const unauthorized = () => new ApiError(401, { detail: 'Unauthorized' });
export const forbidden = (message: string) => new ApiError(403, { error: message });
export const notFound = (message: string) => new ApiError(404, { error: message });
export const conflict = (message: string) => new ApiError(409, { error: message });
export const invalid = (...issues: ValidationIssue[]) => new ApiError(422, { detail: issues });
