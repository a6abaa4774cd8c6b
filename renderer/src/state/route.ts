import { create } from 'zustand';
import { SCREENS, type Screen } from './screen-names.js';

/**
 * Where the console is: a screen and its view parameters (filters), kept in the address's
 * hash (#/analytics?range=7d&key=...) so a view survives a reload and can be restored.
 */

export { SCREENS, type Screen } from './screen-names.js';
export type RouteParams = Readonly<Record<string, string>>;

interface Route {
  screen: Screen;
  params: RouteParams;
}

interface RouteState extends Route {
  /** Opens a screen (a new history entry), with its own parameters or none. */
  go(screen: Screen, params?: RouteParams): void;
  /** Changes the current view's parameters in place; empty values are dropped. */
  setParams(patch: Readonly<Record<string, string | null | undefined>>): void;
}

const DEFAULT_SCREEN: Screen = 'keys';

export function parseHash(hash: string): Route {
  const rest = hash.replace(/^#\/?/, '');
  const mark = rest.indexOf('?');
  const [path, query] = mark < 0 ? [rest, ''] : [rest.slice(0, mark), rest.slice(mark + 1)];
  const screen = (SCREENS as readonly string[]).includes(path) ? (path as Screen) : DEFAULT_SCREEN;
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query)) if (value !== '' && name !== 'token') params[name] = value;
  return { screen, params };
}

export function formatHash({ screen, params }: Route): string {
  const query = new URLSearchParams(Object.entries(params).sort(([a], [b]) => a.localeCompare(b))).toString();
  return `#/${screen}${query ? `?${query}` : ''}`;
}

function write(route: Route, mode: 'push' | 'replace'): void {
  const hash = formatHash(route);
  if (window.location.hash === hash) return;
  const url = `${window.location.pathname}${window.location.search}${hash}`;
  if (mode === 'push') window.history.pushState(null, '', url);
  else window.history.replaceState(null, '', url);
}

export const useRoute = create<RouteState>((set, get) => ({
  ...parseHash(window.location.hash),
  go(screen, params = {}) {
    const route = { screen, params };
    write(route, 'push');
    set(route);
  },
  setParams(patch) {
    const params: Record<string, string> = { ...get().params };
    for (const [name, value] of Object.entries(patch)) {
      if (value === null || value === undefined || value === '') delete params[name];
      else params[name] = value;
    }
    const route = { screen: get().screen, params };
    write(route, 'replace');
    set(route);
  },
}));

window.addEventListener('popstate', () => useRoute.setState(parseHash(window.location.hash)));
window.addEventListener('hashchange', () => useRoute.setState(parseHash(window.location.hash)));
