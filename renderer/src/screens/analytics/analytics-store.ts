import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The summary and the timeseries of the analytics screen, each loaded on its own (one can
 * fail while the other shows). While a new answer is on its way the last one stays, marked
 * as loading; an answer to a query that has since been replaced is dropped, so quick filter
 * changes never leave older figures on screen.
 *
 * Auto-refresh, and the screen opened again on the same view (lib/revisit.ts), re-read both in
 * the background (`quiet`): no loading state (no dimming every 15 s or on every visit), and a
 * failure keeps the figures it would have replaced, with its message and the time they were
 * read, rather than blanking them.
 */

export type Summary = CallResult<'api.summary'>;
export type Timeseries = CallResult<'api.timeseries'>;
export type SummaryQuery = CallArgs<'api.summary'>['query'];
export type TimeseriesQuery = CallArgs<'api.timeseries'>['query'];

export interface SeriesAnswer {
  response: Timeseries;
  /** The window asked for, [now - range, now] by this computer's clock when it was asked. */
  fromMs: number;
  toMs: number;
}

export interface Part<T, Q> {
  data: T | null;
  /** The query `data` answers. */
  query: Q | null;
  loading: boolean;
  error: string | null;
  /** The server answered 503: its telemetry store cannot be read (the shell shows the banner). */
  unavailable: boolean;
  /** When (Date.now()) `data` was read; null while there is none. */
  at: number | null;
}

interface AnalyticsState {
  summary: Part<Summary, SummaryQuery>;
  series: Part<SeriesAnswer, TimeseriesQuery>;
  /** Whether the screen re-reads its data every 15 s (off until turned on). */
  autoRefresh: boolean;
  loadSummary(query: SummaryQuery, quiet?: boolean): Promise<void>;
  loadSeries(query: TimeseriesQuery, rangeMs: number, quiet?: boolean): Promise<void>;
  setAutoRefresh(on: boolean): void;
}

const IDLE = { data: null, query: null, loading: false, error: null, unavailable: false, at: null };

export const useAnalytics = organisationStore<AnalyticsState>()((set) => {
  // Each part on its own line: a newer summary query drops an older one's answer, not the chart's.
  const lines = { summary: latest(), series: latest() };

  async function load<P extends 'summary' | 'series'>(
    part: P,
    query: AnalyticsState[P]['query'],
    fetch: () => Promise<NonNullable<AnalyticsState[P]['data']>>,
    quiet = false,
  ): Promise<void> {
    const current = lines[part].ask();
    if (!quiet)
      set(
        (s) => ({ [part]: { ...s[part], loading: true, error: null, unavailable: false } }) as Partial<AnalyticsState>,
      );
    try {
      const data = await fetch();
      if (!current()) return;
      set({
        [part]: { data, query, loading: false, error: null, unavailable: false, at: Date.now() },
      } as Partial<AnalyticsState>);
    } catch (error) {
      if (!current()) return;
      const unavailable = error instanceof BridgeError && error.status === 503;
      set((s) => {
        // A background re-read of the figures on screen keeps them (and when they were read).
        const keep = quiet && JSON.stringify(s[part].query) === JSON.stringify(query);
        const { data, at } = keep ? s[part] : { data: null, at: null };
        return {
          [part]: { data, query, loading: false, error: errorMessage(error), unavailable, at },
        } as Partial<AnalyticsState>;
      });
    }
  }

  return {
    summary: IDLE,
    series: IDLE,
    autoRefresh: false,
    loadSummary: (query, quiet) => load('summary', query, () => api('api.summary', { query }), quiet),
    loadSeries: (query, rangeMs, quiet) =>
      load(
        'series',
        query,
        async () => {
          const toMs = Date.now();
          const response = await api('api.timeseries', { query });
          return { response, fromMs: toMs - rangeMs, toMs };
        },
        quiet,
      ),
    setAutoRefresh: (on) => set({ autoRefresh: on }),
  };
});
