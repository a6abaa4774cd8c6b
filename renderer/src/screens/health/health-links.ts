import type { RouteParams } from '../../state/route.js';

/**
 * Where a health figure leads: the request log between the exact instants it covers (a cell's
 * five minutes, or the whole window), filtered to its model or its provider's models and, for
 * a cell with errors, their status class: errors that are all upstream 429s are 4xx, any other
 * mix is led by the 5xx. A figure's requests are then the log's rows; its errors are among the
 * rows of that status class, which also holds the gateway's own refusals (4xx) and leaves out
 * upstream 429s (5xx), as the log has no filter for an upstream's error.
 */

export interface CellCounts {
  errors: number;
  upstream429: number;
}

/**
 * Whose requests: one model, or the models the catalogue gives one provider, and of those only
 * the ones a route target served when the screen is narrowed to it (the log filters by it too).
 */
export type HealthSubject = ({ model: string } | { provider: string }) & { target?: string };

export function errorStatus({ errors, upstream429 }: CellCounts): string | null {
  if (errors === 0) return null;
  return errors === upstream429 ? '4xx' : '5xx';
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The log of one cell, `[start, start + cellMs)`. */
export function cellLogParams(subject: HealthSubject, start: number, cellMs: number, counts: CellCounts): RouteParams {
  const status = errorStatus(counts);
  return { ...subject, from: iso(start), to: iso(start + cellMs), ...(status ? { status } : {}) };
}

/** The log of the whole window, from its first cell's start to its last instant (included). */
export function windowLogParams(subject: HealthSubject, from: number, last: number): RouteParams {
  return { ...subject, from: iso(from), to: iso(last + 1) };
}
