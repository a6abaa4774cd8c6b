import { useEffect, useState, type FormEvent } from 'react';
import { Field } from '../../components/Field.js';
import { ChoiceSelect } from '../../components/filters/ChoiceSelect.js';
import { sortedProjects } from '../../lib/filter-scope.js';
import { unknownLabel } from '../../lib/id-label.js';
import { useDirectory } from '../../state/directory.js';
import { dayText, windowErrors, type WindowErrors } from './reconcile-window.js';

/**
 * The window (UTC days) and scope of the next check, and the Check button. A window that cannot
 * be checked says why at its field, and nothing is asked of the server.
 */
export function WindowForm(props: {
  from: string;
  to: string;
  project: string | null;
  running: boolean;
  onProject(project: string | null): void;
  onCheck(window: { from: string; to: string }): void;
}) {
  const projects = useDirectory((s) => s.projects);
  const projectsError = useDirectory((s) => s.errors.projects);
  const [draft, setDraft] = useState({ from: props.from, to: props.to });
  const [errors, setErrors] = useState<WindowErrors>({});

  // A window from the address (a shared link, the browser's history) replaces the one typed.
  useEffect(() => {
    setDraft({ from: props.from, to: props.to });
    setErrors({});
  }, [props.from, props.to]);

  const edit = (field: 'from' | 'to', value: string) => {
    setDraft({ ...draft, [field]: value });
    setErrors({ ...errors, [field]: undefined });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = windowErrors(draft.from, draft.to, Date.now());
    setErrors(found);
    if (!found.from && !found.to) props.onCheck(draft);
  };

  const today = dayText(Date.now());
  return (
    // noValidate: the browser's own bubbles would refuse the window before the form says why.
    <form className="toolbar reconcile-window" onSubmit={submit} aria-label="Window and scope" noValidate>
      <Field label="From (UTC day)" error={errors.from ?? null} testId="reconcile-from-field">
        <input
          type="date"
          value={draft.from}
          max={today}
          onChange={(e) => edit('from', e.target.value)}
          data-testid="reconcile-from"
          required
        />
      </Field>
      <Field label="To (UTC day)" error={errors.to ?? null} testId="reconcile-to-field">
        <input
          type="date"
          value={draft.to}
          max={today}
          onChange={(e) => edit('to', e.target.value)}
          data-testid="reconcile-to"
          required
        />
      </Field>
      <ChoiceSelect
        label="Scope"
        value={props.project}
        all="The whole organisation"
        choices={projects && sortedProjects(projects).map((p) => ({ value: p.id, label: `Project ${p.name}` }))}
        loading={projects === null && !projectsError}
        unknown={(id) => unknownLabel('project', id)}
        onChange={props.onProject}
        testId="reconcile-project"
      />
      <button type="submit" disabled={props.running} data-testid="reconcile-run">
        Check
      </button>
    </form>
  );
}
