import { api } from '../../state/api.js';
import { ExportFileBuilder, type ExportFormat } from './export-file.js';
import type { FilterQuery } from './request-query.js';
import type { RequestRow } from './request-row.js';

/**
 * Export of everything the filter matches, not only the page on screen: pages of 200 (the
 * server's clamp) by offset, in the server's order (newest first, ties by req_id
 * descending), until a short page; not until the first `total`, which may change.
 *
 * The list moves while the export reads it, and the API has no "before" to pin it:
 * - requests that arrive land at the top and push older ones down, so a page may begin
 *   with rows already written; only rows strictly older than the last one written are
 *   written, so none repeats;
 * - requests leave the window at its old edge, the end of the list, which shortens the
 *   list without moving the rows not yet read;
 * - anything that removes rows above the point reached (rows deleted) would move older rows
 *   up past it unseen. Each page starts one row early, at the last row written: when that
 *   row is not where it should be, rows were skipped, and the outcome says how many may be.
 */

/** The server's clamp on `limit`: the export asks for whole pages of it. */
export const EXPORT_PAGE_SIZE = 200;

/** Above this many rows the export asks first: the file, and the memory it takes while built, grow with it. */
export const EXPORT_CONFIRM_ROWS = 200_000;

export interface ExportProgress {
  fetched: number;
  /** The latest `total` the server gave: what the progress bar counts towards. */
  total: number;
}

export interface ExportOutcome {
  blob: Blob;
  rows: number;
  totalAtStart: number;
  totalAtEnd: number;
  /** Rows that may have been skipped because the list moved up under the export (0 almost always). */
  skipped: number;
}

export interface ExportOptions {
  signal: AbortSignal;
  onProgress: (progress: ExportProgress) => void;
  /** Asked once the first page tells the total, when it is above EXPORT_CONFIRM_ROWS; false cancels. */
  confirmLarge?: (total: number) => Promise<boolean>;
}

export class ExportCancelled extends Error {
  constructor() {
    super('export cancelled');
    this.name = 'ExportCancelled';
  }
}

/** Where a row is in the server's order: newest first, then req_id descending. */
interface Place {
  ms: number;
  reqId: string;
}

const placeOf = (row: RequestRow): Place => ({ ms: Date.parse(row.timestamp), reqId: row.req_id });

/** Whether `row` comes after `last` in the server's order (so it has not been written yet). */
function after(row: Place, last: Place | null): boolean {
  // A time that does not read cannot be placed: it is written rather than lost.
  if (last === null || Number.isNaN(row.ms) || Number.isNaN(last.ms)) return true;
  return row.ms < last.ms || (row.ms === last.ms && row.reqId < last.reqId);
}

/** The organisation's reporting zone; UTC from a control plane that has none (beyond the contract). */
async function reportingZone(): Promise<string> {
  try {
    return (await api('api.reportingZone', {})).time_zone;
  } catch {
    return 'UTC';
  }
}

export async function exportRequests(
  filter: FilterQuery,
  format: ExportFormat,
  options: ExportOptions,
): Promise<ExportOutcome> {
  const builder = new ExportFileBuilder(format, format === 'csv' ? await reportingZone() : 'UTC');
  let last: Place | null = null;
  let offset = 0;
  let totalAtStart: number | null = null;
  let total = 0;
  let skipped = 0;
  for (;;) {
    if (options.signal.aborted) throw new ExportCancelled();
    const page = await api('api.requests', { query: { ...filter, limit: EXPORT_PAGE_SIZE, offset } });
    // A bridge call cannot be called back; its answer is dropped instead.
    if (options.signal.aborted) throw new ExportCancelled();
    if (totalAtStart === null) {
      totalAtStart = page.total;
      if (page.total > EXPORT_CONFIRM_ROWS && options.confirmLarge && !(await options.confirmLarge(page.total))) {
        throw new ExportCancelled();
      }
    }
    const fresh = page.requests.filter((row) => after(placeOf(row), last));
    // The page starts at the last row written. When its first row is already past that one,
    // the list moved up by d rows and d - 1 were passed over: d is what the total lost (when
    // nothing arrived meanwhile), and at least one row may have been.
    const first = page.requests[0];
    if (last !== null && first !== undefined && after(placeOf(first), last)) {
      skipped += Math.max(1, total - page.total - 1);
    }
    total = page.total;
    builder.add(fresh);
    const end = fresh[fresh.length - 1];
    if (end) last = placeOf(end);
    options.onProgress({ fetched: builder.count, total: Math.max(total, builder.count) });
    if (page.requests.length < page.limit) break;
    offset += Math.max(1, page.requests.length - 1);
  }
  return {
    blob: builder.finish(),
    rows: builder.count,
    totalAtStart: totalAtStart ?? total,
    totalAtEnd: total,
    skipped,
  };
}

/** Hands a file to the browser's download (the web shell and Electron both save it). */
export function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking at once can cancel a download the browser has not started reading yet.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
