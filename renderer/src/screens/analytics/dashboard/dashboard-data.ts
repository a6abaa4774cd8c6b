import { changeText, shareText } from '../../../lib/change.js';
import { formatCount, formatDecimal, formatMs } from '../../../lib/format.js';
import type { Dashboard } from './dashboard-store.js';

/**
 * The dashboard's answer as the panels draw it: one row per bucket (its index is the shared
 * time axis), and the prompt cache by model in the order the table shows it. Null stays null
 * (unknown: a gap in a line or an area, "–" in a table), never 0.
 */

export type Bucket = Dashboard['buckets'][number];
export type CacheRow = Dashboard['cache'][number];

export interface DashboardRow {
  /** The bucket's index in the answer: the x axis of every panel. */
  i: number;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  refused: number;
  costMicro: number;
  latencyP50: number | null;
  latencyP95: number | null;
  latencyP99: number | null;
  ttftP50: number | null;
  ttftP95: number | null;
  /** Null: unknown for every request of the bucket. */
  prompt: number | null;
  generated: number;
  cacheRead: number | null;
  cacheWrite: number | null;
  tokensPerSecond: number | null;
}

export type RowKey = Exclude<keyof DashboardRow, 'i'>;

export function dashboardRows(buckets: readonly Bucket[]): DashboardRow[] {
  return buckets.map((b, i) => ({
    i,
    ok: b.ok,
    clientErrors: b.client_errors,
    serverErrors: b.server_errors,
    refused: b.refused,
    costMicro: b.cost_micro,
    latencyP50: b.latency_ms?.p50 ?? null,
    latencyP95: b.latency_ms?.p95 ?? null,
    latencyP99: b.latency_ms?.p99 ?? null,
    ttftP50: b.ttft_ms?.p50 ?? null,
    ttftP95: b.ttft_ms?.p95 ?? null,
    prompt: b.tokens.prompt,
    generated: b.tokens.generated,
    cacheRead: b.tokens.cache_read,
    cacheWrite: b.tokens.cache_write,
    tokensPerSecond: b.tokens_per_second,
  }));
}

/** The sum of a figure over the rows, null when every row's is unknown. */
export function total(rows: readonly DashboardRow[], key: RowKey): number | null {
  let sum: number | null = null;
  for (const row of rows) {
    const value = row[key];
    if (value !== null) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** Whether any row has a known value of these figures. */
export function anyKnown(rows: readonly DashboardRow[], keys: readonly RowKey[]): boolean {
  return rows.some((row) => keys.some((key) => row[key] !== null));
}

/** Whether the window saw a request at all. */
export function hasRequests(buckets: readonly Bucket[]): boolean {
  return buckets.some((b) => b.requests > 0);
}

/**
 * The cache table's order: most saved first; an unknown saving (no price) after every known
 * one; then by prompt tokens, most first, and by name.
 */
export function cacheRows(cache: readonly CacheRow[]): CacheRow[] {
  return [...cache].sort(
    (a, b) =>
      (b.saved_micro ?? -Infinity) - (a.saved_micro ?? -Infinity) ||
      (b.prompt_tokens ?? -1) - (a.prompt_tokens ?? -1) ||
      a.model.localeCompare(b.model),
  );
}

const share = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** A share (0.423) as "42.3 %"; null is unknown. */
export function percentText(fraction: number | null): string | null {
  return fraction === null ? null : `${share.format(fraction * 100)} %`;
}

const bound = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 2 });

/** The sketches' relative error bound (0.01) as people read it: "1 %". */
export function errorBoundText(relativeError: number): string {
  return `${bound.format(relativeError * 100)} %`;
}

type Figures = Dashboard['totals']['current'];

/** Every token of the window whose count is known. */
const tokensOf = (f: Figures) =>
  (f.tokens.prompt ?? 0) + f.tokens.generated + (f.tokens.cache_read ?? 0) + (f.tokens.cache_write ?? 0);

/** A figure against the window before, where both are known ("–" otherwise). */
const versus = (now: number | null | undefined, before: number | null | undefined) =>
  now === null || now === undefined || before === null || before === undefined ? '–' : changeText(now, before);

/** Each panel's figure over the whole window beside the window just before it. */
export function versusBefore({ current: c, previous: p }: Dashboard['totals']) {
  return {
    outcomes:
      `${formatCount(c.requests)} requests, ${versus(c.requests, p.requests)} vs before; ` +
      `5xx ${shareText(c.server_errors, c.requests)}, ${shareText(p.server_errors, p.requests)} before`,
    spend: `${versus(c.cost_micro, p.cost_micro)} vs before`,
    latency:
      `p95 ${formatMs(c.latency_ms?.p95)}, ${versus(c.latency_ms?.p95, p.latency_ms?.p95)} vs before; ` +
      `time to first token p95 ${formatMs(c.ttft_ms?.p95)}`,
    tokens: `${formatCount(tokensOf(c))} tokens, ${versus(tokensOf(c), tokensOf(p))} vs before`,
    speed: `${formatDecimal(c.tokens_per_second, ' tok/s')}, ${versus(c.tokens_per_second, p.tokens_per_second)} vs before`,
  };
}
