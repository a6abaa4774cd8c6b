import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import { actionLabel, actorText, targetKind, type ActivityEvent } from '../../lib/activity.js';

const COLUMNS: Column[] = [
  { label: 'Time' },
  { label: 'Actor' },
  { label: 'Action' },
  { label: 'Target' },
  { label: 'Source IP' },
];

/** One row per event, newest first as the server ordered them. */
export function ActivityTable(props: {
  /** Null until the first page has answered. */
  events: readonly ActivityEvent[] | null;
  loading: boolean;
  error: string | null;
  onRetry: () => void;
}) {
  return (
    <DataTable
      testId="activity-table"
      label="Audit trail, newest first"
      columns={COLUMNS}
      rows={props.events}
      // Events carry no id; their place in the trail is stable while this list lives.
      rowKey={(_, i) => i}
      row={(event) => <EventRow event={event} />}
      loading={props.loading && 'Reading the audit trail…'}
      error={props.error}
      onRetry={props.onRetry}
      errorTestId="activity-error"
      empty="Nothing has been recorded for this organisation yet."
    />
  );
}

function EventRow({ event }: { event: ActivityEvent }) {
  const actor = actorText(event);
  const kind = targetKind(event.action);
  return (
    <tr data-testid="activity-row" data-action={event.action}>
      <td>
        <Time iso={event.timestamp} />
      </td>
      <td data-testid="activity-actor">
        <span className={actor.muted ? 'muted' : undefined} title={actor.title}>
          {actor.text}
        </span>
      </td>
      <td data-testid="activity-action" className="activity-action">
        <span className="activity-label">{actionLabel(event.action)}</span> <code>{event.action}</code>
      </td>
      <td data-testid="activity-target" className="activity-target">
        {event.target === '' ? (
          <span className="muted" title="This action has no target">
            none
          </span>
        ) : (
          <span title={kind ?? undefined} className={kind === 'key prefix' ? 'mono' : undefined}>
            {event.target}
          </span>
        )}
      </td>
      <td className="mono" data-testid="activity-source">
        {event.source_ip}
      </td>
    </tr>
  );
}
