import { Money } from '../../components/Money.js';
import { Time } from '../../components/Time.js';
import type { ActivityChange } from '../../lib/activity.js';
import { UNKNOWN } from '../../lib/format.js';

type Value = string | number | boolean | null;

const FIELD_LABELS: Readonly<Record<string, string>> = {
  rate_limit_rpm: 'Rate limit',
  credit_limit_cents: 'Credit limit',
  expires_at: 'Expires',
  name: 'Name',
  environment: 'Environment',
  allowed_models: 'Models',
  key_prefix: 'Key',
  time_zone: 'Time zone',
  policy: 'Join policy',
};

/** A null limit is no limit (the keys' own rule), not an unknown one; elsewhere null is unknown. */
const NULL_MEANS: Readonly<Record<string, string>> = {
  credit_limit_cents: 'unlimited',
  expires_at: 'never',
  allowed_models: 'all models',
};

function FieldValue({ field, value }: { field: string; value: Value | undefined }) {
  if (value === undefined) return <span className="muted">{UNKNOWN}</span>;
  if (value === null) return <span className="muted">{NULL_MEANS[field] ?? UNKNOWN}</span>;
  if (field === 'credit_limit_cents' && typeof value === 'number') return <Money micro={value} unit />;
  if (field === 'expires_at' && typeof value === 'string') return <Time iso={value} minutes />;
  if (field === 'rate_limit_rpm' && typeof value === 'number') return <>{value} rpm</>;
  return <>{String(value)}</>;
}

/**
 * What an event changed, field by field: before → after, the fields that changed first and
 * marked; a creation shows what was set. Null `change` is an event that records none.
 */
export function ChangeDiff({ change }: { change: ActivityChange | null }) {
  if (!change) return <span className="muted">none recorded</span>;
  const before = change.before ?? {};
  const after = change.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = (field: string) => change.before === null || before[field] !== after[field];
  const ordered = [...fields.filter(changed), ...fields.filter((field) => !changed(field))];
  return (
    <dl className="activity-diff" data-testid="activity-change">
      {ordered.map((field) => (
        <div
          key={field}
          className={changed(field) ? 'activity-diff-changed' : 'activity-diff-same'}
          data-testid="activity-change-field"
          data-field={field}
          data-changed={changed(field)}
        >
          <dt>{FIELD_LABELS[field] ?? field}</dt>
          <dd>
            {change.before !== null && (
              <>
                <span data-testid="activity-change-before">
                  <FieldValue field={field} value={before[field]} />
                </span>
                {changed(field) && (
                  <>
                    <span aria-hidden="true"> → </span>
                    <span className="visually-hidden"> changed to </span>
                  </>
                )}
              </>
            )}
            {(change.before === null || changed(field)) && (
              <span data-testid="activity-change-after">
                <FieldValue field={field} value={after[field]} />
              </span>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
