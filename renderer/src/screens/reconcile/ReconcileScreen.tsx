import { useEffect } from 'react';
import { Time } from '../../components/Time.js';
import type { DataState } from '../../lib/data-state.js';
import { projectName, useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { KindSection } from './KindSection.js';
import { useReconcileRun, type RunStatus as Status } from './reconcile-run.js';
import { summaryText, type Report } from './reconcile-lines.js';
import { coverageText, defaultWindow } from './reconcile-window.js';
import { RunStatus } from './RunStatus.js';
import { WindowForm } from './WindowForm.js';
import './reconcile.css';

/**
 * The screens' shared `data-state` (lib/data-state.ts): "ready" whenever the screen shows what it
 * has, the form before any check included (nothing is read unasked, so there is nothing to wait
 * for), "loading" while a check runs, "error" when one failed with nothing checked to show.
 */
function screenState(status: Status, report: Report | null): DataState {
  if (status === 'running') return 'loading';
  if (status === 'idle' || status === 'done' || status === 'stopped') return 'ready';
  return report ? 'ready' : 'error';
}

/**
 * Whether the console's figures add up, for any window of whole UTC days and a scope: keys to
 * projects to the organisation, settled spend to the rows' cost, rollups to rows. Run only when
 * asked, a day at a time (reconcile-run.ts). The window and scope live in the address, so a
 * shared link opens on the same question.
 */
export function ReconcileScreen() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const loadDirectory = useDirectory((s) => s.load);
  const projects = useDirectory((s) => s.projects);
  const status = useReconcileRun((s) => s.status);
  const report = useReconcileRun((s) => s.report);
  const days = useReconcileRun((s) => s.days);
  const checked = useReconcileRun((s) => s.checked);
  const start = useReconcileRun((s) => s.start);
  const fallback = defaultWindow(Date.now());
  const project = params.project ?? null;

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  const check = (window: { from: string; to: string }) => {
    setParams(window);
    start({ ...window, project });
  };

  const scope = report?.project_id
    ? `project ${projectName(projects, report.project_id) ?? report.project_id}`
    : 'the whole organisation';
  return (
    <div
      className="reconcile stack"
      data-testid="reconcile-screen"
      data-state={screenState(status, report)}
      data-run={status}
    >
      <p className="muted">
        Checks that the figures the console shows add up, for whole UTC days: each day&apos;s keys to their projects and
        projects to the organisation, each key&apos;s settled spend to the cost of its rows, and every rollup cell to
        the rows it summarises. What agrees is counted; what does not is listed with where it is. Nothing is read until
        you press Check; the days are then read one at a time, so a long window takes a while, and can be stopped.
      </p>
      <WindowForm
        from={params.from ?? fallback.from}
        to={params.to ?? fallback.to}
        project={project}
        running={status === 'running'}
        onProject={(value) => setParams({ project: value })}
        onCheck={check}
      />
      <RunStatus />
      {report && (
        <>
          <p
            role="status"
            className={report.agrees ? 'reconcile-summary agrees' : 'reconcile-summary disagrees'}
            data-testid="reconcile-summary"
            data-agrees={report.agrees}
          >
            <strong>{summaryText(report, status === 'done')}</strong>{' '}
            <span className="muted">
              in {scope}, checked <Time iso={report.checked_at} />.
            </span>
          </p>
          <p className="muted" data-testid="reconcile-coverage">
            {/* A check that ended early says what it covers where it says why (RunStatus). */}
            {(status === 'running' || status === 'done') && `${coverageText(days, checked)} `}
            Keys&apos; spend is checked over their lifetime, not the window.
          </p>
          {report.kinds.map((kind) => (
            <KindSection key={kind.kind} kind={kind} />
          ))}
        </>
      )}
    </div>
  );
}
