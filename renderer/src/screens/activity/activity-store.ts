import { create } from 'zustand';
import { errorMessage } from '../../bridge.js';
import { appendPage, type ActivityEvent } from '../../lib/activity.js';
import { DEFAULT_PAGE_SIZE } from '../../lib/page-size.js';
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

/** Pages read for one "Load more" while every one holds only newer events, before giving up. */
const MAX_READS = 5;
const TOO_MANY_NEWER =
  'So many events have been recorded since this list was read that the older ones could not be reached: refresh to start from the newest.';

// Bumped by every fresh load and by reset, which another organisation triggers: an answer
// for an older read, or for the organisation shown before, must not land on this list.
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
    const { events, limit, loadingMore, done } = get();
    if (!events || loadingMore || done) return;
    const mine = generation;
    let shift = get().shift;
    set({ loadingMore: true, moreError: null });
    try {
      for (let read = 0; read < MAX_READS; read += 1) {
        const page = await api('api.activity', { query: { limit, offset: events.length + shift } });
        if (mine !== generation) return;
        const joined = appendPage(events, page.events);
        shift += joined.skipped;
        const last = page.events.length < page.limit;
        // A full page of events all newer than those shown says only that the shift is
        // larger: read on past them, rather than show newer events below older ones.
        if (joined.events.length > events.length || last) {
          set({ events: joined.events, shift, loadingMore: false, done: last });
          return;
        }
      }
      set({ shift, loadingMore: false, moreError: TOO_MANY_NEWER });
    } catch (error) {
      if (mine !== generation) return;
      // What was skipped stays skipped: trying again goes on from there.
      set({ shift, loadingMore: false, moreError: errorMessage(error) });
    }
  },

  reset() {
    generation += 1;
    set(EMPTY);
  },
}));

// Another profile or account reads another organisation's trail.
onOrganisationChange(() => useActivity.getState().reset());
