import { useEffect, useRef } from 'react';
import { PALETTE_COMMAND, type Command } from './commands.js';
import { useOverlay } from './overlays.js';
import { inEditableField, matchesShortcut } from './shortcut.js';

/**
 * Runs a command when its shortcut is pressed anywhere in the console, unless a dialog is open
 * (its keys are its own, and nothing should change behind it) or the keys are being typed into
 * a field and the shortcut is not one that works there. A key held down runs an action once;
 * only moving between screens repeats.
 */
export function useCommandShortcuts(commands: readonly Command[]): void {
  const latest = useRef(commands);
  latest.current = commands;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing) return;
      const command = latest.current.find((c) => c.shortcut && matchesShortcut(event, c.shortcut));
      if (!command?.shortcut) return;
      if (!command.shortcut.inFields && inEditableField(event.target)) return;
      if (document.querySelector('dialog[open]')) {
        // The palette's shortcut is the browser's too (its search bar): kept from it, and closing the palette when open.
        if (command.id === PALETTE_COMMAND) {
          event.preventDefault();
          if (useOverlay.getState().shown === 'palette') useOverlay.getState().close();
        }
        return;
      }
      event.preventDefault();
      if (event.repeat && command.group !== 'Screens') return;
      command.run();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
