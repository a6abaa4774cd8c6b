import { create } from 'zustand';
import type { CallResult, EmbeddedStatus, ProfileView } from '#contract';
import { BridgeError, call, errorMessage } from '../bridge.js';
import { resetOrganisationStores } from './organisation-scope.js';

/**
 * Which connection the console uses and who is signed in on it. Everything the renderer
 * asks of a control plane goes through the profile chosen here; the host keeps the
 * session itself (cookies never reach this side).
 */

export type Me = CallResult<'session.me'>;

interface SessionState {
  /** 'starting' until the profiles are known; 'connect' shows the connection screen. */
  phase: 'starting' | 'connect' | 'console';
  profiles: ProfileView[];
  /** The profile being signed in to or used. */
  profileId: string | null;
  me: Me | null;
  embedded: EmbeddedStatus | null;
  /** Why the host could not say how the embedded server is. */
  embeddedError: string | null;
  /** Why the user is back on the connection screen (an expired session), or a host failure. */
  notice: string | null;

  load(): Promise<void>;
  refreshProfiles(): Promise<void>;
  pollEmbedded(): Promise<void>;
  choose(profileId: string | null): Promise<void>;
  /** Called with the answer of a successful sign-in or registration. */
  signedIn(profileId: string): Promise<void>;
  signOut(): Promise<void>;
  /** A call answered 401: the host could not keep the session alive. */
  expired(): void;
  setNotice(notice: string | null): void;
}

const LAST_PROFILE = 'gateway-console-profile';

function remember(profileId: string | null): void {
  try {
    if (profileId) window.localStorage.setItem(LAST_PROFILE, profileId);
    else window.localStorage.removeItem(LAST_PROFILE);
  } catch {
    // Storage refused: the console simply asks again next time.
  }
}

function remembered(): string | null {
  try {
    return window.localStorage.getItem(LAST_PROFILE);
  } catch {
    return null;
  }
}

export const useSession = create<SessionState>((set, get) => {
  /**
   * Shows the console for `profileId` once its user is known (`me`, when the caller has already
   * asked), or the connection screen when the profile has no session.
   */
  const enter = async (profileId: string | null, me?: Promise<Me>): Promise<void> => {
    set({ profileId, notice: null });
    remember(profileId);
    const profile = get().profiles.find((p) => p.id === profileId);
    if (!profileId || !profile?.signedIn) {
      set({ phase: 'connect', me: null });
      return;
    }
    try {
      const user = await (me ?? call('session.me', { profileId }));
      // Another profile chosen meanwhile wins: never show one profile's user under another. The
      // profile, not the organisation scope: a late 401 of the profile left behind must not
      // drop this one's answer.
      if (get().profileId !== profileId) return;
      set({ me: user, phase: 'console' });
    } catch (error) {
      if (get().profileId !== profileId) return;
      if (error instanceof BridgeError && error.status === 401) get().expired();
      else set({ phase: 'connect', me: null, notice: errorMessage(error) });
    }
  };

  return {
    phase: 'starting',
    profiles: [],
    profileId: null,
    me: null,
    embedded: null,
    embeddedError: null,
    notice: null,

    async load() {
      try {
        const { profiles } = await call('profiles.list', {});
        set({ profiles });
        const last = profiles.find((p) => p.id === remembered());
        if (last?.signedIn) {
          await get().choose(last.id);
          return;
        }
        set({ phase: 'connect', profileId: last?.id ?? profiles[0]?.id ?? null });
      } catch (error) {
        set({ phase: 'connect', notice: errorMessage(error) });
      }
    },

    async refreshProfiles() {
      const { profiles } = await call('profiles.list', {});
      const current = get().profileId;
      set({ profiles, profileId: profiles.some((p) => p.id === current) ? current : (profiles[0]?.id ?? null) });
    },

    async pollEmbedded() {
      try {
        set({ embedded: await call('embedded.status', {}), embeddedError: null });
      } catch (error) {
        set({ embeddedError: errorMessage(error) });
      }
    },

    async choose(profileId) {
      await enter(profileId);
    },

    async signedIn(profileId) {
      // Who signed in is asked while the connections are listed again: neither needs the other's answer.
      const me = call('session.me', { profileId });
      me.catch(() => {}); // Answered (or reported) by enter(), once the list is back.
      await get().refreshProfiles();
      await enter(profileId, me);
    },

    async signOut() {
      const { profileId } = get();
      if (profileId) {
        try {
          await call('session.signOut', { profileId });
        } catch (error) {
          set({ notice: `Signed out on this side; the server did not confirm: ${errorMessage(error)}` });
        }
      }
      set({ phase: 'connect', me: null });
      await get()
        .refreshProfiles()
        .catch((error: unknown) => set({ notice: `Could not list the connections: ${errorMessage(error)}` }));
    },

    expired() {
      if (get().phase !== 'console') return;
      set({ phase: 'connect', me: null, notice: 'Your session has expired. Sign in again to go on.' });
      void get()
        .refreshProfiles()
        .catch((error: unknown) =>
          set({ notice: `Your session has expired; the connections could not be listed: ${errorMessage(error)}` }),
        );
    },

    setNotice(notice) {
      set({ notice });
    },
  };
});

/** Which organisation the console shows: it changes with the profile or the account signed in. */
function sameOrganisation(state: SessionState, previous: SessionState): boolean {
  return state.profileId === previous.profileId && state.me?.user_id === previous.me?.user_id;
}

// The one place the organisation changes, however the session was set: every store of
// organisation data forgets the one shown before (see organisation-scope.ts).
useSession.subscribe((state, previous) => {
  if (!sameOrganisation(state, previous)) resetOrganisationStores();
});
