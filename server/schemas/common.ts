import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** RFC 3339 in UTC, for example `2026-11-22T07:49:19.123Z`. */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp in UTC' });

/**
 * The response header naming the request field a refusal concerns (`x-error-field: expires_at`):
 * the name of a body field, query parameter or path parameter, without its location. The body
 * keeps the contract's shape (`{"error": "<sentence>"}`), so the field travels beside it and a
 * client can place the error without reading the sentence. A 422's `detail[].loc` names its
 * field already and carries no header. The server sets no CORS headers, so no
 * `Access-Control-Expose-Headers` is needed; add this name there if it ever does.
 */
export const ERROR_FIELD_HEADER = 'x-error-field';

export const ErrorBody = Type.Object({ error: Type.String() });
export type ErrorBody = Static<typeof ErrorBody>;

export const UnauthorizedBody = Type.Object({ detail: Type.Literal('Unauthorized') });

export const ValidationErrorBody = Type.Object({
  detail: Type.Array(
    Type.Object({
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
      type: Type.String(),
    }),
  ),
});
export type ValidationErrorBody = Static<typeof ValidationErrorBody>;

export const MessageBody = Type.Object({ message: Type.String() });
export type MessageBody = Static<typeof MessageBody>;

/** Response schemas for the error answers a route may give, so the OpenAPI document lists them. */
export function errors(...statuses: (400 | 401 | 403 | 404 | 409 | 415 | 422 | 429 | 501 | 503)[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      status === 401 ? UnauthorizedBody : status === 422 ? ValidationErrorBody : ErrorBody,
    ]),
  );
}

/**
 * Beyond the contract: the analytics' and health's `target` filter, a route target as the request
 * log's `served_by` names it. Checked by the routes (server/routes/target-param.ts), so that a
 * malformed one is a 400 in the contract's `{"error"}` shape, not a schema's 422.
 */
export const TargetFilter = Type.Optional(
  Type.String({
    description:
      'Beyond the contract: only requests served by this route target, `provider/model` (a provider id, `/`, an upstream model id of at most 256 characters), as `x-svc-served-by` names it; requests no target served, and imported rows that do not say, never count. Read from the rows, not the rollups.',
  }),
);

/**
 * Beyond the contract: the request log's, analytics' and health's `api` filter, the gateway's API a
 * request came in on, as the request log's `api` names it. Checked by the routes
 * (server/routes/api-param.ts), as `target` is, so that an API this server does not know is a
 * 400 in the contract's `{"error"}` shape, not a schema's 422.
 */
export const ApiFilter = Type.Optional(
  Type.String({
    description:
      "Beyond the contract: only requests that came in on this API of the gateway's: chat (chat completions), messages (Anthropic Messages), count_tokens (its token counting), responses (OpenAI Responses) or embeddings; rows whose API is unknown (written before the gateway recorded it, imports that do not say) never count. Read from the rows, not the rollups.",
  }),
);

export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 50, description: 'Clamped to 200' })),
  // Bounded so that an absurd offset (1e20) is a 422, not a value SQLite cannot bind as an integer.
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
};
export const PAGE_SIZE_CLAMP = 200;

export const isoTime = (ms: number): string => new Date(ms).toISOString();
export const isoTimeOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
