import { create, type StateCreator, type StoreApi, type UseBoundStore } from 'zustand';

/**
 * Organisation scope: the one way a store forgets an organisation and drops a late answer.
 *
 * Why: the console changes organisation (another profile or account) and questions (filters,
 * pages) while calls are on their way, and an answer must land only on the question still
 * shown, in the organisation it was asked of; otherwise one organisation's keys or figures
 * would show under another, or an older query's rows under a newer one's filters. So:
 * - every store holding organisation data is made by `organisationStore`, which registers its
 *   initial state (the zustand docs' reset recipe). The session store, where the organisation
 *   changes, calls `resetOrganisationStores()`, which restores them all and makes every answer
 *   still on its way stale. A store registers when its module is first evaluated: one never
 *   imported has never been created, so it holds nothing and asks nothing, and there is
 *   nothing for the reset to reach (the next import creates it empty).
 * - before a call a store takes a `Current` check and applies the answer only while it holds:
 *   `thisOrganisation()` for a call no other call replaces (a rename, a store, a delete), or
 *   `ask()` on its `latest()` line for a read a later read replaces (a list, a page, a chart).
 */

/** Whether an answer is still current; asked when the answer arrives. */
export type Current = () => boolean;

/** Bumped by every reset: answers to anything asked before it are stale. */
let epoch = 0;
const resets: (() => void)[] = [];

/** The answer counts while the console shows the organisation it was asked of. */
export function thisOrganisation(): Current {
  const asked = epoch;
  return () => asked === epoch;
}

/** One line of asks of which only the latest counts, e.g. a store's list or one chart. */
export interface Latest {
  /**
   * A new ask: its answer counts until another ask on this line or another organisation.
   * With a `key` (what was asked), a later ask of the same key does not replace it.
   */
  ask(key?: unknown): Current;
  /** The ask now on this line, for a follow-up that must not replace it (its next page). */
  current(): Current;
}

export function latest(): Latest {
  let last: unknown = undefined;
  const check = (key: unknown): Current => {
    const organisation = thisOrganisation();
    return () => organisation() && Object.is(last, key);
  };
  return {
    ask(key = Symbol('ask')) {
      last = key;
      return check(key);
    },
    current: () => check(last),
  };
}

/**
 * `create<T>()` for a store of organisation data, curried like it: registered, so that another
 * organisation restores its initial state. `forget` lets go of what the state holds outside
 * itself (an export's controller) before it is dropped.
 */
export function organisationStore<T>(
  forget?: (state: T) => void,
): (creator: StateCreator<T>) => UseBoundStore<StoreApi<T>> {
  return (creator) => {
    const store = create<T>()(creator);
    resets.push(() => {
      forget?.(store.getState());
      store.setState(store.getInitialState(), true);
    });
    return store;
  };
}

/** Another organisation is shown (and each component test starts afresh): every store forgets. */
export function resetOrganisationStores(): void {
  epoch += 1;
  for (const reset of resets) reset();
}
