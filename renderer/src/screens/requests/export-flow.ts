import { api } from '../../state/api.js';
import { ExportFileBuilder, type ExportFormat } from './export-file.js';
import { EXPORT_PAGE_SIZE, type RequestsQuery } from './query.js';

/**
 * Export of everything the filter matches, not only the page on screen: pages of 200
 * (the server's clamp) by offset, in the server's order (newest first, ties by req_id
 * descending). Rows that arrive while the export runs land at the top and push older ones
 * down a few places, so a page can repeat rows already written: they are skipped by id.
 * The export ends at the first short page, not at the first `total`, which may grow.
 */

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
}

export class ExportCancelled extends Error {
  constructor() {
    super('export cancelled');
    this.name = 'ExportCancelled';
  }
}

export async function exportRequests(
  filter: Omit<RequestsQuery, 'limit' | 'offset'>,
  format: ExportFormat,
  options: { signal: AbortSignal; onProgress: (progress: ExportProgress) => void },
): Promise<ExportOutcome> {
  const builder = new ExportFileBuilder(format);
  const seen = new Set<string>();
  let offset = 0;
  let totalAtStart: number | null = null;
  let total = 0;
  for (;;) {
    if (options.signal.aborted) throw new ExportCancelled();
    const page = await api('api.requests', { query: { ...filter, limit: EXPORT_PAGE_SIZE, offset } });
    // A bridge call cannot be called back; its answer is dropped instead.
    if (options.signal.aborted) throw new ExportCancelled();
    totalAtStart ??= page.total;
    total = page.total;
    const fresh = page.requests.filter((row) => !seen.has(row.req_id));
    for (const row of fresh) seen.add(row.req_id);
    builder.add(fresh);
    offset += page.requests.length;
    options.onProgress({ fetched: builder.count, total: Math.max(total, builder.count) });
    if (page.requests.length === 0 || page.requests.length < page.limit) break;
  }
  return { blob: builder.finish(), rows: builder.count, totalAtStart: totalAtStart ?? total, totalAtEnd: total };
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
