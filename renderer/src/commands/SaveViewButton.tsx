import { useOverlay } from './overlays.js';
import { ariaShortcut, SAVE_VIEW_SHORTCUT, shortcutLabel } from './shortcut.js';

/** "Save view…" on a screen whose filters can be saved: asks for a name for the filters on screen. */
export function SaveViewButton() {
  const label = shortcutLabel(SAVE_VIEW_SHORTCUT);
  return (
    <button
      type="button"
      onClick={() => useOverlay.getState().show('saveView')}
      title={`Save these filters under a name, listed in the sidebar (${label})`}
      aria-keyshortcuts={ariaShortcut(SAVE_VIEW_SHORTCUT)}
      data-testid="save-view"
    >
      Save view…
    </button>
  );
}
