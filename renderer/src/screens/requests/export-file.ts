import { csvHeader, csvRecord, CSV_BOM, flatten } from '../../lib/csv.js';
import { zonedIso } from '../../lib/zone-time.js';
import type { RequestRow } from './request-row.js';

/**
 * How exported rows are written. CSV has one column per field of the row, nested fields
 * flattened (`metrics.total_ms`), metadata as JSON text in one column since its keys vary
 * from row to row (and the attempts, a JSON array, since their number does), and beside the
 * timestamp (UTC, as the contract gives it) the same instant in the organisation's reporting
 * zone; JSON is an array of rows exactly as the server gave them.
 */

export type ExportFormat = 'csv' | 'json';

/** Every field of a request-log row, in the order of the contract's table, then the fields beyond it. */
export const CSV_COLUMNS = [
  'req_id',
  'timestamp',
  'timestamp_local',
  'model',
  'status',
  'stream',
  'key.id',
  'key.name',
  'project.id',
  'project.name',
  'metrics.total_ms',
  'metrics.ttft_ms',
  'metrics.tpot_ms',
  'metrics.pre_dispatch_ms',
  'metrics.prompt_tokens',
  'metrics.tokens_generated',
  'metrics.cache_creation_input_tokens',
  'metrics.cache_read_input_tokens',
  'metrics.total_tokens',
  'metrics.tokens_estimated',
  'financials.cost_pkr',
  'financials.is_byok',
  'status_detail.termination_reason',
  'status_detail.upstream_error',
  'upstream.model',
  'upstream.provider',
  'upstream.attempts',
  'user_agent',
  'metadata',
  'api',
] as const;

export const JSON_COLUMNS_AS_TEXT = ['metadata'] as const;

/**
 * Builds the file a page at a time. Each page is written out as text and handed to a Blob
 * of its own straight away, so the rows themselves are not kept; the file is those Blobs
 * joined. The page's text is a string while it is built: a page is at most 200 rows.
 */
export class ExportFileBuilder {
  private readonly parts: Blob[];
  private rows = 0;

  /** `zone`: the reporting zone of the CSV's `timestamp_local`. */
  constructor(
    readonly format: ExportFormat,
    private readonly zone = 'UTC',
  ) {
    this.parts = [new Blob([format === 'csv' ? CSV_BOM + csvHeader(CSV_COLUMNS) : '[\n'])];
  }

  get count(): number {
    return this.rows;
  }

  add(rows: readonly RequestRow[]): void {
    if (rows.length === 0) return;
    let text: string;
    if (this.format === 'csv') {
      text = rows
        .map((row) => {
          const local = zonedIso(this.zone, Date.parse(row.timestamp));
          return csvRecord(CSV_COLUMNS, { ...flatten(row, JSON_COLUMNS_AS_TEXT), timestamp_local: local });
        })
        .join('');
    } else {
      // One row a line: still one JSON document, and readable with a line-oriented tool.
      const lead = this.rows === 0 ? '' : ',\n';
      text = lead + rows.map((row) => JSON.stringify(row)).join(',\n');
    }
    this.parts.push(new Blob([text]));
    this.rows += rows.length;
  }

  finish(): Blob {
    const type = this.format === 'csv' ? 'text/csv;charset=utf-8' : 'application/json';
    return new Blob(this.format === 'csv' ? this.parts : [...this.parts, '\n]\n'], { type });
  }
}

/** requests-2026-11-22-0749.csv: local time, sortable, safe in every file system. */
export function exportFileName(format: string, now: Date = new Date(), prefix = 'requests'): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())}-${two(now.getHours())}${two(now.getMinutes())}${two(now.getSeconds())}`;
  return `${prefix}-${stamp}.${format}`;
}
