import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/**
 * A lazily loaded component whose failed load can be tried again. React's `lazy()` keeps a
 * rejected import for good, and a chunk can fail to load for reasons that pass (the network,
 * the web host serving a rebuilt dist), so the entry keeps its own module promise, forgets it
 * when it rejects, and hands out a fresh `lazy()` after `retry()`.
 */
export interface RetryableLazy {
  /** The component to render; a new one after each `retry()`. */
  readonly component: LazyExoticComponent<ComponentType>;
  /** Fetches the chunk; a second call while it loads or once it has loaded costs nothing. */
  preload: () => Promise<unknown>;
  /** Forgets a failed load, so the next render fetches the chunk again. */
  retry: () => void;
}

export function retryableLazy<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K): RetryableLazy {
  let pending: Promise<{ default: ComponentType }> | null = null;
  const module = (): Promise<{ default: ComponentType }> => {
    pending ??= load().then(
      (m) => ({ default: m[name] }),
      (error: unknown) => {
        pending = null;
        throw error;
      },
    );
    return pending;
  };
  let component = lazy(module);
  return {
    get component() {
      return component;
    },
    preload: module,
    retry: () => {
      component = lazy(module);
    },
  };
}
