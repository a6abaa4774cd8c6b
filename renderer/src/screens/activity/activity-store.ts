import { errorMessage } from '../../bridge.js';
import { appendPage, type ActivityEvent } from '../../lib/activity.js';
import { DEFAULT_PAGE_SIZE } from '../../lib/page-size.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

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
}

/** Pages read for one "Load more" while every one holds only newer events, before giving up. */
const MAX_READS = 5;
const TOO_MANY_NEWER =
  'So many events have been recorded since this list was read that the older ones could not be reached: refresh to start from the newest.';

const reads = latest();

export const useActivity = organisationStore<ActivityState>()((set, get) => ({
  events: null,
  limit: DEFAULT_PAGE_SIZE,
  loading: false,
  error: null,
  loadingMore: false,
  moreError: null,
  done: false,
  shift: 0,

  // A fresh load replaces every read before it; a next page belongs to the load on screen.
  async load(limit = get().limit) {
    const current = reads.ask();
    set({ limit, loading: true, error: null, loadingMore: false, moreError: null });
    try {
      const page = await api('api.activity', { query: { limit, offset: 0 } });
      if (!current()) return;
      set({ events: page.events, loading: false, done: page.events.length < page.limit, shift: 0 });
    } catch (error) {
      if (!current()) return;
      set({ loading: false, error: errorMessage(error) });
    }
  },

  async loadMore() {
    const { events, limit, loadingMore, done } = get();
    if (!events || loadingMore || done) return;
    const current = reads.current();
    let shift = get().shift;
    set({ loadingMore: true, moreError: null });
    try {
      for (let read = 0; read < MAX_READS; read += 1) {
        const page = await api('api.activity', { query: { limit, offset: events.length + shift } });
        if (!current()) return;
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
      if (!current()) return;
      // What was skipped stays skipped: trying again goes on from there.
      set({ shift, loadingMore: false, moreError: errorMessage(error) });
    }
  },
}));
