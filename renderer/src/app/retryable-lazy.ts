import { lazy, type ComponentType } from 'react';

/**
 * A lazily loaded component whose failed load can be tried again. React's `lazy()` keeps a
 * rejected import for good, and a chunk can fail to load for reasons that pass (the network,
 * the web host serving a rebuilt dist), so the entry keeps its own module promise, forgets it
 * when it rejects, and hands out a fresh `lazy()` after `retry()`.
 *
 * A chunk that has already loaded is rendered as its plain component, not through `lazy()`:
 * `lazy()` suspends on its first render even when the import has long resolved, and React holds
 * back content revealed after a Suspense fallback by up to 300 ms, so every first visit to a
 * preloaded screen cost a third of a second for nothing.
 */
export interface RetryableLazy {
  /** The component to render: the same one on every read until `retry()`. */
  readonly component: ComponentType;
  /** Fetches the chunk; a second call while it loads or once it has loaded costs nothing. */
  preload: () => Promise<unknown>;
  /** Forgets a failed load, so the next render fetches the chunk again. */
  retry: () => void;
}

export function retryableLazy<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K): RetryableLazy {
  let pending: Promise<{ default: ComponentType }> | null = null;
  let loaded: ComponentType | null = null;
  const module = (): Promise<{ default: ComponentType }> => {
    pending ??= load().then(
      (m) => {
        loaded = m[name];
        return { default: m[name] };
      },
      (error: unknown) => {
        pending = null;
        throw error;
      },
    );
    return pending;
  };
  // Chosen once and kept: switching a mounted tree from the lazy wrapper to the plain component
  // would remount it and lose its state.
  let chosen: ComponentType | null = null;
  return {
    get component() {
      chosen ??= loaded ?? lazy(module);
      return chosen;
    },
    preload: module,
    retry: () => {
      chosen = null;
    },
  };
}
