import { ErrorNote } from '../../components/Feedback.js';
import { formatCount } from '../../lib/format.js';
import { useRoute } from '../../state/route.js';
import { activityFilterQuery } from './activity-query.js';
import { useActivityExport } from './activity-export-store.js';
import type { ActivityExportFormat } from './activity-export.js';

/** Export of every event the filters match (all pages), with progress and a way out. */
export function ActivityExport() {
  const params = useRoute((s) => s.params);
  const status = useActivityExport((s) => s.status);
  const format = useActivityExport((s) => s.format);
  const fetched = useActivityExport((s) => s.fetched);
  const total = useActivityExport((s) => s.total);
  const fileName = useActivityExport((s) => s.fileName);
  const error = useActivityExport((s) => s.error);
  const begin = useActivityExport((s) => s.start);
  const cancel = useActivityExport((s) => s.cancel);
  const running = status === 'running';
  const start = (chosen: ActivityExportFormat) => void begin(chosen, activityFilterQuery(params));

  return (
    <div className="activity-export" role="group" aria-label="Export" data-testid="activity-export">
      <button type="button" disabled={running} onClick={() => start('csv')} data-testid="activity-export-csv">
        Export CSV
      </button>
      <button type="button" disabled={running} onClick={() => start('ndjson')} data-testid="activity-export-ndjson">
        Export NDJSON
      </button>
      {running && (
        <span className="activity-export-progress" data-testid="activity-export-progress">
          <span className="muted">Exporting {format?.toUpperCase()}:</span>
          {/* Indeterminate until the first page tells how many events match. */}
          <progress value={total === null ? undefined : fetched} max={total || 1} aria-label="Events fetched" />
          <span aria-live="polite">
            {formatCount(fetched)} of {total === null ? '…' : formatCount(total)} events
          </span>
          <button type="button" onClick={cancel} data-testid="activity-export-cancel">
            Cancel
          </button>
        </span>
      )}
      {status === 'done' && (
        <span role="status" data-testid="activity-export-done">
          Wrote {formatCount(fetched)} {fetched === 1 ? 'event' : 'events'} to {fileName}
        </span>
      )}
      {status === 'cancelled' && (
        <span role="status" className="muted" data-testid="activity-export-cancelled">
          Export cancelled; nothing was saved.
        </span>
      )}
      {status === 'failed' && <ErrorNote error={`Export failed: ${error ?? ''}`} testId="activity-export-error" />}
    </div>
  );
}
