import { create } from 'zustand';
import { errorMessage } from '../../bridge.js';
import { appendPage, DEFAULT_PAGE_SIZE, type ActivityEvent } from '../../lib/activity.js';
import { api } from '../../state/api.js';
import { onOrganisationChange } from '../../state/session.js';

/**
 * The audit trail as read so far: the first page, then older pages appended on request.
 * There is no total: a page shorter than the limit is the last (the contract's rule).
 */

interface ActivityState {
  /** Null until the first page has answered. */
  events: ActivityEvent[] | null;
  /** The page size asked for; the server may clamp it, and its own answer is what counts. */
  limit: number;
  /** The first page (or a refresh) is on its way. */
  loading: boolean;
  error: string | null;
  loadingMore: boolean;
  moreError: string | null;
  /** The last page has been read. */
  done: boolean;
  /**
   * Events written since the first page moved every later offset by this many; the next
   * page is read that much further on, and the screen offers a refresh to show them.
   */
  shift: number;
  /** Reads the newest page afresh, replacing what is shown. */
  load(limit?: number): Promise<void>;
  loadMore(): Promise<void>;
  reset(): void;
}

const EMPTY = {
  events: null,
  limit: DEFAULT_PAGE_SIZE,
  loading: false,
  error: null,
  loadingMore: false,
  moreError: null,
  done: false,
  shift: 0,
};

// Bumped by every fresh load: an answer for an older read must not land on a newer list.
let generation = 0;

export const useActivity = create<ActivityState>((set, get) => ({
  ...EMPTY,

  async load(limit = get().limit) {
    const mine = ++generation;
    set({ limit, loading: true, error: null, loadingMore: false, moreError: null });
    try {
      const page = await api('api.activity', { query: { limit, offset: 0 } });
      if (mine !== generation) return;
      set({ events: page.events, loading: false, done: page.events.length < page.limit, shift: 0 });
    } catch (error) {
      if (mine !== generation) return;
      set({ loading: false, error: errorMessage(error) });
    }
  },

  async loadMore() {
    const { events, limit, shift, loadingMore, done } = get();
    if (!events || loadingMore || done) return;
    const mine = generation;
    set({ loadingMore: true, moreError: null });
    try {
      const page = await api('api.activity', { query: { limit, offset: events.length + shift } });
      if (mine !== generation) return;
      const joined = appendPage(events, page.events);
      set({
        events: joined.events,
        shift: shift + joined.overlap,
        loadingMore: false,
        done: page.events.length < page.limit,
      });
    } catch (error) {
      if (mine !== generation) return;
      set({ loadingMore: false, moreError: errorMessage(error) });
    }
  },

  reset() {
    generation += 1;
    set(EMPTY);
  },
}));

// Another profile or account reads another organisation's trail.
onOrganisationChange(() => useActivity.getState().reset());
