import { errorMessage } from '../../bridge.js';
import { organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import { exportFileName } from '../requests/export-file.js';
import { ExportCancelled, saveFile } from '../requests/export-flow.js';
import { exportActivity, type ActivityExportFormat } from './activity-export.js';
import type { ActivityFilterQuery } from './activity-query.js';

/** One export of the trail at a time: its progress, its outcome, and the way to cancel it. */

interface ActivityExportState {
  status: 'idle' | 'running' | 'done' | 'cancelled' | 'failed';
  format: ActivityExportFormat | null;
  fetched: number;
  /** What the filters matched when the export began; null until the first page tells. */
  total: number | null;
  fileName: string | null;
  error: string | null;
  controller: AbortController | null;
  start(format: ActivityExportFormat, filter: ActivityFilterQuery): Promise<void>;
  cancel(): void;
}

const IDLE = {
  status: 'idle' as const,
  format: null,
  fetched: 0,
  total: null,
  fileName: null,
  error: null,
  controller: null,
};

export const useActivityExport = organisationStore<ActivityExportState>(({ controller }) => controller?.abort())(
  (set, get) => ({
    ...IDLE,
    async start(format, filter) {
      if (get().status === 'running') return;
      const current = thisOrganisation();
      const controller = new AbortController();
      set({ ...IDLE, status: 'running', format, controller });
      try {
        const outcome = await exportActivity(filter, format, {
          signal: controller.signal,
          onProgress: (fetched, total) => set({ fetched, total }),
        });
        const fileName = exportFileName(format, new Date(), 'activity');
        saveFile(outcome.blob, fileName);
        set({ status: 'done', fetched: outcome.rows, fileName, controller: null });
      } catch (error) {
        if (!current()) return;
        if (error instanceof ExportCancelled) set({ status: 'cancelled', controller: null });
        else set({ status: 'failed', error: errorMessage(error), controller: null });
      }
    },
    cancel() {
      get().controller?.abort();
    },
  }),
);
