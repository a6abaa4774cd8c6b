import { formatCount } from './format.js';
import type { RouteParams } from '../state/route.js';

/** Which page of a server-paged list is on screen (the `page` of the address), and how that reads. */

export function pageOf(params: RouteParams): number {
  const page = Number(params.page);
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/** "1–50 of 12,345": the rows on screen and how many the list holds; `none` when it holds none. */
export function pageText(offset: number, shown: number, total: number, none: string): string {
  if (shown === 0) return total === 0 ? none : `None on this page of ${formatCount(total)}`;
  return `${formatCount(offset + 1)}–${formatCount(offset + shown)} of ${formatCount(total)}`;
}
