import { useState, type FormEvent } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { formatTime, UNKNOWN, utcTitle } from '../../lib/format.js';
import type { Me } from '../../state/session.js';
import { canChangeRetention, useRetention, type Retention } from './retention-store.js';

const daysText = (days: number) => `${days} ${days === 1 ? 'day' : 'days'}`;

/** What is kept, in a sentence; unknown while the setting is not read, never a guess. */
export function retentionText(retention: Retention | null): string {
  if (!retention) return `Rows are kept: ${UNKNOWN}`;
  if (retention.effective_days === null) return 'Every row is kept.';
  return `Rows are kept ${daysText(retention.effective_days)}: older ones are deleted; their hourly and daily totals stay.`;
}

/**
 * How long the request log keeps the organisation's rows: a form for owners and admins, plain
 * text for members. Hidden on a control plane that has no such setting.
 */
export function RetentionPanel({ me }: { me: Me }) {
  const retention = useRetention((s) => s.retention);
  const loading = useRetention((s) => s.loading);
  const error = useRetention((s) => s.error);
  const notOffered = useRetention((s) => s.notOffered);
  const load = useRetention((s) => s.load);

  if (notOffered) return null;
  const editable = canChangeRetention(me.role);
  return (
    <section className="panel" aria-labelledby="retention-heading" data-testid="retention" aria-busy={loading}>
      <h2 id="retention-heading">Request-log retention</h2>
      <p className="retention" data-testid="retention-text">
        {retentionText(retention)}
      </p>
      {retention && retention.platform_days !== null && (
        <p className="muted" data-testid="retention-platform">
          The platform keeps rows at most {daysText(retention.platform_days)}; the organisation may keep its own for
          fewer.
        </p>
      )}
      {retention && retention.horizon !== null && (
        <p className="muted" data-testid="retention-horizon">
          Rows are kept from{' '}
          <time dateTime={retention.horizon} title={utcTitle(retention.horizon)}>
            {formatTime(retention.horizon)}
          </time>{' '}
          on: deletion goes by whole hours.
        </p>
      )}
      <ErrorNote
        error={error && `The request-log retention could not be read: ${error}`}
        onRetry={() => void load()}
        testId="retention-error"
      />
      {retention &&
        (editable ? (
          <RetentionForm key={String(retention.days)} current={retention.days} />
        ) : (
          <p className="muted" data-testid="retention-refused">
            Only the organisation&apos;s owner and admins can change it; you are a {me.role}.
          </p>
        ))}
    </section>
  );
}

type Mode = 'platform' | 'days';

/** Whole days as typed, or null for anything else: the server decides the bounds. */
const wholeDays = (text: string) => (/^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : null);

function RetentionForm({ current }: { current: number | null }) {
  const [mode, setMode] = useState<Mode>(current === null ? 'platform' : 'days');
  const [text, setText] = useState(current === null ? '' : String(current));
  const [typo, setTypo] = useState<string | null>(null);
  const saving = useRetention((s) => s.saving);
  const saveError = useRetention((s) => s.saveError);
  const saved = useRetention((s) => s.saved);
  const save = useRetention((s) => s.save);
  const clearSave = useRetention((s) => s.clearSave);
  const wanted = mode === 'platform' ? null : wholeDays(text);
  const unchanged = mode === 'platform' ? current === null : text.trim() === String(current);

  const edited = () => {
    setTypo(null);
    if (saveError || saved) clearSave();
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (unchanged || saving) return;
    if (mode === 'days' && wanted === null) {
      setTypo('Give a whole number of days, such as 30.');
      return;
    }
    void save(wanted);
  };

  return (
    <form className="retention-form" onSubmit={submit} aria-label="Change the request-log retention" noValidate>
      <Field label="Keep rows" testId="retention-mode">
        <select
          value={mode}
          onChange={(e) => {
            setMode(e.target.value as Mode);
            edited();
          }}
          data-testid="retention-mode-select"
        >
          <option value="platform">as long as the platform does</option>
          <option value="days">for a number of days</option>
        </select>
      </Field>
      {mode === 'days' && (
        <Field
          label="Days"
          hint="Rows older than this are deleted by whole hours; their hourly and daily totals stay."
          error={typo ?? saveError}
          testId="retention-field"
        >
          <input
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              edited();
            }}
            inputMode="numeric"
            autoComplete="off"
            data-testid="retention-input"
          />
        </Field>
      )}
      {mode === 'platform' && saveError && (
        <p role="alert" className="error" data-testid="retention-save-error">
          {saveError}
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          disabled={saving || unchanged}
          onClick={() => {
            setMode(current === null ? 'platform' : 'days');
            setText(current === null ? '' : String(current));
            edited();
          }}
        >
          Undo changes
        </button>
        <button type="submit" className="primary" disabled={saving || unchanged} data-testid="retention-save">
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
      {saved && (
        <p role="status" className="organisation-saved" data-testid="retention-saved">
          {saved.days === null
            ? 'Saved: the organisation keeps rows as long as the platform does.'
            : `Saved: the organisation keeps rows ${daysText(saved.days)}.`}
        </p>
      )}
    </form>
  );
}
