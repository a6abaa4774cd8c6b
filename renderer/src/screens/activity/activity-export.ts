import { csvHeader, csvRecord, CSV_BOM } from '../../lib/csv.js';
import type { CallResult } from '#contract';
import type { ActivityEntry } from '../../lib/activity.js';
import { api } from '../../state/api.js';
import { EXPORT_PAGE_SIZE, ExportCancelled } from '../requests/export-flow.js';
import type { ActivityFilterQuery } from './activity-query.js';

/**
 * Export of every event the filters match, not only those shown: pages of 200 (the server's
 * clamp) by place (`before`), newest first, until the last. Pages by place do not move when
 * events are recorded meanwhile, so no event repeats or is skipped; events recorded after the
 * export began are not in it. Each page is turned into text and into a Blob of its own at once
 * (as the request log's export does), so the events themselves are not kept.
 */

export type ActivityExportFormat = 'csv' | 'ndjson';
type ActivityPage = CallResult<'api.activityEntries'>;

/** Every field of an entry; the change's two sides as JSON text, since their fields vary by action. */
export const ACTIVITY_CSV_COLUMNS = [
  'position',
  'timestamp',
  'actor',
  'action',
  'target',
  'source_ip',
  'change.before',
  'change.after',
  'hash',
] as const;

function csvOf(entry: ActivityEntry): string {
  return csvRecord(ACTIVITY_CSV_COLUMNS, {
    ...entry,
    'change.before': entry.change?.before ? JSON.stringify(entry.change.before) : null,
    'change.after': entry.change?.after ? JSON.stringify(entry.change.after) : null,
  });
}

export interface ActivityExportOutcome {
  blob: Blob;
  rows: number;
}

export async function exportActivity(
  filter: ActivityFilterQuery,
  format: ActivityExportFormat,
  options: { signal: AbortSignal; onProgress: (fetched: number, total: number | null) => void },
): Promise<ActivityExportOutcome> {
  const parts: Blob[] = format === 'csv' ? [new Blob([CSV_BOM + csvHeader(ACTIVITY_CSV_COLUMNS)])] : [];
  let rows = 0;
  let total: number | null = null;
  let before: number | null = null;
  for (;;) {
    if (options.signal.aborted) throw new ExportCancelled();
    const page: ActivityPage = await api('api.activityEntries', {
      query: { ...filter, limit: EXPORT_PAGE_SIZE, ...(before === null ? {} : { before }) },
    });
    // A bridge call cannot be called back; its answer is dropped instead.
    if (options.signal.aborted) throw new ExportCancelled();
    if (page.total !== null) total = page.total;
    if (page.entries.length > 0) {
      const text =
        format === 'csv'
          ? page.entries.map(csvOf).join('')
          : page.entries.map((entry) => JSON.stringify(entry) + '\n').join('');
      parts.push(new Blob([text]));
      rows += page.entries.length;
    }
    options.onProgress(rows, total === null ? null : Math.max(total, rows));
    if (page.next_before === null) break;
    before = page.next_before;
  }
  const type = format === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson';
  return { blob: new Blob(parts, { type }), rows };
}
