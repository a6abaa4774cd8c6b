import { ErrorNote } from '../../components/Feedback.js';
import { UNKNOWN } from '../../lib/format.js';
import { useJoinPolicy, type JoinPolicy } from './join-policy-store.js';

/** What follows "Who may join:"; unknown while the policy is not read, never the contract's default. */
export function joinPolicyText(policy: JoinPolicy | null): string {
  if (!policy) return UNKNOWN;
  if (policy.policy === 'open') return 'anyone who names this organisation';
  if (policy.policy === 'closed') return 'closed';
  // The operator's command refuses an empty list; another server might still send one.
  if (policy.domains.length === 0) return 'nobody (no domain is listed)';
  return `people with an email at ${policy.domains.join(', ')}`;
}

/** Who may join by naming the organisation: shown, not changed, since only the operator's command changes it. */
export function JoinPolicyPanel() {
  const policy = useJoinPolicy((s) => s.policy);
  const loading = useJoinPolicy((s) => s.loading);
  const error = useJoinPolicy((s) => s.error);
  const notOffered = useJoinPolicy((s) => s.notOffered);
  const load = useJoinPolicy((s) => s.load);

  return (
    <section className="panel" aria-labelledby="join-policy-heading" data-testid="join-policy" aria-busy={loading}>
      <h2 id="join-policy-heading">Joining</h2>
      <p className="join-policy" data-testid="join-policy-text">
        Who may join: <strong>{joinPolicyText(policy)}</strong>
      </p>
      {policy?.policy === 'open' && (
        <p className="warning" role="note" data-testid="join-policy-warning">
          Anyone who types this organisation&apos;s name when registering, or at a first external sign-in, becomes a
          member who can create API keys and read the request log. The operator restricts it with{' '}
          <code>npm run admin -- set-join-policy --org NAME --policy closed</code> (or{' '}
          <code>--policy domains --domains your.example</code>).
        </p>
      )}
      {policy?.policy === 'closed' && (
        <p className="muted" data-testid="join-policy-note">
          Nobody joins by naming this organisation.
        </p>
      )}
      {policy?.policy === 'domains' && (
        <p className="muted" data-testid="join-policy-note">
          Exactly these domains: an email at a subdomain of one does not join.
        </p>
      )}
      {notOffered ? (
        <p className="muted" data-testid="join-policy-unknown">
          This control plane does not say who may join.
        </p>
      ) : (
        <ErrorNote
          error={error && `Who may join could not be read: ${error}`}
          onRetry={() => void load()}
          testId="join-policy-error"
        />
      )}
    </section>
  );
}
