import { type RouteFacts, routeFacts } from '../domain/route-catalogue.js';
import type { RequestApi } from '../schemas/request-log.js';

/**
 * How each active route of the seeded model catalogue behaves in the demo traffic: its share of
 * requests, its prompt and reply sizes, how often it streams and how fast it answers.
 * What a route is (upstream models, BYOK provider, price, prompt cache) is the domain's
 * (server/domain/route-catalogue.ts); a profile carries those facts alongside.
 */
export interface RouteProfile extends RouteFacts {
  /** Relative share of requests in an unscoped key's mix. */
  weight: number;
  /** How often a request reads or writes the prompt cache; null exactly on routes without one. */
  cache: CacheShares | null;
  prompt: { median: number; sigma: number };
  /** Median 0: an embeddings route, which never streams and generates nothing. */
  generated: { median: number; sigma: number };
  streamShare: number;
  /** Upstream time to first token, before prompt length is added. */
  ttftMs: number;
  /** Upstream milliseconds per generated token. */
  tpotMs: number;
  /** The gateway's API its requests come in on: `embeddings` on an embeddings route, else `chat`. */
  api: RequestApi;
}

/** Shares of requests that read from and write to the prompt cache. */
export interface CacheShares {
  readShare: number;
  writeShare: number;
}

/** A route's demo behaviour; `cache` is given exactly when the route has a prompt cache. */
type Behaviour = Omit<RouteProfile, keyof RouteFacts | 'cache' | 'api'> & { cache?: CacheShares };

function profile(id: string, behaviour: Behaviour): RouteProfile {
  const facts = routeFacts(id);
  if (!facts) throw new Error(`demo route ${id} is not in the route catalogue`);
  const { cache, ...rest } = behaviour;
  if (facts.promptCache !== (cache !== undefined))
    throw new Error(`demo route ${id}: cache shares must be given exactly when the route has a prompt cache`);
  // An embeddings route generates nothing (`generated` of median 0), and only such a route does.
  return { ...facts, ...rest, cache: cache ?? null, api: rest.generated.median === 0 ? 'embeddings' : 'chat' };
}

const chat = { median: 900, sigma: 1.1 };
const reply = { median: 220, sigma: 0.9 };
const thinking = { median: 900, sigma: 0.8 };

/** In this order: the traffic draws routes by index, so reordering changes every generated row. */
export const ROUTES: readonly RouteProfile[] = [
  profile('openai/gpt-4o-mini', {
    weight: 22,
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 350,
    tpotMs: 8,
  }),
  profile('openai/gpt-4o', {
    weight: 8,
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.65,
    ttftMs: 500,
    tpotMs: 14,
  }),
  profile('openai/gpt-4.1', {
    weight: 4,
    cache: { readShare: 0.35, writeShare: 0 },
    prompt: { median: 2500, sigma: 1.2 },
    generated: reply,
    streamShare: 0.6,
    ttftMs: 550,
    tpotMs: 15,
  }),
  profile('openai/gpt-4.1-mini', {
    weight: 8,
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: { median: 1800, sigma: 1.2 },
    generated: reply,
    streamShare: 0.4,
    ttftMs: 380,
    tpotMs: 9,
  }),
  profile('openai/o3-mini', {
    weight: 2,
    cache: { readShare: 0.2, writeShare: 0 },
    prompt: chat,
    generated: thinking,
    streamShare: 0.5,
    ttftMs: 2500,
    tpotMs: 6,
  }),
  profile('anthropic/claude-sonnet-4', {
    weight: 12,
    cache: { readShare: 0.4, writeShare: 0.1 },
    prompt: { median: 2200, sigma: 1.2 },
    generated: { median: 320, sigma: 0.9 },
    streamShare: 0.75,
    ttftMs: 900,
    tpotMs: 18,
  }),
  profile('anthropic/claude-opus-4', {
    weight: 1.5,
    cache: { readShare: 0.4, writeShare: 0.1 },
    prompt: { median: 3000, sigma: 1.1 },
    generated: thinking,
    streamShare: 0.8,
    ttftMs: 1800,
    tpotMs: 35,
  }),
  profile('anthropic/claude-3-5-haiku', {
    weight: 5,
    cache: { readShare: 0.25, writeShare: 0.05 },
    prompt: chat,
    generated: reply,
    streamShare: 0.55,
    ttftMs: 450,
    tpotMs: 10,
  }),
  profile('google/gemini-2.5-pro', {
    weight: 2,
    cache: { readShare: 0.15, writeShare: 0 },
    prompt: { median: 4000, sigma: 1.3 },
    generated: thinking,
    streamShare: 0.5,
    ttftMs: 1500,
    tpotMs: 9,
  }),
  profile('google/gemini-2.5-flash', {
    weight: 6,
    cache: { readShare: 0.15, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 300,
    tpotMs: 4,
  }),
  profile('mistral/mistral-large', {
    weight: 1.5,
    cache: { readShare: 0, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 600,
    tpotMs: 20,
  }),
  profile('meta/llama-3.3-70b-instruct', {
    weight: 2,
    cache: { readShare: 0, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 250,
    tpotMs: 5,
  }),
  profile('deepseek/deepseek-chat', {
    weight: 3,
    cache: { readShare: 0.45, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 900,
    tpotMs: 25,
  }),
  profile('svc/auto', {
    weight: 10,
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 500,
    tpotMs: 12,
  }),
  profile('svc/fast', {
    weight: 7,
    prompt: { median: 500, sigma: 1 },
    generated: { median: 150, sigma: 0.8 },
    streamShare: 0.55,
    ttftMs: 250,
    tpotMs: 6,
  }),
  profile('svc/reasoning', {
    weight: 2,
    prompt: chat,
    generated: thinking,
    streamShare: 0.6,
    ttftMs: 2200,
    tpotMs: 12,
  }),
  profile('svc/embed', {
    weight: 5,
    prompt: { median: 400, sigma: 0.9 },
    generated: { median: 0, sigma: 0 },
    streamShare: 0,
    ttftMs: 60,
    tpotMs: 0,
  }),
];

const BY_ID = new Map(ROUTES.map((route) => [route.id, route]));

export function routeProfile(id: string): RouteProfile {
  const route = BY_ID.get(id);
  if (!route) throw new Error(`no demo profile for route ${id}`);
  return route;
}

/** Largest prompt a route accepts; the long tail of the log-normal is cut here. */
export const MAX_PROMPT_TOKENS = 200_000;
export const MAX_GENERATED_TOKENS = 16_000;
/** Median size of a cache read or write when one happens: system prompts and documents. */
export const CACHE_MEDIAN_TOKENS = 6000;

/** Expected cost of one successful request, to size credit limits ahead of the traffic. */
export function meanCostMicro(route: RouteProfile): number {
  const mean = (d: { median: number; sigma: number }) => d.median * Math.exp((d.sigma * d.sigma) / 2);
  const cacheMean = CACHE_MEDIAN_TOKENS * Math.exp(0.32);
  return (
    mean(route.prompt) * route.price.input +
    mean(route.generated) * route.price.output +
    (route.cache?.writeShare ?? 0) * cacheMean * route.price.cacheWrite +
    (route.cache?.readShare ?? 0) * cacheMean * route.price.cacheRead
  );
}
