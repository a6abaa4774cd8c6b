import { errorMessage } from '../../bridge.js';
import { organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import { exportFileName, type ExportFormat } from './export-file.js';
import { ExportCancelled, exportRequests, saveFile } from './export-flow.js';
import type { FilterQuery } from './request-query.js';

/** One export at a time: its progress, its outcome, and the way to cancel it. */

interface ExportState {
  status: 'idle' | 'running' | 'done' | 'cancelled' | 'failed';
  format: ExportFormat | null;
  fetched: number;
  total: number | null;
  /** What the finished export wrote, and what the filter matched when it began. */
  written: number;
  totalAtStart: number | null;
  totalAtEnd: number | null;
  /** Rows that may have been skipped because the list moved under the export. */
  skipped: number;
  fileName: string | null;
  error: string | null;
  controller: AbortController | null;
  /** Cancel was asked; the page in flight is awaited and dropped. */
  cancelling: boolean;
  /** A very large export waits for the person's word: how many rows, and the answer to give. */
  confirming: { total: number; answer: (go: boolean) => void } | null;
  start(format: ExportFormat, filter: FilterQuery): Promise<void>;
  cancel(): void;
}

const IDLE = {
  status: 'idle' as const,
  format: null,
  fetched: 0,
  total: null,
  written: 0,
  totalAtStart: null,
  totalAtEnd: null,
  skipped: 0,
  fileName: null,
  error: null,
  controller: null,
  cancelling: false,
  confirming: null,
};

/** Another organisation: the export in flight stops, and one waiting for its confirmation ends. */
function abandon({ controller, confirming }: ExportState): void {
  controller?.abort();
  confirming?.answer(false);
}

export const useExport = organisationStore<ExportState>(abandon)((set, get) => ({
  ...IDLE,
  async start(format, filter) {
    if (get().status === 'running') return;
    // Another organisation abandons the export: its end is not shown.
    const current = thisOrganisation();
    const controller = new AbortController();
    set({ ...IDLE, status: 'running', format, controller });
    try {
      const outcome = await exportRequests(filter, format, {
        signal: controller.signal,
        onProgress: ({ fetched, total }) => set({ fetched, total }),
        confirmLarge: (total) =>
          new Promise<boolean>((resolve) => {
            set({
              total,
              confirming: {
                total,
                answer: (go) => {
                  set({ confirming: null });
                  resolve(go);
                },
              },
            });
          }),
      });
      const fileName = exportFileName(format);
      saveFile(outcome.blob, fileName);
      set({
        status: 'done',
        written: outcome.rows,
        totalAtStart: outcome.totalAtStart,
        totalAtEnd: outcome.totalAtEnd,
        skipped: outcome.skipped,
        fileName,
        controller: null,
      });
    } catch (error) {
      if (!current()) return;
      if (error instanceof ExportCancelled) set({ status: 'cancelled', controller: null, cancelling: false });
      else set({ status: 'failed', error: errorMessage(error), controller: null, cancelling: false });
    }
  },
  cancel() {
    const { controller, confirming } = get();
    if (!controller) return;
    controller.abort();
    set({ cancelling: true });
    // An export waiting for its confirmation has nothing in flight: it ends now.
    confirming?.answer(false);
  },
}));
