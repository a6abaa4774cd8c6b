import type { CallArgs, CallResult } from '#contract';
import { useAnalyticsHealth } from '../../../renderer/src/state/api.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute, type RouteParams } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { serveRoutes } from '../routes-document.js';

/** A signed-in console on the analytics screen, with a small directory behind the fake bridge. */

export const PROJECTS = {
  support: '11111111-1111-4111-8111-111111111111',
  search: '22222222-2222-4222-8222-222222222222',
  gone: '99999999-9999-4999-8999-999999999999',
};
export const KEYS = {
  prod: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
  staging: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb',
  revoked: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc',
};

const CREATED = '2026-01-01T00:00:00.000Z';

export function key(id: string, name: string, projectId: string): CallResult<'api.listKeys'>['keys'][number] {
  return {
    id,
    name,
    project_id: projectId,
    key_prefix: `svc_${name.slice(0, 4).toLowerCase()}`,
    rate_limit_rpm: 60,
    expires_at: null,
    credit_limit_cents: null,
    allowed_models: null,
    environment: 'production',
    created_at: CREATED,
    last_used_at: null,
  };
}

export type Summary = CallResult<'api.summary'>;
export type Timeseries = CallResult<'api.timeseries'>;
export type Dashboard = CallResult<'api.dashboard'>;

export const SUMMARY: Summary = {
  time_range: '24h',
  total_requests: 1234,
  avg_e2e_latency_ms: 812.4,
  avg_ttft_ms: 301,
  avg_tokens_per_sec: 54.27,
  total_token_usage: 98765,
};

/** Serves the directory and the routes document's targets, and the given summary and timeseries handlers. */
export function serve(options: {
  summary?: (args: CallArgs<'api.summary'>) => Summary | Promise<Summary>;
  timeseries?: (args: CallArgs<'api.timeseries'>) => Timeseries | Promise<Timeseries>;
  top?: (args: CallArgs<'api.top'>) => CallResult<'api.top'> | Promise<CallResult<'api.top'>>;
  dashboard?: (args: CallArgs<'api.dashboard'>) => Dashboard | Promise<Dashboard>;
}): void {
  bridge.on('api.projects', () => ({
    projects: [
      { id: PROJECTS.support, name: 'Support Bot', created_at: CREATED },
      { id: PROJECTS.search, name: 'Document Search', created_at: CREATED },
    ],
  }));
  bridge.on('api.listKeys', () => ({
    keys: [key(KEYS.prod, 'Production backend', PROJECTS.support), key(KEYS.staging, 'Staging', PROJECTS.search)],
  }));
  bridge.on('api.models', () => ({
    models: [
      { id: 'openai/gpt-4o-mini', provider: 'openai', active: true },
      { id: 'anthropic/claude-haiku', provider: 'anthropic', active: true },
    ],
  }));
  serveRoutes();
  bridge.on('api.summary', options.summary ?? ((args) => ({ ...SUMMARY, time_range: args.query.time_range ?? '24h' })));
  bridge.on(
    'api.timeseries',
    options.timeseries ??
      ((args) => ({
        metric: args.query.metric ?? 'volume',
        interval: args.query.interval ?? '15m',
        group_by: args.query.group_by ?? null,
        time_range: args.query.time_range ?? '24h',
        data: [],
      })),
  );
  bridge.on('api.top', options.top ?? ((args) => emptyTop(args.query.group_by)));
  bridge.on('api.dashboard', options.dashboard ?? ((args) => emptyDashboard(args.query.time_range)));
}

/** A dashboard of a window without requests, in the reporting zone of Karachi. */
export function emptyDashboard(timeRange = '24h'): Dashboard {
  return {
    time_range: timeRange,
    interval: '1h',
    time_zone: 'Asia/Karachi',
    from: '2026-03-01T05:00:00+05:00',
    to: '2026-03-02T05:00:00+05:00',
    percentile_relative_error: 0.01,
    buckets: [],
    cache: [],
    totals: { current: NO_REQUESTS, previous: NO_REQUESTS },
  };
}

/** The dashboard's figures of a window without requests. */
export const NO_REQUESTS: Dashboard['totals']['current'] = {
  requests: 0,
  ok: 0,
  client_errors: 0,
  server_errors: 0,
  refused: 0,
  cost_micro: 0,
  tokens: { prompt: 0, generated: 0, cache_read: null, cache_write: null },
  tokens_per_second: null,
  latency_ms: null,
  ttft_ms: null,
};

const NO_FIGURES = {
  requests: 0,
  cost_micro: 0,
  errors: 0,
  mean_latency_ms: null,
  previous_requests: 0,
  previous_cost_micro: 0,
};

/** A top of a window without requests. */
export function emptyTop(groupBy: string): CallResult<'api.top'> {
  return {
    time_range: '24h',
    group_by: groupBy,
    sort: 'cost',
    trend_interval: '1h',
    time_zone: 'UTC',
    total: NO_FIGURES,
    groups: [],
    others: null,
  };
}

/** Signs in, resets the stores and opens the analytics screen with these parameters. */
export function openAnalytics(params: RouteParams = {}): void {
  useSession.setState({
    phase: 'console',
    profileId: 'p1',
    me: {
      user_id: '00000000-0000-4000-8000-000000000001',
      email: 'admin@demo.example',
      role: 'admin',
      joined_at: CREATED,
      organization: { name: 'Demo Organization' },
    },
  });
  resetOrganisationStores();
  useAnalyticsHealth.setState({ unavailable: null });
  window.history.replaceState(null, '', '/');
  useRoute.getState().go('analytics', params);
}

/** jsdom lays nothing out: the chart's element reports this width to its ResizeObserver. */
export function fakeWidth(width: number): void {
  class FixedWidthObserver {
    constructor(private readonly callback: ResizeObserverCallback) {}
    observe(target: Element) {
      this.callback(
        [{ target, contentRect: { width } as DOMRectReadOnly } as ResizeObserverEntry],
        this as unknown as ResizeObserver,
      );
    }
    unobserve() {}
    disconnect() {}
  }
  globalThis.ResizeObserver = FixedWidthObserver as unknown as typeof ResizeObserver;
}
