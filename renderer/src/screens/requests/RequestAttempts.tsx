import { Breakable } from '../../components/Breakable.js';
import { formatMs, UNKNOWN } from '../../lib/format.js';
import { attemptDecisionWords, attemptErrorWords } from './attempt-words.js';
import type { RequestRow } from './request-row.js';

/**
 * The request's upstream attempts in the order the gateway made them: each target, the status it
 * answered (a dash when none came), what went wrong in words, how long it took and what the
 * gateway did next. Nothing at all when the row does not say (older, demo and imported rows, or a
 * control plane that does not record them): unknown is not "none".
 */
export function RequestAttempts({ row }: { row: RequestRow }) {
  const attempts = row.upstream?.attempts ?? null;
  if (attempts === null) return null;
  return (
    <section aria-labelledby="request-attempts-title" data-testid="request-attempts">
      <h3 id="request-attempts-title">Attempts</h3>
      {attempts.length === 0 ? (
        <p className="muted" data-testid="request-attempts-none">
          None: no upstream was tried.
        </p>
      ) : (
        <ol className="requests-attempts">
          {attempts.map((attempt, index) => (
            <li
              // Attempts have no id of their own: their place is what they are.
              key={index}
              className={`requests-attempt attempt-${attempt.decision}`}
              data-testid="request-attempt"
              data-decision={attempt.decision}
            >
              <code data-testid="attempt-target">
                <Breakable text={attempt.target} />
              </code>
              <span className="requests-attempt-facts">
                <span data-testid="attempt-status">
                  <span className="visually-hidden">status </span>
                  {attempt.status ?? UNKNOWN}
                </span>
                {attempt.error !== null && <span data-testid="attempt-error">{attemptErrorWords(attempt.error)}</span>}
                <span data-testid="attempt-ms">{formatMs(attempt.ms)}</span>
                <strong data-testid="attempt-decision">{attemptDecisionWords(attempt.decision, attempt.error)}</strong>
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
