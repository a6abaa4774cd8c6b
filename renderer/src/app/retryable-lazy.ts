import {
  createContext,
  createElement,
  useContext,
  useEffect,
  useState,
  type ComponentType,
  type ReactNode,
} from 'react';

/**
 * A lazily loaded component whose failed load can be tried again. A chunk can fail to load for
 * reasons that pass (the network, the web host serving a rebuilt dist), so the entry keeps its
 * own module promise, forgets it when it rejects, and hands out a fresh loader after `retry()`.
 *
 * Neither path suspends. A chunk that has already loaded is rendered as its plain component;
 * one still loading is rendered by a loader that shows the fallback of the LoadBoundary around
 * it and then the component, as an ordinary state update. React's `lazy()` suspended instead,
 * and React holds back content revealed after a Suspense fallback by up to 300 ms: every first
 * visit to a screen, and a sign-in whose landing screen's chunk came a moment after the console
 * rendered, waited a third of a second for nothing (the screen's queries were not even asked).
 */
export interface RetryableLazy {
  /** The component to render: the same one on every read until `retry()`. */
  readonly component: ComponentType;
  /** Fetches the chunk; a second call while it loads or once it has loaded costs nothing. */
  preload: () => Promise<unknown>;
  /** Forgets a failed load, so the next render fetches the chunk again. */
  retry: () => void;
}

/** What a loader shows while its chunk loads: the LoadBoundary around it says "Opening …". */
export const LoadingFallback = createContext<ReactNode>(null);

export function retryableLazy<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K): RetryableLazy {
  let pending: Promise<ComponentType> | null = null;
  let loaded: ComponentType | null = null;
  const module = (): Promise<ComponentType> => {
    pending ??= load().then(
      (m) => (loaded = m[name]),
      (error: unknown) => {
        pending = null;
        throw error;
      },
    );
    return pending;
  };
  const loader = (): ComponentType =>
    function Loader() {
      const fallback = useContext(LoadingFallback);
      const [component, setComponent] = useState<ComponentType | null>(() => loaded);
      const [failure, setFailure] = useState<{ error: unknown } | null>(null);
      useEffect(() => {
        if (component) return;
        let live = true;
        module().then(
          (loadedNow) => live && setComponent(() => loadedNow),
          (error: unknown) => live && setFailure({ error }),
        );
        return () => {
          live = false;
        };
      }, [component]);
      // To the LoadBoundary, which says what could not be loaded and offers to try again.
      if (failure) throw failure.error;
      return component ? createElement(component) : fallback;
    };
  // Chosen once and kept: switching a mounted tree from the loader to the plain component
  // would remount it and lose its state.
  let chosen: ComponentType | null = null;
  return {
    get component() {
      chosen ??= loaded ?? loader();
      return chosen;
    },
    preload: module,
    retry: () => {
      chosen = null;
    },
  };
}
