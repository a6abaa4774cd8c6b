import type { IncomingMessage } from 'node:http';
import type { KeyModels } from '../schemas/gateway-internal.js';
import type { Authority } from './authority.js';

/**
 * What the gateway decides on a request's headers alone, before it reads a byte of its body: a
 * caller without a key in force gets nothing read (issue 51: a hundred keyless posts of 8 MB
 * held 700 MB, and parsing them held the event loop), and a body that is read has a deadline.
 */

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Longer than any key the console issues: not worth asking about. */
const MAX_SECRET = 512;

/** The secret of an `Authorization: Bearer …` header, or null when there is none worth asking about. */
export function bearerSecret(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const secret = BEARER.exec(authorization)?.[1];
  return secret && secret.length <= MAX_SECRET ? secret : null;
}

/** The secret of an `x-api-key` header (Anthropic's way of sending a key), or null. */
export function apiKeySecret(header: string | string[] | undefined): string | null {
  return typeof header === 'string' && header !== '' && header.length <= MAX_SECRET ? header : null;
}

/** Whether a request says a body follows: a length above zero, or chunks. */
export function announcesBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined;
}

/** How long an answer of the authority about a key is taken as still true at the front door. */
const KEY_STATE_MS = 1000;
/** Keys remembered at once; past this the memory starts again (an attacker's many keys cannot grow it). */
const KEYS_REMEMBERED = 10_000;

/**
 * The authority's answer about a key, remembered for a second: a caller's requests cost one
 * lookup a second at the door, not one each. Only what stays true is remembered: a key known, or
 * refused as unknown, revoked or expired (401); never a control plane that could not answer.
 *
 * The door only decides whether a body is read: a request it lets in is decided again, fresh, by
 * the authority's admission after its body (a key revoked within the second is refused there),
 * and a key made within the second cannot have been refused here before it existed.
 */
export class KeyGate {
  private readonly remembered = new Map<string, { answer: KeyModels; until: number }>();

  constructor(
    private readonly authority: Authority,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The answer about `secret`: at once when it is remembered, so that the hot path awaits nothing. */
  check(secret: string): KeyModels | Promise<KeyModels> {
    const now = this.clock();
    const kept = this.remembered.get(secret);
    if (kept && kept.until > now) return kept.answer;
    return this.ask(secret, now);
  }

  private async ask(secret: string, now: number): Promise<KeyModels> {
    const answer = await this.authority.keyModels(secret);
    if (answer.kind === 'known' || answer.refusal.status === 401) {
      if (this.remembered.size >= KEYS_REMEMBERED) this.remembered.clear();
      this.remembered.set(secret, { answer, until: now + KEY_STATE_MS });
    }
    return answer;
  }
}

/** The error a body read too slowly ends with: Fastify answers it with its status, 408. */
export class BodyTooSlow extends Error {
  readonly statusCode = 408;
}

/**
 * Ends the reading of `raw`'s body with {@link BodyTooSlow} if it has not all arrived within
 * `ms`. Fastify's reader listens for the request's errors: it answers 408 through the gateway's
 * error handler, which closes the connection. A body nobody reads any more is cut with its
 * connection (an error event with no listener would end the process).
 */
export function bodyDeadline(raw: IncomingMessage, ms: number): void {
  const timer = setTimeout(() => {
    if (raw.complete || raw.destroyed) return;
    // Nobody reading it (refused already, as another content type): nothing to answer, the connection goes.
    if (raw.listenerCount('error') === 0) raw.destroy();
    else raw.emit('error', new BodyTooSlow(`The request body did not arrive within ${ms / 1000} s.`));
  }, ms);
  timer.unref();
  // A request is closed once its body is all read (or it is gone): either way, no deadline is left.
  raw.once('close', () => clearTimeout(timer));
}
