import type { RouteParams } from '../../state/route.js';

/**
 * Where a health figure leads: the request log filtered to its model, its time and, for a cell
 * with errors, their status class. The request log's window is "the last N" (the contract's
 * `time_range`), so a cell opens on the rows from its start up to now, the cell's own at the
 * end of the list; errors that are all upstream 429s are 4xx, any other mix is led by the 5xx.
 */

const MINUTE = 60_000;

export interface CellCounts {
  errors: number;
  upstream429: number;
}

/** The request log's range reaching back to `since`, in whole minutes (at least one). */
export function rangeSince(since: number, now: number): string {
  return `${Math.max(1, Math.ceil((now - since) / MINUTE))}m`;
}

export function errorStatus({ errors, upstream429 }: CellCounts): string | null {
  if (errors === 0) return null;
  return errors === upstream429 ? '4xx' : '5xx';
}

export function cellLogParams(model: string, cellStart: number, now: number, counts: CellCounts): RouteParams {
  const status = errorStatus(counts);
  return { model, range: rangeSince(cellStart, now), ...(status ? { status } : {}) };
}

export function windowLogParams(model: string, window: string): RouteParams {
  return { model, range: window };
}
