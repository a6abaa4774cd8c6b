import type { RequestRow } from './request-row.js';

/**
 * One request as a picture: where its time went, what its tokens were and what each part
 * cost. Times follow the contract (section 2) and the gateway: `pre_dispatch_ms` and `ttft_ms`
 * are measured from the request's arrival, `total_ms` to its end; so the first token came
 * `ttft − pre_dispatch` after dispatch and generation took `total − ttft`. A null is unknown and
 * is never drawn or counted as 0.
 */

export type PhaseId = 'pre_dispatch' | 'first_token' | 'generation' | 'upstream' | 'refused';

export interface Phase {
  id: PhaseId;
  label: string;
  /** From the request's arrival. */
  startMs: number;
  ms: number;
}

export interface Timeline {
  totalMs: number;
  /** In order, end to end: they add up to `totalMs`. */
  phases: Phase[];
  /** From arrival; null when the first token was not seen. */
  ttftMs: number | null;
  /** From the first token to the end; null when the first token was not seen. */
  generationMs: number | null;
  /** Why the first token's time is unknown, when it is. */
  unknownWhy: string | null;
  /** Tokens generated over generation seconds, as the analytics count them (decisions.md); null when not measurable. */
  tokensPerSecond: number | null;
  /** The recorded times do not fit one another: what does not, the picture being drawn within the total. */
  inconsistent: string | null;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

const NEVER_DISPATCHED = 'never dispatched: the gateway refused the request';

/**
 * A request the gateway refused before dispatch (no key, over a limit, a model not allowed: 401,
 * 402, 403, 429): it writes no upstream, no first token and its whole time as pre-dispatch
 * (server/gateway/request-facts.ts `refusalRow`).
 */
export function isRefusal(row: RequestRow): boolean {
  const m = row.metrics;
  return (
    row.status >= 400 &&
    row.status < 500 &&
    row.upstream === null &&
    m.ttft_ms === null &&
    m.tokens_generated === 0 &&
    m.pre_dispatch_ms === m.total_ms
  );
}

export function timelineOf(row: RequestRow): Timeline {
  const m = row.metrics;
  const totalMs = Math.max(0, m.total_ms);
  if (isRefusal(row)) {
    return {
      totalMs,
      phases: [{ id: 'refused', label: 'Refused before dispatch', startMs: 0, ms: totalMs }],
      ttftMs: null,
      generationMs: null,
      unknownWhy: NEVER_DISPATCHED,
      tokensPerSecond: null,
      inconsistent: null,
    };
  }
  const pre = clamp(m.pre_dispatch_ms, 0, totalMs);
  const misfits: string[] = [];
  if (m.total_ms < 0) misfits.push('a negative total');
  if (m.pre_dispatch_ms > totalMs) misfits.push('the time before dispatch is longer than the total');
  const phases: Phase[] = [{ id: 'pre_dispatch', label: 'Before dispatch', startMs: 0, ms: pre }];

  if (m.ttft_ms !== null) {
    if (m.ttft_ms < m.pre_dispatch_ms) misfits.push('the first token came before dispatch');
    if (m.ttft_ms > totalMs) misfits.push('the first token came after the end');
    const first = clamp(m.ttft_ms, pre, totalMs);
    const generationMs = totalMs - first;
    phases.push(
      { id: 'first_token', label: 'Waiting for the first token', startMs: pre, ms: first - pre },
      { id: 'generation', label: 'Generation', startMs: first, ms: generationMs },
    );
    return {
      totalMs,
      phases,
      ttftMs: m.ttft_ms,
      generationMs,
      unknownWhy: null,
      tokensPerSecond: perSecond(m.tokens_generated, generationMs),
      inconsistent: misfits.length > 0 ? misfits.join('; ') : null,
    };
  }

  // No first token seen: the upstream's part is one span, not split into a guess.
  let unknownWhy = 'the stream ended before a first token was recorded';
  if (!row.stream) unknownWhy = 'not streamed: the answer came back whole';
  // Tokens came, so a first token did: its event was not flushed before the row was written (contract §2).
  else if (m.tokens_generated > 0) unknownWhy = 'tokens came, but the first-token event was not recorded';
  phases.push({
    id: 'upstream',
    label: row.stream ? 'Upstream, no first token' : 'Upstream, whole answer',
    startMs: pre,
    ms: totalMs - pre,
  });
  return {
    totalMs,
    phases,
    ttftMs: null,
    generationMs: null,
    unknownWhy,
    tokensPerSecond: perSecond(m.tokens_generated, totalMs - pre),
    inconsistent: misfits.length > 0 ? misfits.join('; ') : null,
  };
}

function perSecond(tokens: number, ms: number): number | null {
  return tokens > 0 && ms > 0 ? tokens / (ms / 1000) : null;
}

export type TokenPartId = 'prompt' | 'cache_read' | 'cache_write' | 'generated';

export interface TokenPart {
  id: TokenPartId;
  label: string;
  /** Null: unknown (`why` says what that means on this row). */
  tokens: number | null;
  why: string | null;
}

export interface Tokens {
  parts: TokenPart[];
  total: number;
  estimated: boolean;
  /** Every part is known and they add up to the row's total. */
  addsUp: boolean;
}

const NO_CACHE = 'this route has no prompt cache';

export function tokensOf(row: RequestRow): Tokens {
  const m = row.metrics;
  const noCache = isRefusal(row) ? NEVER_DISPATCHED : NO_CACHE;
  const parts: TokenPart[] = [
    {
      id: 'prompt',
      label: 'Prompt',
      tokens: m.prompt_tokens,
      why: m.prompt_tokens === null ? 'not recorded on older rows' : null,
    },
    {
      id: 'cache_read',
      label: 'Read from the cache',
      tokens: m.cache_read_input_tokens,
      why: m.cache_read_input_tokens === null ? noCache : null,
    },
    {
      id: 'cache_write',
      label: 'Written to the cache',
      tokens: m.cache_creation_input_tokens,
      why: m.cache_creation_input_tokens === null ? noCache : null,
    },
    { id: 'generated', label: 'Generated', tokens: m.tokens_generated, why: null },
  ];
  // A route without a cache has no cache legs: they are absent, not unknown, for the sum.
  const sum = parts.reduce((total, part) => total + (part.tokens ?? 0), 0);
  return {
    parts,
    total: m.total_tokens,
    estimated: m.tokens_estimated,
    addsUp: m.prompt_tokens !== null && sum === m.total_tokens,
  };
}

/** PKR per million tokens (micro-PKR per token), as GET /models/prices gives them. */
export interface Price {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

export interface CostPart {
  id: TokenPartId;
  label: string;
  /** Null: the route has no such part (no cache); its price and cost are then null too. */
  tokens: number | null;
  /** Why the tokens are unknown, when they are. */
  why: string | null;
  perMillion: number | null;
  micro: number | null;
}

export type CostBreakdown =
  | { kind: 'unsplit'; why: string }
  | {
      kind: 'split';
      parts: CostPart[];
      /** The parts at the list price, rounded as the gateway rounds. */
      listMicro: number;
      /** What the parts say was settled: the list cost, or on BYOK the service's share of it. */
      expectedMicro: number;
      /** The row's settled cost. */
      settledMicro: number;
      byok: boolean;
      byokShare: number;
      addsUp: boolean;
    };

const PRICE_OF: Record<TokenPartId, keyof Price> = {
  prompt: 'input',
  cache_read: 'cache_read',
  cache_write: 'cache_write',
  generated: 'output',
};

/**
 * The row's cost split by its tokens at the model's prices, the way the gateway settles it
 * (route-catalogue.ts): each part tokens × price, the sum rounded to a micro-PKR, and on a BYOK
 * request only the service's share of that, rounded again. Whether the parts add up to the row's
 * settled cost is checked, not assumed: prices can change after a request was served.
 */
export function costOf(row: RequestRow, price: Price | null, byokShare: number): CostBreakdown {
  if (price === null) return { kind: 'unsplit', why: 'the catalogue has no price for this model' };
  if (row.metrics.prompt_tokens === null) return { kind: 'unsplit', why: "this row's prompt tokens were not recorded" };
  const parts: CostPart[] = tokensOf(row).parts.map((part) => {
    if (part.tokens === null) return { ...part, tokens: null, perMillion: null, micro: null };
    const perMillion = price[PRICE_OF[part.id]];
    return { ...part, tokens: part.tokens, perMillion, micro: part.tokens * perMillion };
  });
  const micro = (id: TokenPartId) => parts.find((part) => part.id === id)?.micro ?? 0;
  // Summed in the gateway's order (costMicro): a double sum in another order can round differently.
  const listMicro = Math.round(micro('prompt') + micro('generated') + micro('cache_write') + micro('cache_read'));
  const byok = row.financials.is_byok === 1;
  const expectedMicro = byok ? Math.round(listMicro * byokShare) : listMicro;
  const settledMicro = Math.round(row.financials.cost_pkr * 1_000_000);
  return {
    kind: 'split',
    parts,
    listMicro,
    expectedMicro,
    settledMicro,
    byok,
    byokShare,
    // The same arithmetic as the gateway's: equal to the micro-PKR (the PKR double rounds back exactly).
    addsUp: expectedMicro === settledMicro,
  };
}
