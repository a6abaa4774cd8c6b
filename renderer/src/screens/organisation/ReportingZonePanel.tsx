import { useMemo, useState, type FormEvent } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { UNKNOWN } from '../../lib/format.js';
import type { Me } from '../../state/session.js';
import { canChangeZone, useReportingZone, zoneSuggestions, type ReportingZone } from './reporting-zone-store.js';

/** "Asia/Karachi (UTC+05:00 now)"; unknown while the zone is not read, never a guess. */
export function reportingZoneText(zone: ReportingZone | null): string {
  if (!zone) return UNKNOWN;
  return `${zone.time_zone} (UTC${zone.utc_offset} now)`;
}

/**
 * The zone the dashboard counts its days and weeks in: a form for owners and admins, plain
 * text for members. Hidden on a control plane that has no such setting.
 */
export function ReportingZonePanel({ me }: { me: Me }) {
  const zone = useReportingZone((s) => s.zone);
  const loading = useReportingZone((s) => s.loading);
  const error = useReportingZone((s) => s.error);
  const notOffered = useReportingZone((s) => s.notOffered);
  const load = useReportingZone((s) => s.load);

  if (notOffered) return null;
  const editable = canChangeZone(me.role);
  return (
    <section
      className="panel"
      aria-labelledby="reporting-zone-heading"
      data-testid="reporting-zone"
      aria-busy={loading}
    >
      <h2 id="reporting-zone-heading">Reporting time zone</h2>
      <p className="reporting-zone" data-testid="reporting-zone-text">
        Days and weeks are counted in: <strong>{reportingZoneText(zone)}</strong>
      </p>
      <p className="muted" data-testid="reporting-zone-note">
        The dashboard&apos;s days and weeks start at midnight in this zone, for everyone in the organisation. The
        contract&apos;s charts (summary, timeseries, request log) stay in UTC.
      </p>
      <ErrorNote
        error={error && `The reporting time zone could not be read: ${error}`}
        onRetry={() => void load()}
        testId="reporting-zone-error"
      />
      {zone &&
        (editable ? (
          <ZoneForm key={zone.time_zone} current={zone.time_zone} />
        ) : (
          <p className="muted" data-testid="reporting-zone-refused">
            Only the organisation&apos;s owner and admins can change it; you are a {me.role}.
          </p>
        ))}
    </section>
  );
}

function ZoneForm({ current }: { current: string }) {
  const [draft, setDraft] = useState(current);
  const saving = useReportingZone((s) => s.saving);
  const saveError = useReportingZone((s) => s.saveError);
  const savedTo = useReportingZone((s) => s.savedTo);
  const save = useReportingZone((s) => s.save);
  const clearSave = useReportingZone((s) => s.clearSave);
  const suggestions = useMemo(zoneSuggestions, []);
  const wanted = draft.trim();
  const unchanged = wanted === current || wanted === '';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (unchanged || saving) return;
    void save(wanted).then((ok) => {
      // The server's spelling ('asia/karachi' is saved as Asia/Karachi).
      if (ok) setDraft(useReportingZone.getState().zone?.time_zone ?? wanted);
    });
  };

  return (
    <form className="reporting-zone-form" onSubmit={submit} aria-label="Change the reporting time zone" noValidate>
      <Field
        label="Time zone"
        hint="An IANA time zone name such as Asia/Karachi, Europe/London or UTC: type to search."
        error={saveError}
        testId="reporting-zone-field"
      >
        <input
          value={draft}
          onChange={(e) => {
            setDraft(e.target.value);
            if (saveError || savedTo) clearSave();
          }}
          list="reporting-zone-suggestions"
          autoComplete="off"
          spellCheck={false}
          maxLength={64}
          data-testid="reporting-zone-input"
        />
      </Field>
      <datalist id="reporting-zone-suggestions">
        {suggestions.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <div className="actions">
        <button
          type="button"
          disabled={saving || draft === current}
          onClick={() => {
            setDraft(current);
            clearSave();
          }}
        >
          Undo changes
        </button>
        <button type="submit" className="primary" disabled={saving || unchanged} data-testid="reporting-zone-save">
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
      {savedTo && (
        <p role="status" className="organisation-saved" data-testid="reporting-zone-saved">
          The dashboard now counts days in <strong>{savedTo}</strong>.
        </p>
      )}
    </form>
  );
}
