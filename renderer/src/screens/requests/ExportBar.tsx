import { ErrorNote } from '../../components/Feedback.js';
import { formatCount } from '../../lib/format.js';
import { useRoute } from '../../state/route.js';
import type { ExportFormat } from './export-file.js';
import { useExport } from './export-store.js';
import { filterQuery } from './query.js';

/** Export of every row the current filter matches (all pages), with progress and a way out. */
export function ExportBar() {
  const params = useRoute((s) => s.params);
  const state = useExport();
  const running = state.status === 'running';
  const start = (format: ExportFormat) => void state.start(format, filterQuery(params));

  return (
    <div className="requests-export" role="group" aria-label="Export" data-testid="export-bar">
      <button type="button" disabled={running} onClick={() => start('csv')} data-testid="export-csv">
        Export CSV
      </button>
      <button type="button" disabled={running} onClick={() => start('json')} data-testid="export-json">
        Export JSON
      </button>
      {running && (
        <span className="requests-export-progress" data-testid="export-progress">
          <span className="muted">Exporting {state.format?.toUpperCase()}:</span>
          {/* Indeterminate until the first page tells how many rows there are. */}
          <progress
            value={state.total === null ? undefined : state.fetched}
            max={state.total || 1}
            aria-label="Rows fetched"
            data-testid="export-progress-bar"
          />
          <span aria-live="polite">
            {formatCount(state.fetched)} of {state.total === null ? '…' : formatCount(state.total)} rows
          </span>
          <button type="button" disabled={state.cancelling} onClick={state.cancel} data-testid="export-cancel">
            {state.cancelling ? 'Cancelling…' : 'Cancel'}
          </button>
        </span>
      )}
      {state.status === 'done' && (
        <span role="status" data-testid="export-done">
          Wrote {formatCount(state.written)} {state.written === 1 ? 'row' : 'rows'} to {state.fileName}
          {state.totalAtStart !== null && state.totalAtStart !== state.written && (
            <span className="muted">
              {' '}
              (the filter matched {formatCount(state.totalAtStart)} when the export began: requests arrived or left the
              time range while it ran)
            </span>
          )}
        </span>
      )}
      {state.status === 'cancelled' && (
        <span role="status" className="muted" data-testid="export-cancelled">
          Export cancelled; nothing was saved.
        </span>
      )}
      {state.status === 'failed' && <ErrorNote error={`Export failed: ${state.error ?? ''}`} testId="export-error" />}
    </div>
  );
}
