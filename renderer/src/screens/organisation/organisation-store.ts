import type { CallResult } from '#contract';
import { errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { refusal } from './role-refusal.js';
import { latest, organisationStore, thisOrganisation } from '../../state/organisation-scope.js';
import { useSession, type Me } from '../../state/session.js';

/**
 * The organisation screen's server state: its members, and renaming it. A rename that
 * lands updates the signed-in session too, so the sidebar shows the new name at once.
 */

export type Member = CallResult<'api.members'>['members'][number];

/** Only PATCH /organization checks a role: owners and admins may rename, members may not. */
export function canRename(role: Me['role']): boolean {
  return role === 'owner' || role === 'admin';
}

interface OrganisationState {
  members: Member[] | null;
  membersLoading: boolean;
  membersError: string | null;
  renaming: boolean;
  /** The server's refusal of the last rename, for the name field. */
  renameError: string | null;
  /** The name the last successful rename set, for the confirmation beside the field. */
  renamedTo: string | null;
  loadMembers(): Promise<void>;
  /** Resolves true when the server took the name. */
  rename(name: string): Promise<boolean>;
  clearRename(): void;
}

const memberReads = latest();

export const useOrganisation = organisationStore<OrganisationState>()((set) => ({
  members: null,
  membersLoading: false,
  membersError: null,
  renaming: false,
  renameError: null,
  renamedTo: null,

  // Another organisation's members or name must not show: an answer lands only in the
  // organisation it was asked of (and for the members, only the latest read's).
  async loadMembers() {
    const current = memberReads.ask();
    set({ membersLoading: true, membersError: null });
    try {
      const { members } = await api('api.members', {});
      if (current()) set({ members, membersLoading: false });
    } catch (error) {
      if (current()) set({ membersLoading: false, membersError: errorMessage(error) });
    }
  },

  async rename(name) {
    const current = thisOrganisation();
    set({ renaming: true, renameError: null, renamedTo: null });
    try {
      const organization = await api('api.renameOrganization', { body: { name } });
      if (!current()) return false;
      set({ renaming: false, renamedTo: organization.name });
      useSession.setState((s) => (s.me ? { me: { ...s.me, organization: { name: organization.name } } } : {}));
      return true;
    } catch (error) {
      if (current()) set({ renaming: false, renameError: refusal(error) });
      return false;
    }
  },

  clearRename() {
    set({ renameError: null, renamedTo: null });
  },
}));
