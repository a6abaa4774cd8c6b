import { ROUTE_CATALOGUE, type RouteFacts } from './route-catalogue.js';

/**
 * The routes document: providers, routes, prices and routing, one versioned document in the
 * control store (see README, "Routes"). This file holds its shape once validated (every default
 * filled in) and version 1, today's catalogue; `routes-validation.ts` turns a file into it.
 */

/** The wire formats a provider speaks. */
export type WireApi = 'openai' | 'anthropic';
export type RouteKind = 'chat' | 'embeddings';
/** `fallback`: targets in order; `loadbalance`: by weight over the healthy ones, then the rest in order. */
export type Strategy = 'fallback' | 'loadbalance';

/**
 * How a route's attempts are bounded. One deadline for the whole request, every attempt and wait
 * included; the others bound one attempt or one target.
 */
export interface FailoverSettings {
  /** The whole request, every attempt included: past it, the caller gets 504. */
  timeout_ms: number;
  /** A non-streamed attempt not answered by then moves to the next target. */
  answer_timeout_ms: number;
  /** A streamed attempt whose first content has not come by then moves to the next target. */
  first_byte_timeout_ms: number;
  /** A stream, once content reached the caller, that sends nothing for this long is ended as stalled. */
  stream_idle_timeout_ms: number;
  /** Retries on the same target of a transient failure (a 5xx, a reset) before the next target. */
  retries: number;
  /** Attempts of one request over all targets. */
  max_attempts: number;
  /** The first backoff before a retry on the same target; each next one doubles, with jitter. */
  backoff_ms: number;
  /** The longest `Retry-After` the gateway waits out on the same target (when no other target can serve). */
  retry_after_max_ms: number;
  /** Failures in a row that open a target's breaker. */
  breaker_failures: number;
  /** How long an open breaker keeps traffic off its target before one probe is let through. */
  breaker_cooldown_ms: number;
}

export const DEFAULT_FAILOVER: Readonly<FailoverSettings> = Object.freeze({
  timeout_ms: 120_000,
  answer_timeout_ms: 60_000,
  first_byte_timeout_ms: 15_000,
  stream_idle_timeout_ms: 30_000,
  retries: 1,
  max_attempts: 4,
  backoff_ms: 100,
  retry_after_max_ms: 5_000,
  breaker_failures: 3,
  breaker_cooldown_ms: 10_000,
});

export interface ProviderEntry {
  api: WireApi[];
  /** Null: `SVC_UPSTREAM_<PROVIDER>_URL`, else `SVC_UPSTREAM_URL`, on the gateway's machine. */
  base_url: string | null;
  /** The variable holding the platform's key; null: `SVC_UPSTREAM_<PROVIDER>_KEY`, else `SVC_UPSTREAM_KEY`. */
  key_env: string | null;
  /** The vault provider whose organisation key is used instead of the platform's, or null. */
  byok: string | null;
}

export interface TargetEntry {
  provider: string;
  /** The model id the provider is asked for. */
  model: string;
  weight: number;
}

/** PKR per million tokens (micro-PKR per token). */
export interface PriceEntry {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

export interface RouteEntry {
  kind: RouteKind;
  price: PriceEntry;
  prompt_cache: boolean;
  strategy: Strategy;
  /** False: kept in the document, refused as an unknown model (404). */
  active: boolean;
  /**
   * Whether an organisation's own vault key (its targets' providers' `byok`) may serve the route;
   * false: the platform's key always does, and the route is billed in full (the `svc/` routes).
   */
  byok: boolean;
  targets: TargetEntry[];
  /** This route's own bounds, each falling back to the document's `failover`. */
  failover: Partial<FailoverSettings>;
}

export interface RoutesDocument {
  failover: FailoverSettings;
  providers: Record<string, ProviderEntry>;
  routes: Record<string, RouteEntry>;
}

/** A version of the document as the control store keeps it. */
export interface StoredRoutes {
  version: number;
  /** Milliseconds since the epoch. */
  applied_at: number;
  document: RoutesDocument;
}

/** A route's bounds: its own, else the document's. */
export function failoverOf(document: RoutesDocument, route: RouteEntry): FailoverSettings {
  return { ...document.failover, ...route.failover };
}

/** The provider that serves each upstream model of version 1, by the model's family. */
function providerOfUpstream(model: string): string {
  if (/^(gpt|o\d|text-embedding)/.test(model)) return 'openai';
  if (model.startsWith('claude')) return 'anthropic';
  if (model.startsWith('gemini')) return 'google';
  if (model.startsWith('mistral')) return 'mistral';
  if (model.startsWith('llama')) return 'meta';
  if (model.startsWith('deepseek')) return 'deepseek';
  throw new Error(`no provider for the catalogue's upstream model ${model}`);
}

/** Routes seeded inactive: kept priced for when an operator turns them on. */
const SEEDED_INACTIVE = new Set(['openai/gpt-3.5-turbo']);

function catalogueRoute(facts: RouteFacts): RouteEntry {
  const ownProvider = facts.id.split('/')[0]!;
  // A provider's own routes go to it; the service's (`svc/`) fall back over their upstreams' providers.
  const targets =
    ownProvider === 'svc'
      ? facts.upstream.map((model) => ({ provider: providerOfUpstream(model), model, weight: 1 }))
      : [{ provider: ownProvider, model: facts.upstream[0]!, weight: 1 }];
  return {
    kind: facts.id === 'svc/embed' ? 'embeddings' : 'chat',
    price: {
      input: facts.price.input,
      output: facts.price.output,
      cache_write: facts.price.cacheWrite,
      cache_read: facts.price.cacheRead,
    },
    prompt_cache: facts.promptCache,
    strategy: 'fallback',
    active: !SEEDED_INACTIVE.has(facts.id),
    // The service's own routes are the service's to pay, whichever provider serves them.
    byok: ownProvider !== 'svc',
    targets,
    failover: {},
  };
}

const CATALOGUE_PROVIDERS = ['openai', 'anthropic', 'google', 'mistral', 'meta', 'deepseek'] as const;
const BYOK_PROVIDERS = new Set(['openai', 'anthropic']);

/**
 * Version 1: today's catalogue. Its providers take their address and key from `SVC_UPSTREAM_*`,
 * as the gateway did before routes were data.
 */
export function catalogueDocument(): RoutesDocument {
  return {
    failover: { ...DEFAULT_FAILOVER },
    providers: Object.fromEntries(
      CATALOGUE_PROVIDERS.map((id) => [
        id,
        {
          api: id === 'anthropic' ? ['anthropic', 'openai'] : ['openai'],
          base_url: null,
          key_env: null,
          byok: BYOK_PROVIDERS.has(id) ? id : null,
        } satisfies ProviderEntry,
      ]),
    ),
    routes: Object.fromEntries(ROUTE_CATALOGUE.map((facts) => [facts.id, catalogueRoute(facts)])),
  };
}

/**
 * Version 1 of a store that kept its routes in the `models` table before routes were data: the
 * catalogue, each route active as its row said (a catalogue route without a row was refused, so
 * inactive). Rows the catalogue does not have are left out: without a price the gateway never
 * served them, and a route without a price is no route of the document.
 */
export function catalogueDocumentFrom(rows: readonly { id: string; active: boolean }[]): RoutesDocument {
  const document = catalogueDocument();
  const active = new Map(rows.map((row) => [row.id, row.active]));
  for (const [id, route] of Object.entries(document.routes)) route.active = active.get(id) ?? false;
  return document;
}

/** `value`, and every object and array within it, frozen: one version is shared by every request. */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** JSON with every map's keys in order: two documents that differ only in the order of their ids read alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Whether two documents say the same: the same providers, routes and settings, whatever order their ids are in. */
export function sameDocument(a: RoutesDocument, b: RoutesDocument): boolean {
  return canonical(a) === canonical(b);
}
