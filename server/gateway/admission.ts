import { routeFacts, settledCostMicro, type RouteFacts } from '../domain/route-catalogue.js';
import { hashApiKeySecret } from '../security/tokens.js';
import { openProviderKey } from '../security/vault-cipher.js';
import type { KeyRow } from '../stores/control/keys.js';
import type { ControlStore } from '../stores/control/store.js';
import type { CreditHolds } from './credit-holds.js';
import { GatewayRefusal, creditSpent, invalidKey, modelNotAllowed, modelNotFound, noUpstream } from './refusals.js';
import type { RequestRate } from './request-rate.js';
import { upstreamFor, type Upstreams } from './upstreams.js';

export interface AdmissionDeps {
  control: ControlStore;
  keyHashSecret: Buffer;
  vaultMasterKey: Buffer;
  upstreams: Upstreams;
  rate: RequestRate;
  holds: CreditHolds;
}

/** A refusal that knows whose key it was, so that its row is the key's. */
export class KeyRefusal extends Error {
  constructor(
    readonly refusal: GatewayRefusal,
    readonly key: KeyRow,
  ) {
    super(refusal.message);
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The key a request is made with, checked as the control store has it now, so that a revocation,
 * an expiry or a change of limits applies from the very next request. Unknown keys throw a bare
 * refusal (no organisation to write a row for); revoked and expired keys a {@link KeyRefusal}.
 */
export function keyOf(deps: AdmissionDeps, authorization: string | undefined, now: number): KeyRow {
  const secret = authorization && BEARER.exec(authorization)?.[1];
  if (!secret) throw invalidKey();
  const key = deps.control.keys.findBySecretHash(hashApiKeySecret(secret, deps.keyHashSecret));
  if (!key) throw invalidKey();
  if (key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= now)) {
    throw new KeyRefusal(invalidKey(), key);
  }
  return key;
}

export interface Admitted {
  facts: RouteFacts;
  upstreamModel: string;
  baseUrl: string;
  apiKey: string | null;
  isByok: boolean;
  /** Micro-PKR held against the key until the request is answered. */
  held: number;
  rateHeaders: Record<string, string>;
}

function rateHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': `${Math.max(1, Math.ceil(resetMs / 1000))}s`,
  };
}

/**
 * Model scope, catalogue, rate and credit, in that order; then where the request goes. Holds the
 * request's largest possible cost against the key (released by the caller once answered).
 */
export function admit(
  deps: AdmissionDeps,
  key: KeyRow,
  request: {
    model: string;
    /** Characters that bound the prompt's tokens from above (the whole request body). */
    boundCharacters: number;
    /** Tokens the answer may generate, over all its choices. */
    maxGenerated: number;
  },
  now: number,
): Admitted {
  const refuse = (refusal: GatewayRefusal) => new KeyRefusal(refusal, key);
  const allowed = key.allowed_models === null ? null : (JSON.parse(key.allowed_models) as string[]);
  if (allowed !== null && !allowed.includes(request.model)) throw refuse(modelNotAllowed(request.model));
  const route = deps.control.models.find(request.model);
  const facts = routeFacts(request.model);
  if (!route?.active || !facts) throw refuse(modelNotFound(request.model));

  const rate = deps.rate.take(key.id, key.rate_limit_rpm, now);
  const headers = rateHeaders(key.rate_limit_rpm, rate.remaining, rate.resetMs);
  if (!rate.allowed) {
    const retryAfter = String(Math.max(1, Math.ceil(rate.resetMs / 1000)));
    throw refuse(
      new GatewayRefusal(
        429,
        `Rate limit reached: ${key.rate_limit_rpm} requests per minute for this key.`,
        'requests',
        'rate_limit_exceeded',
        { ...headers, 'retry-after': retryAfter },
      ),
    );
  }

  const sealed = facts.byokProvider === null ? undefined : deps.control.vault.sealed(key.org_id, facts.byokProvider);
  const isByok = sealed !== undefined;
  const upstream = upstreamFor(deps.upstreams, route.provider);
  if (!upstream) throw refuse(noUpstream(route.provider));

  // Characters bound the prompt's tokens from above, and the dearer of the input prices covers a cache write.
  const promptPrice = Math.max(facts.price.input, facts.price.cacheWrite);
  const held = settledCostMicro(
    { ...facts.price, input: promptPrice },
    { prompt: request.boundCharacters, generated: request.maxGenerated, cacheWrite: 0, cacheRead: 0 },
    isByok,
  );
  if (key.credit_limit_micro !== null && key.spent_micro + deps.holds.of(key.id) >= key.credit_limit_micro) {
    throw refuse(creditSpent());
  }
  // Opened only now, in memory, for this request; never logged or kept. Before the hold, which a
  // failure here would otherwise leave behind.
  const apiKey = isByok
    ? openProviderKey(deps.vaultMasterKey, key.org_id, facts.byokProvider!, sealed)
    : upstream.apiKey;
  deps.holds.hold(key.id, held);
  return {
    facts,
    upstreamModel: facts.upstream[0] ?? request.model,
    baseUrl: upstream.baseUrl,
    apiKey,
    isByok,
    held,
    rateHeaders: headers,
  };
}
