import { BridgeError, errorMessage } from '../../bridge.js';
import { appendPage, itemOfEvent, type ActivityItem } from '../../lib/activity.js';
import { DEFAULT_PAGE_SIZE } from '../../lib/page-size.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';
import type { ActivityFilterQuery } from './activity-query.js';

/**
 * The audit trail as read so far: the first page, then older pages appended on request.
 * Read from the extension (GET /activity/entries: filters, each event's place, change and
 * hash, pages by place so new events shift nothing). A control plane with only the
 * contract's GET /activity answers 404 there: the trail is then read from the contract's list
 * (no filters, no total: a page shorter than the limit is the last), and the screen says so.
 */

interface ActivityState {
  /** Null until the first page has answered. */
  events: ActivityItem[] | null;
  /** The page size asked for; the server may clamp it, and its own answer is what counts. */
  limit: number;
  filter: ActivityFilterQuery;
  /** Null until known: false when the control plane has only the contract's list. */
  extended: boolean | null;
  /** How many events the filter matches (the extension's first page); null when unknown. */
  total: number | null;
  /** The extension's next page starts before this place; null at the end. */
  nextBefore: number | null;
  /** The first page (or a refresh) is on its way. */
  loading: boolean;
  error: string | null;
  loadingMore: boolean;
  moreError: string | null;
  /** The last page has been read. */
  done: boolean;
  /**
   * Contract list only: events written since the first page moved every later offset by this
   * many; the next page is read that much further on, and the screen offers a refresh.
   */
  shift: number;
  /** Reads the newest page afresh, replacing what is shown. */
  load(limit?: number, filter?: ActivityFilterQuery): Promise<void>;
  loadMore(): Promise<void>;
}

/** Pages read for one "Load more" while every one holds only newer events, before giving up. */
const MAX_READS = 5;
const TOO_MANY_NEWER =
  'So many events have been recorded since this list was read that the older ones could not be reached: refresh to start from the newest.';

const reads = latest();

const notOffered = (error: unknown) => error instanceof BridgeError && (error.status === 404 || error.status === 501);

export const useActivity = organisationStore<ActivityState>()((set, get) => ({
  events: null,
  limit: DEFAULT_PAGE_SIZE,
  filter: {},
  extended: null,
  total: null,
  nextBefore: null,
  loading: false,
  error: null,
  loadingMore: false,
  moreError: null,
  done: false,
  shift: 0,

  // A fresh load replaces every read before it; a next page belongs to the load on screen.
  async load(limit = get().limit, filter = get().filter) {
    const current = reads.ask();
    set({ limit, filter, loading: true, error: null, loadingMore: false, moreError: null });
    try {
      if (get().extended !== false) {
        try {
          const page = await api('api.activityEntries', { query: { ...filter, limit } });
          if (!current()) return;
          set({
            events: page.entries,
            extended: true,
            total: page.total,
            nextBefore: page.next_before,
            loading: false,
            done: page.next_before === null,
            shift: 0,
          });
          return;
        } catch (error) {
          if (!notOffered(error)) throw error;
          if (!current()) return;
          set({ extended: false });
        }
      }
      const page = await api('api.activity', { query: { limit, offset: 0 } });
      if (!current()) return;
      set({
        events: page.events.map(itemOfEvent),
        total: null,
        loading: false,
        done: page.events.length < page.limit,
        shift: 0,
      });
    } catch (error) {
      if (!current()) return;
      set({ loading: false, error: errorMessage(error) });
    }
  },

  async loadMore() {
    const { events, limit, loadingMore, done, extended, nextBefore, filter } = get();
    if (!events || loadingMore || done) return;
    const current = reads.current();
    set({ loadingMore: true, moreError: null });
    if (extended) {
      try {
        const page = await api('api.activityEntries', {
          query: { ...filter, limit, ...(nextBefore === null ? {} : { before: nextBefore }) },
        });
        if (!current()) return;
        set({
          events: [...events, ...page.entries],
          nextBefore: page.next_before,
          done: page.next_before === null,
          loadingMore: false,
        });
      } catch (error) {
        if (!current()) return;
        set({ loadingMore: false, moreError: errorMessage(error) });
      }
      return;
    }
    let shift = get().shift;
    try {
      for (let read = 0; read < MAX_READS; read += 1) {
        const page = await api('api.activity', { query: { limit, offset: events.length + shift } });
        if (!current()) return;
        const joined = appendPage(events, page.events.map(itemOfEvent));
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
