import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { BridgeError, errorMessage } from '../../bridge.js';
import { ErrorNote, Loading, UnavailableNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { ChoiceSelect } from '../../components/filters/ChoiceSelect.js';
import { Time } from '../../components/Time.js';
import { sortedProjects } from '../../lib/filter-scope.js';
import { unknownLabel } from '../../lib/id-label.js';
import { api } from '../../state/api.js';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { KindSection } from './KindSection.js';
import { defaultWindow, summaryText, type Report } from './reconcile-lines.js';
import './reconcile.css';
import type { DataState } from '../../lib/data-state.js';

type Outcome =
  | { state: 'loading' }
  | { state: 'done'; report: Report }
  | { state: 'failed'; message: string }
  | { state: 'unavailable' }
  /** The control plane has no such endpoint (one of the contract's only). */
  | { state: 'not-offered' };

/** The screens' shared `data-state` (lib/data-state.ts): "ready" once a report is shown. */
function screenState(outcome: Outcome): DataState {
  if (outcome.state === 'done') return 'ready';
  return outcome.state === 'loading' ? 'loading' : 'error';
}

/**
 * Whether the console's figures add up: for whole UTC days and a scope, keys to projects to
 * the organisation, settled spend to the rows' cost, rollups to rows. The window and scope live
 * in the address, so a check can be shared and run again.
 */
export function ReconcileScreen() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const projects = useDirectory((s) => s.projects);
  const projectsError = useDirectory((s) => s.errors.projects);
  const loadDirectory = useDirectory((s) => s.load);
  const fallback = defaultWindow(Date.now());
  const from = params.from ?? fallback.from;
  const to = params.to ?? fallback.to;
  const project = params.project ?? null;
  const [draft, setDraft] = useState({ from, to });
  const [outcome, setOutcome] = useState<Outcome>({ state: 'loading' });

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  const check = useCallback(async () => {
    setOutcome({ state: 'loading' });
    try {
      const report = await api('api.reconcile', { query: { from, to, ...(project ? { project_id: project } : {}) } });
      setOutcome({ state: 'done', report });
    } catch (error) {
      const refused = error instanceof BridgeError ? error : null;
      if (refused?.status === 503) setOutcome({ state: 'unavailable' });
      else if (refused && (refused.status === 501 || (refused.status === 404 && !refused.field))) {
        setOutcome({ state: 'not-offered' });
      } else setOutcome({ state: 'failed', message: errorMessage(error) });
    }
  }, [from, to, project]);

  useEffect(() => {
    void check();
  }, [check]);

  useEffect(() => setDraft({ from, to }), [from, to]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft.from === from && draft.to === to) void check();
    else setParams({ from: draft.from, to: draft.to });
  };

  const report = outcome.state === 'done' ? outcome.report : null;
  return (
    <div className="reconcile stack" data-testid="reconcile-screen" data-state={screenState(outcome)}>
      <p className="muted">
        Checks that the figures the console shows add up, for whole UTC days (at most 31): each day&apos;s keys to their
        projects and projects to the organisation, each key&apos;s settled spend to the cost of its rows, and every
        rollup cell to the rows it summarises. What agrees is counted; what does not is listed with where it is.
      </p>
      <form className="toolbar reconcile-window" onSubmit={submit} aria-label="Window and scope">
        <Field label="From (UTC day)">
          <input
            type="date"
            value={draft.from}
            onChange={(e) => setDraft({ ...draft, from: e.target.value })}
            data-testid="reconcile-from"
            required
          />
        </Field>
        <Field label="To (UTC day)">
          <input
            type="date"
            value={draft.to}
            onChange={(e) => setDraft({ ...draft, to: e.target.value })}
            data-testid="reconcile-to"
            required
          />
        </Field>
        <ChoiceSelect
          label="Scope"
          value={project}
          all="The whole organisation"
          choices={projects && sortedProjects(projects).map((p) => ({ value: p.id, label: `Project ${p.name}` }))}
          loading={projects === null && !projectsError}
          unknown={(id) => unknownLabel('project', id)}
          onChange={(value) => setParams({ project: value })}
          testId="reconcile-project"
        />
        <button type="submit" disabled={outcome.state === 'loading'} data-testid="reconcile-run">
          Check again
        </button>
      </form>
      {outcome.state === 'loading' && <Loading>Checking… a day at a time, so a month can take a while.</Loading>}
      {outcome.state === 'failed' && <ErrorNote error={outcome.message} onRetry={() => void check()} />}
      {outcome.state === 'unavailable' && (
        <UnavailableNote subject="The check is" onRetry={() => void check()} testId="reconcile-unavailable" />
      )}
      {outcome.state === 'not-offered' && (
        <p className="muted" role="status" data-testid="reconcile-not-offered">
          This control plane does not offer the check (it has only the contract&apos;s endpoints).
        </p>
      )}
      {report && (
        <>
          <p
            role="status"
            className={report.agrees ? 'reconcile-summary agrees' : 'reconcile-summary disagrees'}
            data-testid="reconcile-summary"
            data-agrees={report.agrees}
          >
            <strong>{summaryText(report)}</strong>{' '}
            <span className="muted">
              {report.from.slice(0, 10)} to {report.to.slice(0, 10)}, checked <Time iso={report.checked_at} />
            </span>
          </p>
          {report.kinds.map((kind) => (
            <KindSection key={kind.kind} kind={kind} checkedAt={Date.parse(report.checked_at)} />
          ))}
        </>
      )}
    </div>
  );
}
