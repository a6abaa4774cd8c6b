import type { CallResult } from '#contract';
import { call, errorMessage } from '../bridge.js';
import { latest, organisationStore, thisOrganisation } from './organisation-scope.js';
import type { RouteParams, Screen } from './route.js';
import { useSession } from './session.js';

/**
 * The saved views of the account signed in on the profile in use: a screen and its filters
 * under a name, kept by the host with the connection profile. Listed in the sidebar and the command palette.
 */

export type SavedView = CallResult<'views.list'>['views'][number];

// The host's list of screens is written apart from the renderer's (it is built without it):
// this line fails to compile when the two differ.
type SameScreens = [Screen] extends [SavedView['screen']]
  ? [SavedView['screen']] extends [Screen]
    ? true
    : never
  : never;
export const SCREENS_AGREE: SameScreens = true;

/**
 * What a view keeps of the route: its filters, sort and page size. Not the page (a saved view
 * opens at the start), not the request open in the detail panel, never the web shell's token.
 */
const NOT_KEPT = new Set(['page', 'request', 'token']);

export function viewFilters(params: RouteParams): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter(([name, value]) => !NOT_KEPT.has(name) && value !== ''));
}

/** Whether the route shows the view: its screen with the same filters. */
export function showsView(view: SavedView, screen: Screen, params: RouteParams): boolean {
  const shown = viewFilters(params);
  const kept = Object.entries(view.filters);
  return view.screen === screen && kept.length === Object.keys(shown).length && kept.every(([k, v]) => shown[k] === v);
}

interface SavedViewsState {
  /** Null until read. */
  views: SavedView[] | null;
  /** How many of the host's file could not be read (kept beside it), 0 when all were. */
  setAside: number;
  error: string | null;
  load(): Promise<void>;
  /** Save, rename and remove throw the host's refusal (a name taken is placed at `name`). */
  save(name: string, screen: Screen, params: RouteParams): Promise<SavedView>;
  rename(viewId: string, name: string): Promise<SavedView>;
  remove(viewId: string): Promise<void>;
}

function profileId(): string {
  const id = useSession.getState().profileId;
  if (!id) throw new Error('no connection chosen');
  return id;
}

const reads = latest();

export const useSavedViews = organisationStore<SavedViewsState>()((set, get) => {
  /** After a change the list is read again: the host sorts it, and another window may have changed it too. */
  const changed = async <T>(change: () => Promise<T>): Promise<T> => {
    const result = await change();
    await get().load();
    return result;
  };
  return {
    views: null,
    setAside: 0,
    error: null,
    async load() {
      const current = reads.ask();
      try {
        const { views, set_aside } = await call('views.list', { profileId: profileId() });
        if (current()) set({ views, setAside: set_aside, error: null });
      } catch (error) {
        if (current()) set({ error: errorMessage(error) });
      }
    },
    save: (name, screen, params) =>
      changed(() => call('views.save', { profileId: profileId(), name, screen, filters: viewFilters(params) })),
    rename: (viewId, name) => changed(() => call('views.rename', { profileId: profileId(), viewId, name })),
    async remove(viewId) {
      const current = thisOrganisation();
      await call('views.remove', { profileId: profileId(), viewId });
      // Gone at once from the list, before the read that follows.
      if (current()) set((s) => ({ views: s.views?.filter((v) => v.id !== viewId) ?? null }));
      await get().load();
    },
  };
});
