import type { RequestApi } from '../schemas/request-log.js';

/**
 * What provider and model health (health.ts) is made of, read from the dashboard's cells
 * (health.ts) or, narrowed to a target or an API, from those rows (health-rows.ts).
 */

export const HEALTH_CELL_MS = 300_000;
export const DAY_MS = 86_400_000;

export interface HealthQuery {
  orgId: string;
  /** The first cell's start, a multiple of HEALTH_CELL_MS. */
  from: number;
  /** How many cells: the last one holds `to`. */
  cells: number;
  /** The window's end (now, or the last cell's end for a window in the past), included. */
  to: number;
  /** Models with no traffic in the window but some since this instant are listed too. */
  listedSince: number;
  /** Each model's provider, from the model catalogue; a model it does not name has none. */
  providers: Record<string, string>;
  /** Only the rows this target (`provider/model`) served: read from the rows (health-rows.ts). */
  servedBy?: string;
  /** Only the rows that came in on this API of the gateway's: read from the rows too. */
  api?: RequestApi;
}

/** One model's counts in one five-minute cell. */
export interface CellRow {
  model: string;
  bucket: number;
  requests: number;
  refused: number;
  errors: number;
  upstream429: number;
}

/** Sketches of some of a model's requests in the window (several rows of a model are merged). */
export interface SketchRow {
  model: string;
  latency: Uint8Array | null;
  ttft: Uint8Array | null;
}

/**
 * A model's last success and last traffic up to the window's end: `seen` is the start of the
 * day cell of its last traffic before the end's day, or of its five-minute cell on that day.
 */
export interface HistoryRow {
  model: string;
  lastOk: number | null;
  seen: number;
}

/** What the figures are made of, from the cells or (health-rows.ts) from one target's or one API's rows. */
export interface HealthReads {
  cells: CellRow[];
  sketches: SketchRow[];
  history: HistoryRow[];
}
