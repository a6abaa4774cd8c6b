import { Time } from '../../components/Time.js';
import { actionLabel, actorText, targetKind, type ActivityEvent } from '../../lib/activity.js';

/** One row per event, newest first as the server ordered them. */
export function ActivityTable({ events }: { events: readonly ActivityEvent[] }) {
  return (
    <div className="table-wrap">
      <table aria-label="Audit trail, newest first" data-testid="activity-table">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Source IP</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event, i) => (
            // Events carry no id; their place in the trail is stable while this list lives.
            <EventRow key={i} event={event} />
          ))}
        </tbody>
      </table>
    </div>
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
