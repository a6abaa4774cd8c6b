import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import { actionLabel, actorText, targetKind, type ActivityItem } from '../../lib/activity.js';
import { ChangeDiff } from './ChangeDiff.js';

const COLUMNS: Column[] = [
  { label: '#', number: true },
  { label: 'Time' },
  { label: 'Actor' },
  { label: 'Action' },
  { label: 'Target' },
  { label: 'Change' },
  { label: 'Source IP' },
];

/** One row per event, newest first as the server ordered them. */
export function ActivityTable(props: {
  /** Null until the first page has answered. */
  events: readonly ActivityItem[] | null;
  loading: boolean;
  error: string | null;
  onRetry: () => void;
  /** The filters leave nothing: said so, rather than that nothing was ever recorded. */
  filtered: boolean;
}) {
  return (
    <DataTable
      testId="activity-table"
      label="Audit trail, newest first"
      columns={COLUMNS}
      rows={props.events}
      // The extension's events have a place; the contract's list is stable while this list lives.
      rowKey={(event, i) => event.position ?? i}
      row={(event) => <EventRow event={event} />}
      loading={props.loading && 'Reading the audit trail…'}
      error={props.error}
      onRetry={props.onRetry}
      errorTestId="activity-error"
      empty={
        props.filtered ? 'No event matches these filters.' : 'Nothing has been recorded for this organisation yet.'
      }
    />
  );
}

function EventRow({ event }: { event: ActivityItem }) {
  const actor = actorText(event);
  const kind = targetKind(event.action);
  return (
    <tr data-testid="activity-row" data-action={event.action} data-position={event.position ?? undefined}>
      <td className="mono muted number" data-testid="activity-position">
        {event.position ?? '–'}
      </td>
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
          <span title={kind ?? undefined} className={kind?.endsWith('key prefix') ? 'mono' : undefined}>
            {event.target}
          </span>
        )}
      </td>
      <td className="activity-change">
        {/* The contract's list carries no change: unknown, not none. */}
        {event.hash === null ? <span className="muted">–</span> : <ChangeDiff change={event.change} />}
      </td>
      <td className="mono" data-testid="activity-source">
        {event.source_ip}
      </td>
    </tr>
  );
}
