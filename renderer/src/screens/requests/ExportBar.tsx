import { EXPORT_REQUESTS_SHORTCUT, shortcutHint } from '../../commands/shortcut.js';
import { ConfirmDialog } from '../../components/Dialog.js';
import { ErrorNote } from '../../components/Feedback.js';
import { formatCount } from '../../lib/format.js';
import { useRoute } from '../../state/route.js';
import type { ExportFormat } from './export-file.js';
import { useExport } from './export-store.js';
import { filterQuery } from './request-query.js';

/** Export of every row the current filter matches (all pages), with progress and a way out. */
export function ExportBar() {
  const params = useRoute((s) => s.params);
  const status = useExport((s) => s.status);
  const format = useExport((s) => s.format);
  const fetched = useExport((s) => s.fetched);
  const total = useExport((s) => s.total);
  const cancelling = useExport((s) => s.cancelling);
  const confirming = useExport((s) => s.confirming);
  const begin = useExport((s) => s.start);
  const cancel = useExport((s) => s.cancel);
  const running = status === 'running';
  const start = (chosen: ExportFormat) => void begin(chosen, filterQuery(params));

  return (
    <div className="requests-export" role="group" aria-label="Export" data-testid="export-bar">
      <button
        type="button"
        disabled={running}
        onClick={() => start('csv')}
        {...shortcutHint('Export the request log as CSV', EXPORT_REQUESTS_SHORTCUT)}
        data-testid="export-csv"
      >
        Export CSV
      </button>
      <button type="button" disabled={running} onClick={() => start('json')} data-testid="export-json">
        Export JSON
      </button>
      {running && (
        <span className="requests-export-progress" data-testid="export-progress">
          <span className="muted">Exporting {format?.toUpperCase()}:</span>
          {/* Indeterminate until the first page tells how many rows there are. */}
          <progress
            value={total === null ? undefined : fetched}
            max={total || 1}
            aria-label="Rows fetched"
            data-testid="export-progress-bar"
          />
          <span aria-live="polite">
            {formatCount(fetched)} of {total === null ? '…' : formatCount(total)} rows
          </span>
          <button type="button" disabled={cancelling} onClick={cancel} data-testid="export-cancel">
            {cancelling ? 'Cancelling…' : 'Cancel'}
          </button>
        </span>
      )}
      {confirming && (
        <ConfirmDialog
          title="Export a very large file?"
          message={`This filter matches ${formatCount(confirming.total)} requests. The file will be large, and the console holds it in memory until it is saved. Narrowing the filter gives a smaller file.`}
          confirmLabel={`Export ${formatCount(confirming.total)} rows`}
          onConfirm={() => confirming.answer(true)}
          onClose={() => confirming.answer(false)}
        />
      )}
      <ExportOutcome />
    </div>
  );
}

/** How the last export ended. */
function ExportOutcome() {
  const status = useExport((s) => s.status);
  const written = useExport((s) => s.written);
  const totalAtStart = useExport((s) => s.totalAtStart);
  const skipped = useExport((s) => s.skipped);
  const fileName = useExport((s) => s.fileName);
  const error = useExport((s) => s.error);

  if (status === 'done') {
    return (
      <span role="status" data-testid="export-done">
        Wrote {formatCount(written)} {written === 1 ? 'row' : 'rows'} to {fileName}
        {totalAtStart !== null && totalAtStart !== written && (
          <span className="muted">
            {' '}
            (the filter matched {formatCount(totalAtStart)} when the export began: requests arrived or left the time
            range while it ran)
          </span>
        )}
        {skipped > 0 && (
          <span className="warning" data-testid="export-skipped">
            {' '}
            {formatCount(skipped)} {skipped === 1 ? 'row' : 'rows'} may have been skipped because the list moved while
            it was read; export again to be sure of every row.
          </span>
        )}
      </span>
    );
  }
  if (status === 'cancelled') {
    return (
      <span role="status" className="muted" data-testid="export-cancelled">
        Export cancelled; nothing was saved.
      </span>
    );
  }
  if (status === 'failed') return <ErrorNote error={`Export failed: ${error ?? ''}`} testId="export-error" />;
  return null;
}
