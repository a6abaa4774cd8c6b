import { useEffect, useState } from 'react';
import type * as SeriesChartModule from './SeriesChart.js';

/**
 * The chart over time (SeriesChart.tsx) is a chunk of its own with recharts, fetched when the
 * chart is first drawn rather than with the screen: the screen's first paint (cards and
 * dashboard) then waits neither for recharts' download nor for its start-up, and a chart below
 * the window is drawn once the browser idles (useElementWidth) as before.
 */
type Module = typeof SeriesChartModule;

let loaded: Module | null = null;
let pending: Promise<Module> | null = null;

function load(): Promise<Module> {
  pending ??= import('./SeriesChart.js').then(
    (module) => (loaded = module),
    (error: unknown) => {
      // A chunk can fail for reasons that pass (the network, a rebuilt dist): the next try fetches it again.
      pending = null;
      throw error;
    },
  );
  return pending;
}

/**
 * Fetches the chart's chunk and starts recharts ahead of the screen, while the console idles
 * before it is opened (the sign-in page's idle time, `preloadScreens`): the first sign-in's chart
 * then waits for neither, where it had asked for them only once its data had come. A failure is
 * left for the chart's own load to show.
 */
export function preloadSeriesChart(): Promise<unknown> {
  return load().catch(() => undefined);
}

/**
 * SeriesChart once its chunk has loaded (at once, on every render, after the first load), asked
 * for only while `wanted`; a failed load says so and `retry` asks again.
 */
export function useSeriesChart(wanted: boolean): {
  SeriesChart: Module['SeriesChart'] | null;
  failed: boolean;
  retry: () => void;
} {
  const [, setLoaded] = useState<Module | null>(loaded);
  const [failed, setFailed] = useState(false);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!wanted || loaded) return;
    let current = true;
    load().then(
      (module) => current && setLoaded(module),
      () => current && setFailed(true),
    );
    return () => {
      current = false;
    };
  }, [wanted, attempt]);
  return {
    SeriesChart: loaded?.SeriesChart ?? null,
    failed,
    retry: () => {
      setFailed(false);
      setAttempt((n) => n + 1);
    },
  };
}
