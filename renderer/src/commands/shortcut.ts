/**
 * Keyboard shortcuts of the console's commands: Alt ones matched on the physical key
 * (`event.code`), since Option+letter types another character on a Mac, Ctrl/⌘ ones on the
 * letter typed (the layout's), and shown the platform's way.
 *
 * The console's own shortcuts stay clear of what the browser and Electron keep: Alt+1…9 open
 * the screens, Alt+Shift+letter runs an action, and Ctrl+K (⌘K) opens the palette, the one
 * that takes over a browser default (its search bar), as in VS Code, Linear and GitHub.
 */

export interface Shortcut {
  /** `Digit1`, `KeyS`: the key's place, whatever it types. */
  code: string;
  alt?: boolean;
  shift?: boolean;
  /** Ctrl, or ⌘ on a Mac. */
  mod?: boolean;
  /**
   * Works while a field has the focus too. Off for Alt+Shift+letter: on a Mac it types a
   * character there (Option+Shift+K types a letter of its own).
   */
  inFields?: boolean;
}

/** An action's shortcut: Alt+Shift and a letter. */
export const action = (code: string): Shortcut => ({ code, alt: true, shift: true });

/**
 * The screens' shortcuts, Alt+1… Alt+9 then Alt+0 (the digits' order on the keyboard) in the
 * navigation's order; not in a field on a Mac, where Option+digit types a character ([ ] | { }
 * on some layouts). Ten screens at most: an eleventh would need another scheme.
 */
/** Alt+1 … Alt+9, then Alt+0 for the tenth screen; the screens after it have none. */
export const screenShortcut = (index: number): Shortcut | undefined =>
  index < 10 ? { code: `Digit${(index + 1) % 10}`, alt: true, inFields: !isMac() } : undefined;

export const PALETTE_SHORTCUT: Shortcut = { code: 'KeyK', mod: true, inFields: true };
export const SAVE_VIEW_SHORTCUT = action('KeyS');
export const CREATE_KEY_SHORTCUT = action('KeyK');
export const STORE_PROVIDER_KEY_SHORTCUT = action('KeyP');
export const EXPORT_REQUESTS_SHORTCUT = action('KeyE');
export const CHECK_ALERTS_SHORTCUT = action('KeyA');
export const SIGN_OUT_SHORTCUT = action('KeyQ');

export const isMac = (): boolean => /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

function keyName(code: string): string {
  return code.replace(/^(Key|Digit)/, '');
}

/** As the menus of the platform write it: "Alt+Shift+S", or "⌥⇧S" and "⌘K" on a Mac. */
export function shortcutLabel(shortcut: Shortcut, mac: boolean = isMac()): string {
  const key = keyName(shortcut.code);
  if (mac) return `${shortcut.mod ? '⌘' : ''}${shortcut.alt ? '⌥' : ''}${shortcut.shift ? '⇧' : ''}${key}`;
  return [shortcut.mod && 'Ctrl', shortcut.alt && 'Alt', shortcut.shift && 'Shift', key].filter(Boolean).join('+');
}

/** The ARIA form (`aria-keyshortcuts`): "Alt+Shift+S", "Meta+K". */
export function ariaShortcut(shortcut: Shortcut, mac: boolean = isMac()): string {
  return [
    shortcut.mod && (mac ? 'Meta' : 'Control'),
    shortcut.alt && 'Alt',
    shortcut.shift && 'Shift',
    keyName(shortcut.code),
  ]
    .filter(Boolean)
    .join('+');
}

export function matchesShortcut(event: KeyboardEvent, shortcut: Shortcut, mac: boolean = isMac()): boolean {
  const mod = mac ? event.metaKey : event.ctrlKey;
  const other = mac ? event.ctrlKey : event.metaKey;
  // Ctrl/⌘ with a letter goes by the letter typed (Ctrl+K is Ctrl+K on Dvorak too); Alt and
  // Option change the letter typed, so those go by the key's place.
  const key = shortcut.mod
    ? event.key.toLowerCase() === keyName(shortcut.code).toLowerCase()
    : event.code === shortcut.code;
  return (
    key &&
    mod === Boolean(shortcut.mod) &&
    !other &&
    event.altKey === Boolean(shortcut.alt) &&
    event.shiftKey === Boolean(shortcut.shift)
  );
}

/** Typing in a field: a shortcut that is not Ctrl/⌘ leaves the keys to it. */
export function inEditableField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** A button's hint of the shortcut that does what it does: its tooltip, and the ARIA attribute. */
export function shortcutHint(what: string, shortcut: Shortcut): { title: string; 'aria-keyshortcuts': string } {
  return { title: `${what} (${shortcutLabel(shortcut)})`, 'aria-keyshortcuts': ariaShortcut(shortcut) };
}
