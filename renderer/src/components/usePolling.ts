import { useEffect, useRef, useSyncExternalStore } from 'react';

/**
 * Re-reading a screen's data on a fixed interval while the person wants it and can see it.
 *
 * - One call at a time: a tick that finds the last call still on its way is skipped (the next
 *   tick tries again), so a slow or failing server is asked at most once per interval, never
 *   by a pile of overlapping calls.
 * - At most one start per interval, however often `active` flips (a pointer crossing a table's
 *   edge): on becoming active, the first tick waits out what is left of the interval since the
 *   last read (`since`, or this hook's own last start), and comes at once only when that read
 *   is older than the interval.
 */
export function usePolling(
  run: () => Promise<unknown>,
  options: {
    /** Milliseconds between reads. */
    every: number;
    active: boolean;
    /**
     * When the data on screen was last asked for (Date.now()), by this hook or another path (a
     * filter change); null if never. Read when polling becomes active, after that render's
     * other effects (a load they start counts).
     */
    since?: () => number | null;
  },
): void {
  const { every, active } = options;
  const latestRun = useRef(run);
  latestRun.current = run;
  const latestSince = useRef(options.since);
  latestSince.current = options.since;
  const inFlight = useRef(false);
  const lastStart = useRef<number | null>(null);

  useEffect(() => {
    if (!active) return;
    let timer: ReturnType<typeof setTimeout>;
    const tick = () => {
      timer = setTimeout(tick, every);
      if (inFlight.current) return;
      inFlight.current = true;
      lastStart.current = Date.now();
      void latestRun
        .current()
        .catch(() => undefined)
        .finally(() => {
          inFlight.current = false;
        });
    };
    const last = Math.max(latestSince.current?.() ?? -Infinity, lastStart.current ?? -Infinity);
    const wait = Number.isFinite(last) ? Math.min(every, Math.max(0, every - (Date.now() - last))) : 0;
    timer = setTimeout(tick, wait);
    return () => clearTimeout(timer);
  }, [active, every]);
}

function subscribeVisibility(onChange: () => void): () => void {
  document.addEventListener('visibilitychange', onChange);
  return () => document.removeEventListener('visibilitychange', onChange);
}

/** Whether the window or tab is shown: nothing is re-read in the background while it is hidden. */
export function useDocumentVisible(): boolean {
  return useSyncExternalStore(subscribeVisibility, () => document.visibilityState !== 'hidden');
}
