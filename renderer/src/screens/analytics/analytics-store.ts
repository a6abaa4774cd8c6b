import type { CallArgs, CallResult } from '#contract';
import { BridgeError, errorMessage } from '../../bridge.js';
import { api } from '../../state/api.js';
import { latest, organisationStore } from '../../state/organisation-scope.js';

/**
 * The summary and the timeseries of the analytics screen, each loaded on its own (one can
 * fail while the other shows). While a new answer is on its way the last one stays, marked
 * as loading; an answer to a query that has since been replaced is dropped, so quick filter
 * changes never leave older figures on screen.
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
}

interface AnalyticsState {
  summary: Part<Summary, SummaryQuery>;
  series: Part<SeriesAnswer, TimeseriesQuery>;
  loadSummary(query: SummaryQuery): Promise<void>;
  loadSeries(query: TimeseriesQuery, rangeMs: number): Promise<void>;
}

const IDLE = { data: null, query: null, loading: false, error: null, unavailable: false };

export const useAnalytics = organisationStore<AnalyticsState>()((set) => {
  // Each part on its own line: a newer summary query drops an older one's answer, not the chart's.
  const lines = { summary: latest(), series: latest() };

  async function load<P extends 'summary' | 'series'>(
    part: P,
    query: AnalyticsState[P]['query'],
    fetch: () => Promise<NonNullable<AnalyticsState[P]['data']>>,
  ): Promise<void> {
    const current = lines[part].ask();
    set((s) => ({ [part]: { ...s[part], loading: true, error: null, unavailable: false } }) as Partial<AnalyticsState>);
    try {
      const data = await fetch();
      if (!current()) return;
      set({ [part]: { data, query, loading: false, error: null, unavailable: false } } as Partial<AnalyticsState>);
    } catch (error) {
      if (!current()) return;
      const unavailable = error instanceof BridgeError && error.status === 503;
      set({
        [part]: { data: null, query, loading: false, error: errorMessage(error), unavailable },
      } as Partial<AnalyticsState>);
    }
  }

  return {
    summary: IDLE,
    series: IDLE,
    loadSummary: (query) => load('summary', query, () => api('api.summary', { query })),
    loadSeries: (query, rangeMs) =>
      load('series', query, async () => {
        const toMs = Date.now();
        const response = await api('api.timeseries', { query });
        return { response, fromMs: toMs - rangeMs, toMs };
      }),
  };
});
