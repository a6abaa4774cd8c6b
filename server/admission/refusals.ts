import type { RefusalWire } from '../schemas/gateway-internal.js';
import { shown } from './text-bounds.js';

/**
 * The gateway's errors, in OpenAI's shape (`{"error": {"message", "type", "code"}}`) with the
 * statuses decisions.md gives, so that the official SDKs raise the error class a caller expects
 * (AuthenticationError, PermissionDeniedError, RateLimitError…).
 */
export class GatewayRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; code: string | null } } {
    return { error: { message: this.message, type: this.type, code: this.code } };
  }

  toWire(): RefusalWire {
    return {
      status: this.status,
      message: this.message,
      type: this.type,
      code: this.code,
      headers: { ...this.headers },
    };
  }

  static fromWire(wire: RefusalWire): GatewayRefusal {
    return new GatewayRefusal(wire.status, wire.message, wire.type, wire.code, wire.headers);
  }
}

/** One sentence for an unknown, revoked or expired key: which one it was is nobody's business. */
export const invalidKey = () =>
  new GatewayRefusal(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');

export const modelNotAllowed = (model: string) =>
  new GatewayRefusal(403, `This key may not use the model ${shown(model)}.`, 'permission_error', 'model_not_allowed');

export const modelNotFound = (model: string) =>
  new GatewayRefusal(
    404,
    `The model ${shown(model)} does not exist or is not served here.`,
    'invalid_request_error',
    'model_not_found',
  );

/** A model asked over an API that does not serve its kind: chat over embeddings, or the reverse. */
export const wrongKind = (model: string, kind: 'chat' | 'embeddings') =>
  new GatewayRefusal(
    400,
    kind === 'embeddings'
      ? `The model ${shown(model)} is an embeddings model: ask it through POST /v1/embeddings.`
      : `The model ${shown(model)} is not an embeddings model: ask it through a chat API.`,
    'invalid_request_error',
    'model_not_supported',
  );

export const creditSpent = () =>
  new GatewayRefusal(
    402,
    "This key's credit limit is spent. Ask an admin to raise it.",
    'insufficient_quota',
    'insufficient_quota',
  );

/**
 * Whether a refusal's answer names its row (`x-request-id`). Not for an invalid key: a revoked or
 * expired key's answer must be the same, byte for byte, as an unknown one's, which has no row.
 */
export const namesItsRow = (refusal: GatewayRefusal): boolean => refusal.code !== 'invalid_api_key';

export const badRequest = (message: string) => new GatewayRefusal(400, message, 'invalid_request_error', null);

export const noUpstream = (provider: string) =>
  new GatewayRefusal(503, `No upstream is configured for ${provider}.`, 'server_error', 'upstream_unavailable');

export const controlPlaneUnreachable = () =>
  new GatewayRefusal(
    503,
    'The gateway cannot reach its control plane; try again shortly.',
    'server_error',
    'control_plane_unavailable',
    { 'retry-after': '1' },
  );
