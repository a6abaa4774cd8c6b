import { performance } from 'node:perf_hooks';
import { settledCostMicro, type RoutePrice } from '../domain/route-catalogue.js';
import type { Attempt } from '../schemas/request-log.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { Measured } from './deliver.js';
import { estimatedTokens, gatewayRow, type RowStart } from './request-facts.js';

export interface ServedFacts {
  measured: Measured;
  preDispatchMs: number;
  /** The target that answered, null when none did. */
  served: { name: string; model: string; isByok: boolean } | null;
  price: RoutePrice;
  promptCache: boolean;
  /** False for a call that costs nothing (counting tokens): no tokens, no charge. */
  billed: boolean;
  attempts: Attempt[];
}

/**
 * A served request's row: tokens and cost from the serving target's usage (failed attempts cost
 * the key nothing), estimated from the text only when it gave none.
 */
export function servedRow(
  input: { start: RowStart; arrived: number; promptCharacters: number },
  facts: ServedFacts,
): RequestRecord {
  const { measured, served, price, promptCache } = facts;
  const usage = facts.billed ? measured.usage : null;
  const answered = facts.billed && served !== null && measured.status < 400;
  const estimated = answered && usage === null;
  const cached = promptCache ? (usage?.cachedPrompt ?? 0) : 0;
  const cacheWrite = promptCache ? (usage?.cacheWrite ?? 0) : 0;
  // An upstream that reports more cached tokens than prompt tokens is wrong, not owed a refund.
  const prompt = usage
    ? Math.max(0, usage.prompt - cached - cacheWrite)
    : answered
      ? estimatedTokens(input.promptCharacters)
      : 0;
  const generated = usage ? usage.completion : answered ? Math.ceil(measured.generatedCharacters / 4) : 0;
  const isByok = served?.isByok ?? false;
  const cost = answered ? settledCostMicro(price, { prompt, generated, cacheWrite, cacheRead: cached }, isByok) : 0;
  return gatewayRow(input.start, {
    status: measured.status,
    total_ms: performance.now() - input.arrived,
    ttft_ms: measured.ttftMs,
    tpot_ms: measured.tpotMs,
    pre_dispatch_ms: facts.preDispatchMs,
    prompt_tokens: prompt,
    tokens_generated: generated,
    cache_creation_input_tokens: promptCache ? cacheWrite : null,
    cache_read_input_tokens: promptCache ? cached : null,
    total_tokens: prompt + generated + cached + cacheWrite,
    tokens_estimated: estimated ? 1 : 0,
    cost_micro: cost,
    is_byok: isByok ? 1 : 0,
    termination_reason: measured.termination,
    upstream_error: measured.upstreamError,
    upstream_model: served?.model ?? lastTried(facts.attempts),
    served_by: served?.name ?? null,
    attempts: facts.attempts,
  });
}

/** The model of the last target actually asked, for a request none served. */
function lastTried(attempts: readonly Attempt[]): string | null {
  const made = attempts.filter((entry) => entry.decision !== 'skipped').at(-1);
  return made ? made.target.slice(made.target.indexOf('/') + 1) : null;
}
