import { rangeBackTo } from '../../lib/time-range.js';
import type { RouteParams } from '../../state/route.js';

/**
 * Where a health figure leads: the request log filtered to its model, its time and, for a cell
 * with errors, their status class. The request log's window is "the last N" (the contract's
 * `time_range`), so a cell opens on the rows from its start up to now, the cell's own at the
 * end of the list; errors that are all upstream 429s are 4xx, any other mix is led by the 5xx.
 */

export interface CellCounts {
  errors: number;
  upstream429: number;
}

export function errorStatus({ errors, upstream429 }: CellCounts): string | null {
  if (errors === 0) return null;
  return errors === upstream429 ? '4xx' : '5xx';
}

export function cellLogParams(model: string, cellStart: number, now: number, counts: CellCounts): RouteParams {
  const status = errorStatus(counts);
  return { model, range: rangeBackTo(cellStart, now, 'm'), ...(status ? { status } : {}) };
}

export function windowLogParams(model: string, window: string): RouteParams {
  return { model, range: window };
}
