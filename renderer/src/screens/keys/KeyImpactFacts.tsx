import { Time } from '../../components/Time.js';
import { UNKNOWN, formatCount } from '../../lib/format.js';
import type { KeyImpactState } from './useKeyImpact.js';

/**
 * What depends on a key: its traffic, last use and who calls it. Unknown figures (the
 * telemetry store unreachable) show "–", never 0; a key nobody called was "never" used.
 */
export function KeyImpactFacts({ state }: { state: KeyImpactState }) {
  const { impact, error, notOffered, gone } = state;
  if (gone) {
    return (
      <p className="warning" role="status" data-testid="impact-gone">
        This key is already revoked (by someone else, or in another window): the gateway refuses it.
      </p>
    );
  }
  if (!impact) {
    if (notOffered) {
      return (
        <p className="muted" data-testid="impact-unavailable">
          This control plane does not say what uses a key.
        </p>
      );
    }
    if (error) {
      return (
        <p className="muted" data-testid="impact-unavailable">
          What uses this key could not be read: {error}
        </p>
      );
    }
    return <p className="muted">Reading what uses this key…</p>;
  }
  const known = impact.requests_last_7d !== null;
  const callers = impact.callers;
  return (
    <div className="key-impact" data-testid="key-impact">
      {error ? (
        // Figures from an earlier read never pass for fresh ones.
        <p className="warning" role="alert" data-testid="impact-stale">
          Reading again failed: {error}. The figures below are from <Time iso={impact.as_of} />.
        </p>
      ) : (
        <p className="muted" data-testid="impact-as-of">
          As of <Time iso={impact.as_of} />
        </p>
      )}
      <dl className="key-facts">
        <dt>Requests, last 24 hours</dt>
        <dd data-testid="impact-24h">{formatCount(impact.requests_last_24h)}</dd>
        <dt>Requests, last 7 days</dt>
        <dd data-testid="impact-7d">{formatCount(impact.requests_last_7d)}</dd>
        <dt>Last used</dt>
        <dd data-testid="impact-last-used">
          <Time iso={impact.last_used_at} whenNull={known ? 'never' : UNKNOWN} />
        </dd>
      </dl>
      {callers && (callers.user_agents.length > 0 || callers.metadata.length > 0) && (
        <div className="key-callers">
          <p className="muted">
            Callers in the last {windowWords(callers.window)}
            {callers.complete
              ? ''
              : `, from its newest ${formatCount(callers.requests_read)} requests (counts of those)`}
            :
          </p>
          <ul data-testid="impact-user-agents" aria-label="User agents">
            {callers.user_agents.map((agent) => (
              <li key={agent.name}>
                <code>{agent.name === '' ? '(no user agent)' : agent.name}</code> · {formatCount(agent.requests)}
              </li>
            ))}
            <More shown={callers.user_agents.length} of={callers.distinct_user_agents} what="user agent" />
          </ul>
          {callers.metadata.length > 0 && (
            <ul data-testid="impact-metadata" aria-label="X-SVC-Meta callers">
              {callers.metadata.map((meta) => (
                <li key={meta.key}>
                  <code>X-SVC-Meta-{meta.key}</code>:{' '}
                  {meta.distinct_values === meta.requests && meta.requests > 1
                    ? `a different value on each of ${formatCount(meta.requests)} requests`
                    : meta.values.map((v) => `${v.name} (${formatCount(v.requests)})`).join(', ') +
                      (meta.distinct_values > meta.values.length
                        ? `, and ${formatCount(meta.distinct_values - meta.values.length)} more`
                        : '')}
                </li>
              ))}
              <More shown={callers.metadata.length} of={callers.distinct_metadata_keys} what="X-SVC-Meta header" />
            </ul>
          )}
        </div>
      )}
      {callers && callers.user_agents.length === 0 && known && (
        <p className="muted" data-testid="impact-no-callers">
          No requests in the last {windowWords(callers.window)}.
        </p>
      )}
    </div>
  );
}

/** "7d" as words; a window the server words otherwise is shown as it comes. */
function windowWords(text: string): string {
  const days = /^(\d+)d$/.exec(text);
  return days ? `${days[1]} days` : text;
}

/** The callers left out of a top list: never cut without saying so. */
function More({ shown, of, what }: { shown: number; of: number; what: string }) {
  if (of <= shown) return null;
  const more = of - shown;
  return (
    <li className="muted" data-testid="impact-more">
      and {formatCount(more)} more {what}
      {more === 1 ? '' : 's'}
    </li>
  );
}
