/**
 * What each route of the model catalogue is commercially: what it resolves to upstream,
 * whose key can serve it, what it costs and whether it has a prompt cache. Version 1 of the
 * routes document, which a new control store starts at, is built from these facts
 * (routes-document.ts); from then on the gateway prices requests and resolves upstream models
 * from the document's newest version. The demo traffic adds how its requests behave on each
 * route (server/demo/catalogue.ts).
 *
 * Every route of a new store's document has its facts here (test/server/route-catalogue.test.ts).
 * Prices are PKR per million tokens (list prices in USD at about 280 PKR), which is also
 * micro-PKR per token, so a cost is a plain dot product.
 */

/** Micro-PKR per token (PKR per million tokens). */
export interface RoutePrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

export interface RouteFacts {
  /** The route id clients ask for, e.g. 'openai/gpt-4o-mini'. */
  id: string;
  /** Resolved upstream model ids; the first is the default. `svc/` routes spread over several providers. */
  upstream: readonly string[];
  /** The vault provider that can serve the route on the customer's own key; null on routes the service runs itself. */
  byokProvider: string | null;
  price: RoutePrice;
  /** False on routes without a prompt cache: their requests' cache token fields are null, not 0. */
  promptCache: boolean;
}

export const ROUTE_CATALOGUE: readonly RouteFacts[] = [
  {
    id: 'openai/gpt-4o-mini',
    upstream: ['gpt-4o-mini-2024-07-18'],
    byokProvider: 'openai',
    price: { input: 42, output: 168, cacheWrite: 42, cacheRead: 21 },
    promptCache: true,
  },
  {
    id: 'openai/gpt-4o',
    upstream: ['gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'],
    byokProvider: 'openai',
    price: { input: 700, output: 2800, cacheWrite: 700, cacheRead: 350 },
    promptCache: true,
  },
  {
    id: 'openai/gpt-4.1',
    upstream: ['gpt-4.1-2025-04-14'],
    byokProvider: 'openai',
    price: { input: 560, output: 2240, cacheWrite: 560, cacheRead: 140 },
    promptCache: true,
  },
  {
    id: 'openai/gpt-4.1-mini',
    upstream: ['gpt-4.1-mini-2025-04-14'],
    byokProvider: 'openai',
    price: { input: 112, output: 448, cacheWrite: 112, cacheRead: 28 },
    promptCache: true,
  },
  {
    id: 'openai/o3-mini',
    upstream: ['o3-mini-2025-01-31'],
    byokProvider: 'openai',
    price: { input: 308, output: 1232, cacheWrite: 308, cacheRead: 154 },
    promptCache: true,
  },
  {
    // Seeded inactive, so no traffic reaches it today; priced for when an operator turns it on.
    id: 'openai/gpt-3.5-turbo',
    upstream: ['gpt-3.5-turbo-0125'],
    byokProvider: 'openai',
    price: { input: 140, output: 420, cacheWrite: 0, cacheRead: 0 },
    promptCache: false,
  },
  {
    id: 'anthropic/claude-sonnet-4',
    upstream: ['claude-sonnet-4-20250514'],
    byokProvider: 'anthropic',
    price: { input: 840, output: 4200, cacheWrite: 1050, cacheRead: 84 },
    promptCache: true,
  },
  {
    id: 'anthropic/claude-opus-4',
    upstream: ['claude-opus-4-20250514'],
    byokProvider: 'anthropic',
    price: { input: 4200, output: 21000, cacheWrite: 5250, cacheRead: 420 },
    promptCache: true,
  },
  {
    id: 'anthropic/claude-3-5-haiku',
    upstream: ['claude-3-5-haiku-20241022'],
    byokProvider: 'anthropic',
    price: { input: 224, output: 1120, cacheWrite: 280, cacheRead: 22.4 },
    promptCache: true,
  },
  {
    id: 'google/gemini-2.5-pro',
    upstream: ['gemini-2.5-pro'],
    byokProvider: null,
    price: { input: 350, output: 2800, cacheWrite: 350, cacheRead: 87.5 },
    promptCache: true,
  },
  {
    id: 'google/gemini-2.5-flash',
    upstream: ['gemini-2.5-flash'],
    byokProvider: null,
    price: { input: 84, output: 700, cacheWrite: 84, cacheRead: 21 },
    promptCache: true,
  },
  {
    // This route and the next report their cache token fields (as 0) but price nothing for them.
    id: 'mistral/mistral-large',
    upstream: ['mistral-large-2411'],
    byokProvider: null,
    price: { input: 560, output: 1680, cacheWrite: 0, cacheRead: 0 },
    promptCache: true,
  },
  {
    id: 'meta/llama-3.3-70b-instruct',
    upstream: ['llama-3.3-70b-instruct-turbo'],
    byokProvider: null,
    price: { input: 168, output: 168, cacheWrite: 0, cacheRead: 0 },
    promptCache: true,
  },
  {
    id: 'deepseek/deepseek-chat',
    upstream: ['deepseek-chat-v3'],
    byokProvider: null,
    price: { input: 76, output: 308, cacheWrite: 76, cacheRead: 19 },
    promptCache: true,
  },
  {
    id: 'svc/auto',
    upstream: ['gpt-4o-mini-2024-07-18', 'claude-sonnet-4-20250514', 'gemini-2.5-flash'],
    byokProvider: null,
    price: { input: 200, output: 800, cacheWrite: 0, cacheRead: 0 },
    promptCache: false,
  },
  {
    id: 'svc/fast',
    upstream: ['gpt-4o-mini-2024-07-18', 'gemini-2.5-flash', 'llama-3.3-70b-instruct-turbo'],
    byokProvider: null,
    price: { input: 50, output: 200, cacheWrite: 0, cacheRead: 0 },
    promptCache: false,
  },
  {
    id: 'svc/reasoning',
    upstream: ['o3-mini-2025-01-31', 'claude-opus-4-20250514', 'deepseek-reasoner'],
    byokProvider: null,
    price: { input: 1000, output: 4000, cacheWrite: 0, cacheRead: 0 },
    promptCache: false,
  },
  {
    // An embeddings route: it generates nothing.
    id: 'svc/embed',
    upstream: ['text-embedding-3-small'],
    byokProvider: null,
    price: { input: 6, output: 0, cacheWrite: 0, cacheRead: 0 },
    promptCache: false,
  },
];

const BY_ID = new Map(ROUTE_CATALOGUE.map((route) => [route.id, route]));

/** The facts of a route, or undefined for an id the catalogue does not know. */
export function routeFacts(id: string): RouteFacts | undefined {
  return BY_ID.get(id);
}

/** A request's token counts; 0 for the cache fields of a route without a prompt cache. */
export interface TokenCounts {
  prompt: number;
  generated: number;
  cacheWrite: number;
  cacheRead: number;
}

/** Micro-PKR for the given token counts at the given price, rounded to a whole micro-PKR. */
export function costMicro(price: RoutePrice, tokens: TokenCounts): number {
  return Math.round(
    tokens.prompt * price.input +
      tokens.generated * price.output +
      tokens.cacheWrite * price.cacheWrite +
      tokens.cacheRead * price.cacheRead,
  );
}

/** The share of a BYOK request's cost the service keeps: the upstream bills the customer's key for the rest. */
export const BYOK_SERVICE_SHARE = 0.02;

/** What is settled into a key's spend: the full cost, or on a BYOK request only the service's share. */
export function settledCostMicro(price: RoutePrice, tokens: TokenCounts, isByok: boolean): number {
  const full = costMicro(price, tokens);
  return isByok ? Math.round(full * BYOK_SERVICE_SHARE) : full;
}
