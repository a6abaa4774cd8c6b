import type { BridgeEnvelope, CallArgs, CallName, CallResult } from '#contract';

/**
 * The preload's `window.gatewayConsole`, answered by the test: component tests drive the
 * renderer through the same seam the Electron shell uses, and see every call it makes.
 */

type Handler<K extends CallName> = (args: CallArgs<K>) => CallResult<K> | Promise<CallResult<K>>;

/**
 * Thrown by a handler to answer with a bridge error (status, message and the request field it
 * concerns, as the host would).
 */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    /** A 429's wait, as the host passes on the server's `Retry-After`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface FakeBridge {
  calls: { name: CallName; args: unknown }[];
  on<K extends CallName>(name: K, handler: Handler<K>): void;
  callsOf<K extends CallName>(name: K): CallArgs<K>[];
  reset(): void;
}

const handlers = new Map<CallName, (args: unknown) => unknown>();

export const bridge: FakeBridge = {
  calls: [],
  on(name, handler) {
    handlers.set(name, handler as (args: unknown) => unknown);
  },
  callsOf<K extends CallName>(name: K) {
    return this.calls.filter((c) => c.name === name).map((c) => c.args as CallArgs<K>);
  },
  reset() {
    this.calls.length = 0;
    handlers.clear();
  },
};

window.gatewayConsole = {
  async call(name: CallName, args?: unknown): Promise<BridgeEnvelope<unknown>> {
    bridge.calls.push({ name, args });
    const handler = handlers.get(name);
    if (!handler) return { ok: false, error: { status: 500, message: `the test did not expect a call to ${name}` } };
    try {
      return { ok: true, result: await handler(args) };
    } catch (error) {
      if (error instanceof Refusal) {
        const { status, message, field, retryAfterSeconds } = error;
        return {
          ok: false,
          error: {
            status,
            message,
            ...(field === undefined ? {} : { field }),
            ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
          },
        };
      }
      throw error;
    }
  },
};
