import { ClockTime } from '../../components/ClockTime.js';

/** Every 2 s: the server pages and counts, and one read of the first page every 2 s costs it little. */
export const FOLLOW_EVERY_MS = 2000;

/** Why following is paused, or null while it is live. */
export type FollowPause = 'page' | 'reading' | 'hidden' | 'past' | null;

const PAUSED: Record<Exclude<FollowPause, null>, string> = {
  page: 'Paused: following shows the newest requests, on page 1',
  reading: 'Paused while you read',
  hidden: 'Paused while the window is hidden',
  past: 'Paused: the window between two times has ended',
};

/**
 * The request log's live mode: a toggle (its state is aria-pressed) and what following is
 * doing now. The state line is a polite live region, so turning on, pausing and resuming are
 * announced; the time of the last update is outside it (it changes every 2 s and would talk
 * over everything else).
 */
export function FollowControl(props: {
  following: boolean;
  pause: FollowPause;
  updatedAt: number | null;
  /** The last refresh failed (its message is shown once, above the table); following keeps trying. */
  failing: boolean;
  onToggle: (on: boolean) => void;
  onFirstPage: () => void;
}) {
  const { following, pause } = props;
  const state = !following ? null : pause ? PAUSED[pause] : props.failing ? 'Live, retrying every 2 s' : 'Live';
  return (
    <div className="requests-follow" role="group" aria-label="Follow new requests" data-testid="follow">
      <button
        type="button"
        className="requests-follow-toggle"
        aria-pressed={following}
        title="Show new requests as they arrive: the first page is read again every 2 seconds"
        onClick={() => props.onToggle(!following)}
        data-testid="follow-toggle"
      >
        <span className={following && !pause ? 'live-dot on' : 'live-dot'} aria-hidden="true" />
        Follow
      </button>
      <span
        className="requests-follow-status muted"
        data-testid="follow-status"
        data-state={following ? (pause ?? 'live') : 'off'}
      >
        <span role="status">{state}</span>
        {following && (
          <>
            {' · updated '}
            <ClockTime ms={props.updatedAt} testId="follow-updated" />
          </>
        )}
        {following && pause === 'page' && (
          <>
            {' '}
            <button type="button" className="link" onClick={props.onFirstPage} data-testid="follow-first-page">
              Go to page 1
            </button>
          </>
        )}
      </span>
    </div>
  );
}
