/** The telemetry side of a reconciliation as the worker pool carries it (reconcile-telemetry.ts answers it). */

/** Requests, tokens and cost (micro-PKR); a measure a table does not hold is null. */
export type Sums = [requests: number, tokens: number | null, costMicro: number | null];

export interface GroupTotal {
  /** null: rows without a project (or key). */
  id: string | null;
  sums: Sums;
}

/** One cell of a rollup table whose sums are not those of the rows it summarises. */
export interface CellDifference {
  table: string;
  /** The first millisecond of the cell compared; null for a day's cell (the day says where). */
  bucket: number | null;
  /** Its width: the table's grain, or five minutes for minute cells summed by five minutes. */
  width: number;
  projectId: string | null;
  keyId: string | null;
  model: string | null;
  /** What the rows add up to. */
  rows: Sums;
  /** What the cell holds. */
  cells: Sums;
}

export interface ReconcileDayQuery {
  orgId: string;
  projectId?: string;
  /** The day's first millisecond (UTC midnight). */
  day: number;
  /**
   * Retention's horizon: the rows before it may be deleted, so the cells there are checked
   * against the five-minute cells instead of rows, and the totals read as the console reads them.
   */
  horizon?: number;
  /** From when the fine grains' cells are kept (fine-cells.ts): on a day before, those tables are not checked. */
  fineFrom?: number;
}

export interface ReconcileDayResult {
  day: number;
  /** The organisation's total; null in a project's scope. */
  organization: Sums | null;
  projects: GroupTotal[];
  keys: GroupTotal[];
  /** Rows by project and key as the full cells hold them: a key's rows in a project not its own show here. */
  keyProjects: { projectId: string | null; keyId: string | null; sums: Sums }[];
  /** Rollup cells compared with their rows. */
  cellsChecked: number;
  /** The first MAX_DIFFERENCES of them; `differenceCount` counts them all. */
  differences: CellDifference[];
  differenceCount: number;
}

export interface ReconcileSpendQuery {
  orgId: string;
  /** The keys whose lifetime cost is read; null: every key with rows. */
  keyIds: string[] | null;
}

export interface KeyCost {
  keyId: string;
  costMicro: number;
}

export interface PendingSpend {
  settlement: string;
  keyId: string;
  micro: number;
}

export interface ReconcileSpendResult {
  /** Lifetime cost of each key's rows, from its day cells (every row is in its day's cell). */
  costs: KeyCost[];
  /** Spend written beside rows and not yet removed from the outbox (settled or not: the control store says which). */
  outbox: PendingSpend[];
}
