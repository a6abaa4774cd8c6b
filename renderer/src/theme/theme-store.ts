import { create } from 'zustand';
import type { CallResult } from '#contract';
import { call, errorMessage } from '../bridge.js';
import { useSession } from '../state/session.js';

/**
 * The console's theme: the system's, or the light or dark one the user chose. The host keeps
 * each account's choice (prefs.*); the browser keeps the last one shown, so the next start
 * paints in it before anyone signs in, with no flash of the other palette.
 */

export type Theme = CallResult<'prefs.get'>['theme'];
export const THEMES: readonly { value: Theme; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

const LAST_THEME = 'gateway-console-theme';
/** Set while the theme shown was chosen before sign-in and belongs to no account yet (a reload keeps it). */
const UNSAVED = 'gateway-console-theme-unsaved';

const isTheme = (value: unknown): value is Theme => THEMES.some((theme) => theme.value === value);

function storedFlag(): boolean {
  try {
    return window.localStorage.getItem(UNSAVED) === '1';
  } catch {
    return false;
  }
}

function storeFlag(unsaved: boolean): void {
  try {
    if (unsaved) window.localStorage.setItem(UNSAVED, '1');
    else window.localStorage.removeItem(UNSAVED);
  } catch {
    // Storage refused: the choice is saved at this sign-in or not at all.
  }
}

function cached(): Theme {
  try {
    const value = window.localStorage.getItem(LAST_THEME);
    return isTheme(value) ? value : 'system';
  } catch {
    return 'system';
  }
}

/** Shows the theme (styles.css keys its palette on data-theme) and remembers it for the next start. */
function show(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  try {
    window.localStorage.setItem(LAST_THEME, theme);
  } catch {
    // Storage refused: the next start paints in the system's theme until sign-in.
  }
}

interface ThemeState {
  theme: Theme;
  /** Chosen on the connection screen: saved for whoever signs in next rather than replaced by their own. */
  pending: boolean;
  /** Why the choice could not be saved for the account (it still shows). */
  error: string | null;
  choose(theme: Theme): Promise<void>;
  /** Applies the signed-in account's theme, or saves the one chosen before sign-in as theirs. */
  signedIn(profileId: string): Promise<void>;
}

/** Counts the user's choices: an account's theme read before the latest choice is stale. */
let choices = 0;

export const useTheme = create<ThemeState>((set, get) => ({
  theme: cached(),
  pending: storedFlag(),
  error: null,

  async choose(theme) {
    choices += 1;
    show(theme);
    const { me, profileId } = useSession.getState();
    set({ theme, error: null, pending: !me });
    storeFlag(!me);
    if (!me || !profileId) return;
    try {
      await call('prefs.setTheme', { profileId, theme });
    } catch (error) {
      set({ error: `Not saved for your account: ${errorMessage(error)}` });
    }
  },

  async signedIn(profileId) {
    const seen = choices;
    try {
      const saved = await call('prefs.get', { profileId });
      // A choice made while the answer travelled wins over the stored one (and is saved by choose()).
      if (useSession.getState().profileId !== profileId || choices !== seen) return;
      // A theme chosen before sign-in becomes the account's only if it never chose one: on a
      // shared machine it must not overwrite the next person's saved theme.
      const pending = get().pending;
      if (pending) {
        set({ pending: false });
        storeFlag(false);
      }
      if (pending && !saved.saved) {
        await call('prefs.setTheme', { profileId, theme: get().theme });
        return;
      }
      show(saved.theme);
      set({ theme: saved.theme, error: null });
    } catch {
      // The theme on screen stays; the account's is read again at its next sign-in.
    }
  },
}));

show(useTheme.getState().theme);

// Each sign-in (another account, another profile) brings that account's theme.
useSession.subscribe((state, previous) => {
  const user = state.me?.user_id;
  if (user && state.profileId && (user !== previous.me?.user_id || state.profileId !== previous.profileId)) {
    void useTheme.getState().signedIn(state.profileId);
  }
});
