import type { BridgeEnvelope, BridgeErrorBody, CallArgs, CallName, CallResult } from '#contract';
import { counted } from './console-idle.js';

/**
 * The renderer's one way out: named calls of the bridge contract (types only: the
 * contract's schemas stay in the host, which checks every call's arguments).
 *
 * In the Electron shell the preload exposes `window.gatewayConsole`; in the web shell the
 * calls are POSTs to /bridge/<name> carrying the per-launch token, which the page takes
 * from its address once (#token=... or ?token=...) and keeps for the tab's life.
 */

export type { BridgeErrorBody };

/**
 * A refused or failed call, with the status and message the user should see, and the request
 * field it concerns when there is one (`expires_at`): forms place errors by `field`, never by
 * the words of `message`.
 */
export class BridgeError extends Error implements BridgeErrorBody {
  readonly status: number;
  readonly field?: string;
  readonly detail?: unknown;
  readonly retryAfterSeconds?: number;

  constructor(body: BridgeErrorBody) {
    super(body.message);
    this.name = 'BridgeError';
    this.status = body.status;
    if (typeof body.field === 'string' && body.field !== '') this.field = body.field;
    this.detail = body.detail;
    if (typeof body.retryAfterSeconds === 'number') this.retryAfterSeconds = body.retryAfterSeconds;
  }
}

interface PreloadBridge {
  call(name: CallName, args?: unknown): Promise<BridgeEnvelope<unknown>>;
}

declare global {
  interface Window {
    gatewayConsole?: PreloadBridge;
  }
}

const TOKEN_HEADER = 'x-console-token';
const TOKEN_KEY = 'gateway-console-token';

/** Takes the token out of the address bar (so it is not bookmarked or shared) into the tab's storage. */
function takeToken(): string | null {
  const fromHash = new URLSearchParams(window.location.hash.slice(1)).get('token');
  const query = new URLSearchParams(window.location.search);
  const fromQuery = query.get('token');
  const token = fromHash ?? fromQuery;
  if (token) {
    try {
      window.sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Storage refused: the token lives in memory for this page only.
    }
    query.delete('token');
    const search = query.toString();
    window.history.replaceState(null, '', `${window.location.pathname}${search ? `?${search}` : ''}`);
    return token;
  }
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

let token: string | null | undefined;

export function webToken(): string | null {
  if (token === undefined) token = takeToken();
  return token;
}

async function envelopeOverHttp(name: CallName, args: unknown): Promise<BridgeEnvelope<unknown>> {
  const secret = webToken();
  if (!secret) {
    return {
      ok: false,
      error: { status: 401, message: 'no console token: open the console from the address its host printed' },
    };
  }
  let response: Response;
  try {
    response = await fetch(`/bridge/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER]: secret },
      body: JSON.stringify(args ?? {}),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    return { ok: false, error: { status: 0, message: 'the console host did not answer: is it still running?' } };
  }
  try {
    return (await response.json()) as BridgeEnvelope<unknown>;
  } catch {
    return { ok: false, error: { status: response.status, message: `the console host answered ${response.status}` } };
  }
}

/** Makes a bridge call: resolves with its result, or throws a BridgeError with its status and message. */
export async function call<K extends CallName>(name: K, args: CallArgs<K>): Promise<CallResult<K>> {
  const envelope = await counted(() =>
    window.gatewayConsole ? window.gatewayConsole.call(name, args) : envelopeOverHttp(name, args),
  );
  if (!envelope.ok) throw new BridgeError(envelope.error);
  return envelope.result as CallResult<K>;
}

export function errorMessage(error: unknown): string {
  if (error instanceof BridgeError) return error.status ? `${error.message} (${error.status})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

// The web shell's token arrives in the address; take it before anything else reads the hash.
if (!window.gatewayConsole) webToken();
