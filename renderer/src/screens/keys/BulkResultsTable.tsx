import type { CallResult } from '#contract';
import { Time } from '../../components/Time.js';
import { formatCount } from '../../lib/format.js';
import { formatMicroPkr } from '../../lib/money.js';

type BulkResult = CallResult<'api.bulkKeys'>;
type Limits = NonNullable<BulkResult['results'][number]['before']>;

/** Per key, what a bulk change would do or did: the limits before and after, or why it was refused. */
export function BulkResultsTable(props: {
  result: BulkResult;
  revoking: boolean;
  /** The keys' last use as the key list showed it, for a revocation. */
  lastUsed: ReadonlyMap<string, string | null>;
}) {
  const { result, revoking } = props;
  return (
    <div className="table-wrap">
      <table className="bulk-results" data-testid="bulk-results">
        <caption className="visually-hidden">
          {result.dry_run ? 'What would happen to each key' : 'What happened to each key'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">{revoking ? 'Last used' : 'Now'}</th>
            {!revoking && <th scope="col">After</th>}
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {result.results.map((r) => (
            <tr key={r.id} data-testid="bulk-result" data-key-id={r.id} data-outcome={r.outcome}>
              <th scope="row">
                <strong>{r.name ?? '–'}</strong> {r.key_prefix && <code>{r.key_prefix}…</code>}
              </th>
              <td>
                {revoking ? (
                  <Time iso={props.lastUsed.get(r.id) ?? null} whenNull="never" />
                ) : (
                  <LimitsText limits={r.before} />
                )}
              </td>
              {!revoking && (
                <td>
                  <LimitsText limits={r.after} />
                </td>
              )}
              <td data-testid="bulk-outcome" className={r.outcome === 'ok' ? undefined : 'error'}>
                {outcomeText(r.outcome, r.message, result.dry_run, revoking)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function outcomeText(outcome: string, message: string | null, dryRun: boolean, revoking: boolean): string {
  if (outcome === 'ok') {
    if (revoking) return dryRun ? 'will be revoked' : 'revoked';
    return dryRun ? 'will change' : 'changed';
  }
  if (outcome === 'not_found') return 'not found (revoked or removed meanwhile)';
  return `refused: ${message ?? 'no reason given'}`;
}

function LimitsText({ limits }: { limits: Limits | null }) {
  if (!limits) return <span className="muted">–</span>;
  return (
    <span className="bulk-limits">
      {formatCount(limits.rate_limit_rpm)} rpm ·{' '}
      {limits.credit_limit_cents === null ? 'unlimited' : formatMicroPkr(limits.credit_limit_cents)} ·{' '}
      <Time iso={limits.expires_at} whenNull="no expiry" />
    </span>
  );
}
