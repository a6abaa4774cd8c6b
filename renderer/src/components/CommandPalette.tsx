import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { PaletteEntry } from '../commands/palette-search.js';
import { Dialog } from './Dialog.js';
import './command-palette.css';

/** The shell's heading of the screen shown (app/Shell.tsx), focusable from script. */
const SCREEN_TITLE = 'screen-title';

/**
 * The command palette: a search box over a list of what can be opened or run (the ARIA
 * combobox pattern: the focus stays in the box while the arrow keys move the active option,
 * named by aria-activedescendant). Enter or a click runs the active entry, Escape closes;
 * either way the focus goes back where it was (the Dialog's doing).
 */
export function CommandPalette({
  entriesFor,
  onClose,
}: {
  /** The entries for a text, best first, already bounded. */
  entriesFor: (text: string) => PaletteEntry[];
  onClose: () => void;
}) {
  const [text, setText] = useState('');
  const [active, setActive] = useState(0);
  const entries = useMemo(() => entriesFor(text), [entriesFor, text]);
  const listId = useId();
  const box = useRef<HTMLInputElement>(null);
  const optionId = (index: number) => `${listId}-option-${index}`;
  const shown = entries.length === 0 ? null : Math.min(active, entries.length - 1);

  // After the dialog has noted where the focus was (its effect runs first), so it goes back there.
  useEffect(() => box.current?.focus(), []);

  useEffect(() => {
    if (shown === null) return;
    // jsdom has no scrollIntoView.
    document.getElementById(optionId(shown))?.scrollIntoView?.({ block: 'nearest' });
  });

  const runEntry = (entry: PaletteEntry | undefined) => {
    if (!entry) return;
    // Closed first: the focus goes back before the entry opens a screen or another dialog.
    onClose();
    entry.run();
    // Where it went back to may have left with the screen the entry closed: then to the
    // title of the screen it opened (the shell's heading), not to the page's body.
    window.setTimeout(() => {
      const focused = document.activeElement;
      if (!focused || focused === document.body) document.getElementById(SCREEN_TITLE)?.focus();
    }, 0);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    // Keys that finish an input method's composition (Enter picks the characters) are its own.
    if (event.nativeEvent.isComposing) return;
    const count = entries.length;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (count === 0) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive(((shown ?? 0) + step + count) % count);
    } else if (event.key === 'PageDown' || event.key === 'PageUp') {
      event.preventDefault();
      if (count > 0) setActive(event.key === 'PageDown' ? count - 1 : 0);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (shown !== null) runEntry(entries[shown]);
    } else if (event.key === 'Escape') {
      // Closed here rather than by the dialog's cancel: one Escape, whatever the field would do with it.
      event.preventDefault();
      onClose();
    }
  };

  return (
    <Dialog title="Command palette" onClose={onClose} testId="command-palette">
      <input
        className="palette-input"
        type="text"
        role="combobox"
        aria-label="Go to or run"
        aria-expanded="true"
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={shown === null ? undefined : optionId(shown)}
        placeholder="A screen, a key, a saved view, a request id, an action…"
        autoComplete="off"
        spellCheck={false}
        maxLength={200}
        value={text}
        ref={box}
        onChange={(event) => {
          setText(event.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
        data-testid="palette-input"
      />
      <ul className="palette-list" id={listId} role="listbox" aria-label="Results" data-testid="palette-results">
        {entries.map((entry, index) => (
          <li
            key={entry.id}
            id={optionId(index)}
            role="option"
            aria-selected={index === shown}
            className="palette-option"
            // The focus stays in the box: a click runs the entry without taking it.
            onMouseDown={(event) => event.preventDefault()}
            onMouseMove={() => index !== shown && setActive(index)}
            onClick={() => runEntry(entry)}
            data-testid="palette-option"
          >
            <span className="palette-title">{entry.title}</span>
            <span className="palette-detail muted">{entry.detail ?? entry.group}</span>
            {entry.shortcut && <kbd className="palette-shortcut">{entry.shortcut}</kbd>}
          </li>
        ))}
      </ul>
      <p className="palette-count muted" role="status" aria-live="polite" data-testid="palette-count">
        {entries.length === 0 ? 'Nothing matches' : `${entries.length} ${entries.length === 1 ? 'result' : 'results'}`}
      </p>
    </Dialog>
  );
}
