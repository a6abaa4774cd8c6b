import { organisationStore } from '../state/organisation-scope.js';

/**
 * Which of the console's global dialogs is open: the command palette, or "Save view". Closed
 * when the organisation changes (sign-out, session expiry, another profile): neither is left
 * open over another organisation's console.
 */
interface OverlayState {
  shown: 'palette' | 'saveView' | null;
  show(overlay: 'palette' | 'saveView'): void;
  close(): void;
}

export const useOverlay = organisationStore<OverlayState>()((set) => ({
  shown: null,
  show: (overlay) => set({ shown: overlay }),
  close: () => set({ shown: null }),
}));
