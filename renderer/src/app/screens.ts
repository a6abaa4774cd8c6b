import type { ComponentType } from 'react';
import type { Screen } from '../state/route.js';
import { idleCallback, whenIdle } from '../console-idle.js';
import { retryableLazy, type RetryableLazy } from './retryable-lazy.js';

/**
 * Each screen is its own chunk, fetched when it is first opened (or earlier, by
 * `preloadScreens` once the console is idle), so that the sign-in page ships none of them;
 * recharts comes only with the screens that chart (vite.config.ts).
 */

interface ScreenEntry extends RetryableLazy {
  title: string;
}

/** `alsoPreload`: what else its preload fetches, that the screen itself asks for only once it is open. */
function lazyScreen<K extends string>(
  title: string,
  load: () => Promise<Record<K, ComponentType>>,
  name: K,
  alsoPreload?: () => Promise<unknown>,
): ScreenEntry {
  const entry = retryableLazy(load, name);
  return {
    title,
    get component() {
      return entry.component;
    },
    preload: alsoPreload ? () => Promise.all([entry.preload(), alsoPreload()]) : entry.preload,
    retry: entry.retry,
  };
}

export const screens: Record<Screen, ScreenEntry> = {
  keys: lazyScreen('API keys', () => import('../screens/keys/KeysScreen.js'), 'KeysScreen'),
  vault: lazyScreen('Provider keys', () => import('../screens/vault/VaultScreen.js'), 'VaultScreen'),
  analytics: lazyScreen(
    'Analytics',
    () => import('../screens/analytics/AnalyticsScreen.js'),
    'AnalyticsScreen',
    () => import('../screens/analytics/series-chart-module.js').then((module) => module.preloadSeriesChart()),
  ),
  spend: lazyScreen('Spend', () => import('../screens/spend/SpendScreen.js'), 'SpendScreen'),
  requests: lazyScreen('Request log', () => import('../screens/requests/RequestLogScreen.js'), 'RequestLogScreen'),
  health: lazyScreen('Health', () => import('../screens/health/HealthScreen.js'), 'HealthScreen'),
  routes: lazyScreen('Routes', () => import('../screens/routes/RoutesScreen.js'), 'RoutesScreen'),
  activity: lazyScreen('Activity', () => import('../screens/activity/ActivityScreen.js'), 'ActivityScreen'),
  reconcile: lazyScreen('Reconcile', () => import('../screens/reconcile/ReconcileScreen.js'), 'ReconcileScreen'),
  alerts: lazyScreen('Alerts', () => import('../screens/alerts/AlertsScreen.js'), 'AlertsScreen'),
  organisation: lazyScreen(
    'Organisation',
    () => import('../screens/organisation/OrganisationScreen.js'),
    'OrganisationScreen',
  ),
};

/**
 * Fetches every screen's chunk, one after another in the browser's idle periods, once the
 * console has first been idle (console-idle.ts): the screen signed in to never waits for them,
 * and a first switch to another screen then waits for no download. Failures are left for the
 * screen's own load to show when it is opened.
 */
export function preloadScreens(): () => void {
  let cancelled = false;
  const queue = Object.values(screens);
  const step = () => {
    const entry = queue.shift();
    if (cancelled || !entry) return;
    entry.preload().then(
      () => idleCallback(step),
      () => idleCallback(step),
    );
  };
  const cancelWait = whenIdle(step);
  return () => {
    cancelled = true;
    cancelWait();
  };
}
