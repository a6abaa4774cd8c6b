import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { organisationStore, thisOrganisation, type Current } from '../../state/organisation-scope.js';
import { mergeReport } from './merge-reports.js';
import type { KindReport, Report } from './reconcile-lines.js';
import { daysOf } from './reconcile-window.js';

/**
 * A Reconcile check, run only when asked: the lifetime spend in one call, then each day of the
 * window in a call of its own, one after the other. A call reads at most a month and a day takes
 * seconds at ten million rows a month, so a day per call keeps each request bounded, lets the
 * report grow on screen as the days answer, and lets the operator stop and keep what was checked.
 * A store, not the screen's state: a long check goes on while another screen is looked at, and
 * another organisation drops it (organisation-scope.ts).
 */

export interface RunWindow {
  from: string;
  to: string;
  /** Null: the whole organisation. */
  project: string | null;
}

export type RunStatus =
  | 'idle'
  | 'running'
  | 'done'
  | 'stopped'
  | 'failed'
  /** The server cannot read its request telemetry (503). */
  | 'unavailable'
  /** The control plane has no such endpoint (one of the contract's only). */
  | 'not-offered';

interface RunState {
  status: RunStatus;
  window: RunWindow | null;
  /** Every day of the window; the first `checked` of them are in the report. */
  days: string[];
  checked: number;
  /** Whether the lifetime spend is in the report. */
  lifetime: boolean;
  report: Report | null;
  startedAt: string | null;
  error: string | null;
  /** A new check of `window`, dropping the report shown. */
  start(window: RunWindow): void;
  /** Ends the check; what was checked stays. */
  stop(): void;
  /** Goes on from the first part not checked (after a failure, or a stop), into the same report. */
  resume(): void;
}

const IDLE = {
  status: 'idle' as const,
  window: null,
  days: [],
  checked: 0,
  lifetime: false,
  report: null,
  startedAt: null,
  error: null,
};

const DAY_KINDS: readonly KindReport['kind'][] = ['totals', 'rollups'];

/**
 * Only the kinds asked for: a control plane older than `kinds` answers every kind to every call,
 * and its lifetime spend, summed once a day, would read as many times the keys' spend.
 */
const only = (report: Report, kinds: readonly KindReport['kind'][]): Report => ({
  ...report,
  kinds: report.kinds.filter((kind) => kinds.includes(kind.kind)),
});

function failure(error: unknown): Pick<RunState, 'status' | 'error'> {
  const refused = error instanceof BridgeError ? error : null;
  if (refused?.status === 503) return { status: 'unavailable', error: null };
  if (refused && (refused.status === 501 || (refused.status === 404 && !refused.field))) {
    return { status: 'not-offered', error: null };
  }
  return { status: 'failed', error: errorMessage(error) };
}

/** Bumped by every start, stop and resume: an answer to an earlier one is dropped. */
let generation = 0;

export const useReconcileRun = organisationStore<RunState>()((set, get) => {
  async function drive(current: Current) {
    const { window } = get();
    if (!window) return;
    const scope = window.project ? { project_id: window.project } : {};
    const fold = (part: Report) => mergeReport(get().report, part, get().startedAt!);
    try {
      if (!get().lifetime) {
        // The spend is lifetime: the window does not change it, so it is read once.
        const spend = await api('api.reconcile', { query: { ...scope, kinds: 'spend' } });
        if (!current()) return;
        set({ lifetime: true, report: fold(only(spend, ['spend'])) });
      }
      while (get().checked < get().days.length) {
        const { checked, days } = get();
        const day = days[checked]!;
        const part = await api('api.reconcile', { query: { from: day, to: day, ...scope, kinds: 'totals,rollups' } });
        if (!current()) return;
        set({ checked: checked + 1, report: fold(only(part, DAY_KINDS)) });
      }
      set({ status: 'done' });
    } catch (error) {
      if (current()) set(failure(error));
    }
  }

  const begin = () => {
    const mine = ++generation;
    const organisation = thisOrganisation();
    set({ status: 'running', error: null });
    void drive(() => organisation() && mine === generation);
  };

  return {
    ...IDLE,
    start(window) {
      set({ ...IDLE, window, days: daysOf(window.from, window.to), startedAt: new Date().toISOString() });
      begin();
    },
    stop() {
      if (get().status !== 'running') return;
      generation++;
      set({ status: 'stopped' });
    },
    resume() {
      if (get().window && get().status !== 'running') begin();
    },
  };
});
