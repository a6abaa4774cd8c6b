import { addBin, binOf, type Bins } from './latency-sketch.js';
import type { RequestRecord } from './request-record.js';

/**
 * The dashboard's cells (migrations/008_dashboard_rollups.sql) as the import sums them: the
 * measures in the tables' column order, and the latency and first-token sketches as bins.
 */

export const BOARD_MEASURES = [
  'requests',
  'ok',
  'client_errors',
  'server_errors',
  'refused',
  'cost_micro',
  'prompt_tokens',
  'prompt_rows',
  'generated_tokens',
  'cache_read',
  'cache_write',
  'cache_rows',
  'speed_tokens',
  'speed_ms',
  // Migration 010: 429s the upstream answered, apart from the gateway's own (in `refused`).
  'upstream_429',
] as const;

export interface BoardCell {
  measures: number[];
  latency: Bins;
  /** Null until a row with a first-token time comes. */
  ttft: Bins | null;
  /** The newest `ts` of a row counted `ok` (migration 010's last_ok); null until one comes. */
  lastOk: number | null;
}

/** What one row adds to a cell, worked out once for the four dimensions it is added to. */
export interface BoardDelta {
  measures: number[];
  latencyBin: number;
  ttftBin: number | null;
  /** The row's `ts` when it counts `ok`, else null. */
  okAt: number | null;
}

export function boardDelta(row: RequestRecord, speedTokens: number, speedMs: number): BoardDelta {
  const status = row.status;
  const fourxx = status >= 400 && status < 500;
  const cacheKnown = row.cache_read_input_tokens !== null || row.cache_creation_input_tokens !== null;
  return {
    measures: [
      1,
      status < 400 ? 1 : 0,
      fourxx && row.upstream_error !== null ? 1 : 0,
      status >= 500 ? 1 : 0,
      // Refused before dispatch: a 4xx the upstream never explained.
      fourxx && row.upstream_error === null ? 1 : 0,
      row.cost_micro,
      row.prompt_tokens ?? 0,
      row.prompt_tokens === null ? 0 : 1,
      row.tokens_generated,
      row.cache_read_input_tokens ?? 0,
      row.cache_creation_input_tokens ?? 0,
      cacheKnown ? 1 : 0,
      speedTokens,
      speedMs,
      status === 429 && row.upstream_error !== null ? 1 : 0,
    ],
    latencyBin: binOf(row.total_ms),
    ttftBin: row.ttft_ms === null ? null : binOf(row.ttft_ms),
    okAt: status < 400 ? row.ts : null,
  };
}

export function newBoardCell(): BoardCell {
  return { measures: BOARD_MEASURES.map(() => 0), latency: new Map(), ttft: null, lastOk: null };
}

/** The later of two `last_ok` times, either of which may be unknown. */
const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** Adds a row's delta; returns how many sketch bins it made (they bound the import's memory too). */
export function addDelta(cell: BoardCell, delta: BoardDelta): number {
  const m = cell.measures;
  for (let i = 0; i < m.length; i++) m[i]! += delta.measures[i]!;
  cell.lastOk = later(cell.lastOk, delta.okAt);
  let made = cell.latency.has(delta.latencyBin) ? 0 : 1;
  addBin(cell.latency, delta.latencyBin);
  if (delta.ttftBin !== null) {
    cell.ttft ??= new Map();
    if (!cell.ttft.has(delta.ttftBin)) made++;
    addBin(cell.ttft, delta.ttftBin);
  }
  return made;
}

/** Adds one cell to another (a finer grain's into a coarser one). */
export function addCell(into: BoardCell, cell: BoardCell): void {
  for (let i = 0; i < into.measures.length; i++) into.measures[i]! += cell.measures[i]!;
  into.lastOk = later(into.lastOk, cell.lastOk);
  for (const [bin, count] of cell.latency) addBin(into.latency, bin, count);
  if (cell.ttft) {
    into.ttft ??= new Map();
    for (const [bin, count] of cell.ttft) addBin(into.ttft, bin, count);
  }
}
