import type { CallResult } from '#contract';
import { BridgeError, errorMessage } from '../bridge.js';
import { api } from './api.js';
import { latest, organisationStore } from './organisation-scope.js';

/**
 * The organisation's projects, keys and model catalogue: listed by the keys screen and
 * used everywhere else to offer filters and to name ids (a chart series is "Checkout",
 * not a uuid). Null means not loaded yet; an error is kept beside it for the screen.
 */

export type Project = CallResult<'api.projects'>['projects'][number];
export type Key = CallResult<'api.listKeys'>['keys'][number];
export type Model = CallResult<'api.models'>['models'][number];

type Part = 'projects' | 'keys' | 'models';

/** Why a part could not be read: the words to show, and the status (0: no answer) to act on. */
export interface PartError {
  message: string;
  status: number;
}

interface DirectoryState {
  projects: Project[] | null;
  keys: Key[] | null;
  models: Model[] | null;
  errors: Partial<Record<Part, PartError>>;
  loading: Partial<Record<Part, boolean>>;
  /** Loads what is not loaded yet (or everything, when `force`). */
  load(force?: boolean): Promise<void>;
  reloadKeys(): Promise<void>;
}

export const useDirectory = organisationStore<DirectoryState>()((set, get) => {
  // Each part is read on its own: its latest read is the one kept.
  const lines = { projects: latest(), keys: latest(), models: latest() };
  async function fetchPart<P extends Part>(part: P, fetch: () => Promise<DirectoryState[P]>): Promise<void> {
    const current = lines[part].ask();
    set((s) => ({ loading: { ...s.loading, [part]: true } }));
    try {
      const value = await fetch();
      if (!current()) return;
      set(
        (s) =>
          ({
            [part]: value,
            errors: { ...s.errors, [part]: undefined },
            loading: { ...s.loading, [part]: false },
          }) as Partial<DirectoryState>,
      );
    } catch (error) {
      if (!current()) return;
      const failure = { message: errorMessage(error), status: error instanceof BridgeError ? error.status : 0 };
      set((s) => ({ errors: { ...s.errors, [part]: failure }, loading: { ...s.loading, [part]: false } }));
    }
  }
  return {
    projects: null,
    keys: null,
    models: null,
    errors: {},
    loading: {},
    async load(force = false) {
      const s = get();
      // A part already on its way is not asked for twice (every screen calls load on mount).
      const wanted = (part: Part) => force || (s[part] === null && !s.loading[part]);
      await Promise.all([
        wanted('projects') && fetchPart('projects', async () => (await api('api.projects', {})).projects),
        wanted('keys') && fetchPart('keys', async () => (await api('api.listKeys', {})).keys),
        wanted('models') && fetchPart('models', async () => (await api('api.models', {})).models),
      ]);
    },
    reloadKeys: () => fetchPart('keys', async () => (await api('api.listKeys', {})).keys),
  };
});

export function projectName(projects: Project[] | null, id: string | null | undefined): string | null {
  if (!id) return null;
  return projects?.find((p) => p.id === id)?.name ?? null;
}

export function keyName(keys: Key[] | null, id: string | null | undefined): string | null {
  if (!id) return null;
  return keys?.find((k) => k.id === id)?.name ?? null;
}
