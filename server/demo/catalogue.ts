/**
 * How each route of the seeded model catalogue behaves in the demo traffic: its share
 * of requests, what it resolves to upstream, what it costs and how fast it answers.
 * Prices are PKR per million tokens (list prices in USD at about 280 PKR), which is
 * also micro-PKR per token, so a row's cost is a plain dot product.
 */
export interface RoutePrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

export interface RouteProfile {
  id: string;
  /** Relative share of requests in an unscoped key's mix. */
  weight: number;
  /** Resolved upstream model ids; `svc/` routes spread over several providers. */
  upstream: readonly string[];
  /** The vault provider that can serve the route on the customer's own key; null on `svc/` routes. */
  byokProvider: string | null;
  price: RoutePrice;
  /** Null on `svc/` routes, which have no prompt cache. */
  cache: { readShare: number; writeShare: number } | null;
  prompt: { median: number; sigma: number };
  /** Median 0: an embeddings route, which never streams and generates nothing. */
  generated: { median: number; sigma: number };
  streamShare: number;
  /** Upstream time to first token, before prompt length is added. */
  ttftMs: number;
  /** Upstream milliseconds per generated token. */
  tpotMs: number;
}

const chat = { median: 900, sigma: 1.1 };
const reply = { median: 220, sigma: 0.9 };
const thinking = { median: 900, sigma: 0.8 };

export const ROUTES: readonly RouteProfile[] = [
  {
    id: 'openai/gpt-4o-mini',
    weight: 22,
    upstream: ['gpt-4o-mini-2024-07-18'],
    byokProvider: 'openai',
    price: { input: 42, output: 168, cacheWrite: 42, cacheRead: 21 },
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 350,
    tpotMs: 8,
  },
  {
    id: 'openai/gpt-4o',
    weight: 8,
    upstream: ['gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'],
    byokProvider: 'openai',
    price: { input: 700, output: 2800, cacheWrite: 700, cacheRead: 350 },
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.65,
    ttftMs: 500,
    tpotMs: 14,
  },
  {
    id: 'openai/gpt-4.1',
    weight: 4,
    upstream: ['gpt-4.1-2025-04-14'],
    byokProvider: 'openai',
    price: { input: 560, output: 2240, cacheWrite: 560, cacheRead: 140 },
    cache: { readShare: 0.35, writeShare: 0 },
    prompt: { median: 2500, sigma: 1.2 },
    generated: reply,
    streamShare: 0.6,
    ttftMs: 550,
    tpotMs: 15,
  },
  {
    id: 'openai/gpt-4.1-mini',
    weight: 8,
    upstream: ['gpt-4.1-mini-2025-04-14'],
    byokProvider: 'openai',
    price: { input: 112, output: 448, cacheWrite: 112, cacheRead: 28 },
    cache: { readShare: 0.3, writeShare: 0 },
    prompt: { median: 1800, sigma: 1.2 },
    generated: reply,
    streamShare: 0.4,
    ttftMs: 380,
    tpotMs: 9,
  },
  {
    id: 'openai/o3-mini',
    weight: 2,
    upstream: ['o3-mini-2025-01-31'],
    byokProvider: 'openai',
    price: { input: 308, output: 1232, cacheWrite: 308, cacheRead: 154 },
    cache: { readShare: 0.2, writeShare: 0 },
    prompt: chat,
    generated: thinking,
    streamShare: 0.5,
    ttftMs: 2500,
    tpotMs: 6,
  },
  {
    id: 'anthropic/claude-sonnet-4',
    weight: 12,
    upstream: ['claude-sonnet-4-20250514'],
    byokProvider: 'anthropic',
    price: { input: 840, output: 4200, cacheWrite: 1050, cacheRead: 84 },
    cache: { readShare: 0.4, writeShare: 0.1 },
    prompt: { median: 2200, sigma: 1.2 },
    generated: { median: 320, sigma: 0.9 },
    streamShare: 0.75,
    ttftMs: 900,
    tpotMs: 18,
  },
  {
    id: 'anthropic/claude-opus-4',
    weight: 1.5,
    upstream: ['claude-opus-4-20250514'],
    byokProvider: 'anthropic',
    price: { input: 4200, output: 21000, cacheWrite: 5250, cacheRead: 420 },
    cache: { readShare: 0.4, writeShare: 0.1 },
    prompt: { median: 3000, sigma: 1.1 },
    generated: thinking,
    streamShare: 0.8,
    ttftMs: 1800,
    tpotMs: 35,
  },
  {
    id: 'anthropic/claude-3-5-haiku',
    weight: 5,
    upstream: ['claude-3-5-haiku-20241022'],
    byokProvider: 'anthropic',
    price: { input: 224, output: 1120, cacheWrite: 280, cacheRead: 22.4 },
    cache: { readShare: 0.25, writeShare: 0.05 },
    prompt: chat,
    generated: reply,
    streamShare: 0.55,
    ttftMs: 450,
    tpotMs: 10,
  },
  {
    id: 'google/gemini-2.5-pro',
    weight: 2,
    upstream: ['gemini-2.5-pro'],
    byokProvider: null,
    price: { input: 350, output: 2800, cacheWrite: 350, cacheRead: 87.5 },
    cache: { readShare: 0.15, writeShare: 0 },
    prompt: { median: 4000, sigma: 1.3 },
    generated: thinking,
    streamShare: 0.5,
    ttftMs: 1500,
    tpotMs: 9,
  },
  {
    id: 'google/gemini-2.5-flash',
    weight: 6,
    upstream: ['gemini-2.5-flash'],
    byokProvider: null,
    price: { input: 84, output: 700, cacheWrite: 84, cacheRead: 21 },
    cache: { readShare: 0.15, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 300,
    tpotMs: 4,
  },
  {
    id: 'mistral/mistral-large',
    weight: 1.5,
    upstream: ['mistral-large-2411'],
    byokProvider: null,
    price: { input: 560, output: 1680, cacheWrite: 0, cacheRead: 0 },
    cache: { readShare: 0, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 600,
    tpotMs: 20,
  },
  {
    id: 'meta/llama-3.3-70b-instruct',
    weight: 2,
    upstream: ['llama-3.3-70b-instruct-turbo'],
    byokProvider: null,
    price: { input: 168, output: 168, cacheWrite: 0, cacheRead: 0 },
    cache: { readShare: 0, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.5,
    ttftMs: 250,
    tpotMs: 5,
  },
  {
    id: 'deepseek/deepseek-chat',
    weight: 3,
    upstream: ['deepseek-chat-v3'],
    byokProvider: null,
    price: { input: 76, output: 308, cacheWrite: 76, cacheRead: 19 },
    cache: { readShare: 0.45, writeShare: 0 },
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 900,
    tpotMs: 25,
  },
  {
    id: 'svc/auto',
    weight: 10,
    upstream: ['gpt-4o-mini-2024-07-18', 'claude-sonnet-4-20250514', 'gemini-2.5-flash'],
    byokProvider: null,
    price: { input: 200, output: 800, cacheWrite: 0, cacheRead: 0 },
    cache: null,
    prompt: chat,
    generated: reply,
    streamShare: 0.6,
    ttftMs: 500,
    tpotMs: 12,
  },
  {
    id: 'svc/fast',
    weight: 7,
    upstream: ['gpt-4o-mini-2024-07-18', 'gemini-2.5-flash', 'llama-3.3-70b-instruct-turbo'],
    byokProvider: null,
    price: { input: 50, output: 200, cacheWrite: 0, cacheRead: 0 },
    cache: null,
    prompt: { median: 500, sigma: 1 },
    generated: { median: 150, sigma: 0.8 },
    streamShare: 0.55,
    ttftMs: 250,
    tpotMs: 6,
  },
  {
    id: 'svc/reasoning',
    weight: 2,
    upstream: ['o3-mini-2025-01-31', 'claude-opus-4-20250514', 'deepseek-reasoner'],
    byokProvider: null,
    price: { input: 1000, output: 4000, cacheWrite: 0, cacheRead: 0 },
    cache: null,
    prompt: chat,
    generated: thinking,
    streamShare: 0.6,
    ttftMs: 2200,
    tpotMs: 12,
  },
  {
    id: 'svc/embed',
    weight: 5,
    upstream: ['text-embedding-3-small'],
    byokProvider: null,
    price: { input: 6, output: 0, cacheWrite: 0, cacheRead: 0 },
    cache: null,
    prompt: { median: 400, sigma: 0.9 },
    generated: { median: 0, sigma: 0 },
    streamShare: 0,
    ttftMs: 60,
    tpotMs: 0,
  },
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

/** Micro-PKR for the given token counts; the service keeps only this share on a BYOK request. */
export const BYOK_SERVICE_SHARE = 0.02;

export function costMicro(
  price: RoutePrice,
  tokens: { prompt: number; generated: number; cacheWrite: number; cacheRead: number },
): number {
  return Math.round(
    tokens.prompt * price.input +
      tokens.generated * price.output +
      tokens.cacheWrite * price.cacheWrite +
      tokens.cacheRead * price.cacheRead,
  );
}

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
