import { create } from 'zustand';
import { errorMessage } from '../../bridge.js';
import { onOrganisationChange } from '../../state/session.js';
import { exportFileName, type ExportFormat } from './export-file.js';
import { ExportCancelled, exportRequests, saveFile } from './export-flow.js';
import type { RequestsQuery } from './query.js';

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
  fileName: string | null;
  error: string | null;
  controller: AbortController | null;
  /** Cancel was asked; the page in flight is awaited and dropped. */
  cancelling: boolean;
  start(format: ExportFormat, filter: Omit<RequestsQuery, 'limit' | 'offset'>): Promise<void>;
  cancel(): void;
  reset(): void;
}

const IDLE = {
  status: 'idle' as const,
  format: null,
  fetched: 0,
  total: null,
  written: 0,
  totalAtStart: null,
  totalAtEnd: null,
  fileName: null,
  error: null,
  controller: null,
  cancelling: false,
};

export const useExport = create<ExportState>((set, get) => ({
  ...IDLE,
  async start(format, filter) {
    if (get().status === 'running') return;
    const controller = new AbortController();
    set({ ...IDLE, status: 'running', format, controller });
    try {
      const outcome = await exportRequests(filter, format, {
        signal: controller.signal,
        onProgress: ({ fetched, total }) => set({ fetched, total }),
      });
      const fileName = exportFileName(format);
      saveFile(outcome.blob, fileName);
      set({
        status: 'done',
        written: outcome.rows,
        totalAtStart: outcome.totalAtStart,
        totalAtEnd: outcome.totalAtEnd,
        fileName,
        controller: null,
      });
    } catch (error) {
      if (error instanceof ExportCancelled) set({ status: 'cancelled', controller: null, cancelling: false });
      else set({ status: 'failed', error: errorMessage(error), controller: null, cancelling: false });
    }
  },
  cancel() {
    const { controller } = get();
    if (!controller) return;
    controller.abort();
    set({ cancelling: true });
  },
  reset() {
    get().controller?.abort();
    set(IDLE);
  },
}));

onOrganisationChange(() => useExport.getState().reset());
